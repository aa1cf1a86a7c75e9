-- For tests/nvim/test_nvim_rewind_keys_tty.py: the rewind keys as a user meets them, in a Neovim on
-- a pseudo-terminal with the stock vim.ui.select (wrapped only to record the answers): two runs,
-- then <LocalLeader>r typed on the first run's reply in the chat (preview, question, restore),
-- :PiUndoRestore, a file changed by hand, and R typed on the same entry in :PiTree (the conflict in
-- the preview and the question; cancelled once, then restored with the conflict left alone), and
-- ? typed in :PiTree (the list of its keys). The
-- script runs its steps from Neovim's main loop (H.steps) and says on the screen when the Python
-- side may type. Config: { cmd, settings, out }.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":h") .. "/harness.lua")
local cfg, out = H.cfg, H.out

local pi = require("pi")
local chat = require("pi.chat")
local rewind = require("pi.rewind")
pi.setup({ cmd = cfg.cmd, autostart = false, settings = cfg.settings })
local stock_select = vim.ui.select
out.choices = {}
vim.ui.select = function(items, opts, on_choice)
  return stock_select(items, opts, function(choice, index)
    table.insert(out.choices, choice or vim.NIL)
    on_choice(choice, index)
  end)
end

local function read(path)
  return vim.loop.fs_stat(path) and table.concat(vim.fn.readfile(path), "\n") or vim.NIL
end

local function files()
  return { file = read("file.txt"), new = read("new.txt") }
end

local buf
local function idle(text)
  return buf ~= nil and H.text(buf):find(text, 1, true) ~= nil and not chat.chat(buf).running
end

--- The cursor on the first line of `buf` holding `text`, in its window.
local function cursor_on(target, text)
  for row, line in ipairs(H.lines(target)) do
    if line:find(text, 1, true) then
      vim.api.nvim_set_current_win(vim.fn.bufwinid(target))
      vim.api.nvim_win_set_cursor(0, { row, 0 })
      return
    end
  end
  error("no line with " .. text)
end

vim.cmd("PiChat write a")
H.steps({
  {
    what = "the first run",
    ready = function()
      local session = pi.state.session
      buf = session and chat.buffer(session.sessionId)
      return idle("Done A.")
    end,
    run = function()
      chat.send(buf, "write b")
    end,
  },
  {
    what = "the second run",
    ready = function()
      return idle("Done B.")
    end,
    run = function()
      out.before = files()
      cursor_on(buf, "Done A.")
      H.say("TEST: on the first reply")
    end,
  },
  {
    what = "the rewind from the chat",
    ready = function()
      return rewind.last ~= nil and read("new.txt") == vim.NIL
    end,
    run = function()
      out.after_chat_rewind = files()
      out.preview_closed = vim.fn.bufwinid(vim.fn.bufnr("pi://rewind")) == -1
      vim.cmd("PiUndoRestore")
    end,
  },
  {
    what = "the undo",
    ready = function()
      return rewind.last == nil and read("new.txt") ~= vim.NIL
    end,
    run = function()
      out.after_undo = files()
      vim.fn.writefile({ "hand" }, "file.txt")
      vim.cmd("PiTree")
    end,
  },
  {
    what = "the tree",
    ready = function()
      local tree = vim.fn.bufnr("pi://tree")
      return tree ~= -1 and H.text(tree):find("Done A.", 1, true) ~= nil
    end,
    run = function()
      cursor_on(vim.fn.bufnr("pi://tree"), "Done A.")
      H.say("TEST: on the tree entry")
    end,
  },
  {
    what = "the cancelled rewind",
    ready = function()
      return #out.choices == 2
    end,
    run = function()
      out.after_cancel = files()
      cursor_on(vim.fn.bufnr("pi://tree"), "Done A.")
      H.say("TEST: cancelled")
    end,
  },
  {
    what = "the rewind from the tree",
    ready = function()
      return #out.choices == 3 and read("new.txt") == vim.NIL
    end,
    run = function()
      out.after_tree_rewind = files()
      vim.api.nvim_set_current_win(vim.fn.bufwinid(vim.fn.bufnr("pi://tree")))
      H.say("TEST: the tree's keys")
    end,
  },
  {
    what = "the list of the tree's keys (typed ?)",
    ready = function()
      local keys = vim.fn.bufnr("pi://keys")
      return keys ~= -1 and vim.fn.bufwinid(keys) ~= -1
    end,
    run = function()
      out.tree_keys = H.lines(vim.fn.bufnr("pi://keys"))
      H.say("TEST: done")
    end,
  },
}, 60000)
