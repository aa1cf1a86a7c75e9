-- For tests/nvim/test_nvim_rewind_tty.py: two runs on two branches (the second after navigating
-- back to the first user message), then :PiRewind to the first branch's end (its preview and
-- question through the stock vim.ui.select, answered by the Python side), :PiUndoRestore, and
-- :PiChanges (the quickfix list, <CR> for the diff tab, X to revert a file).
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":h") .. "/harness.lua")
local cfg, out, finish = H.cfg, H.out, H.finish

local function read(path)
  return vim.loop.fs_stat(path) and table.concat(vim.fn.readfile(path), "\n") or vim.NIL
end

local function feed(keys)
  vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes(keys, true, false, true), "x", false)
end

local ok, err = pcall(function()
  local pi = require("pi")
  local chat = require("pi.chat")
  pi.setup({ cmd = cfg.cmd, autostart = false, settings = cfg.settings })
  vim.cmd("PiChat write a")
  H.wait_for("the chat buffer", function() return chat.buffer((pi.state.session or {}).sessionId or "") ~= nil end)
  local buf = chat.buffer(pi.state.session.sessionId)
  H.wait_for("the first run", function() return H.text(buf):find("Done A.", 1, true) ~= nil and not chat.chat(buf).running end, 60000)
  local branch = assert(pi.sync.get_branch({}))
  out.first_leaf = pi.state.session.leafId
  local first_user
  for _, entry in ipairs(branch.entries) do
    if entry.type == "message" and entry.message.role == "user" and not first_user then
      first_user = entry.id
    end
  end
  assert(pi.sync.navigate({ targetId = first_user })) -- back before "write a": a second branch
  chat.send(buf, "write b")
  H.wait_for("the second run", function() return H.text(buf):find("Done B.", 1, true) ~= nil and not chat.chat(buf).running end, 60000)
  out.before_rewind = { a = read("file.txt"), new = read("new.txt") }

  local result = "pending"
  vim.cmd("edit file.txt") -- an open buffer follows the restore
  require("pi.rewind").rewind(out.first_leaf, false, function(r) result = r end)
  H.wait_for("the rewind", function() return result ~= "pending" end, 60000)
  out.rewind = result
  out.after_rewind = { a = read("file.txt"), new = read("new.txt"), buffer = H.lines(vim.fn.bufnr("file.txt")) }

  result = "pending"
  vim.cmd("PiUndoRestore")
  H.wait_for("the undo", function() return require("pi.rewind").last == nil end)
  out.after_undo = { a = read("file.txt"), new = read("new.txt") }

  local context = "pending"
  require("pi.changes").open(function(c) context = c end)
  H.wait_for("the changes", function() return context ~= "pending" end)
  out.changes = vim.tbl_map(function(item) return { file = vim.fn.bufname(item.bufnr), text = item.text } end, vim.fn.getqflist())
  out.qf_title = vim.fn.getqflist({ title = 1 }).title
  local row
  for i, file in ipairs(context.files) do
    if file.path == "file.txt" then
      row = i
    end
  end
  vim.api.nvim_win_set_cursor(0, { row, 0 })
  local tabs = #vim.api.nvim_list_tabpages()
  feed("<CR>")
  H.wait_for("the diff tab", function() return #vim.api.nvim_list_tabpages() > tabs end)
  local sides = {}
  for _, win in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
    local b = vim.api.nvim_win_get_buf(win)
    table.insert(sides, { name = vim.fn.fnamemodify(vim.api.nvim_buf_get_name(b), ":t"), lines = H.lines(b),
      diff = vim.api.nvim_win_get_option(win, "diff") })
  end
  out.diff_tab = sides
  feed("X")
  H.wait_for("the revert", function() return read("file.txt") == "A" end)
  out.after_revert = { a = read("file.txt"), new = read("new.txt") }

  -- :PiRewind! over a file changed by hand: a conflict, overwritten after the second question
  vim.fn.writefile({ "hand" }, "file.txt")
  vim.cmd("PiRewind! " .. out.first_leaf)
  H.wait_for("the forced rewind", function() return read("file.txt") == "A" and read("new.txt") == vim.NIL end, 60000)
  out.after_forced = { a = read("file.txt"), new = read("new.txt") }
end)
if not ok then
  out.error = tostring(err)
end
finish()
