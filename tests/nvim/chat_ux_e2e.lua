-- For tests/nvim/test_nvim_first_contact.py: what users saw on first contact with the chat. The
-- message is echoed at once with a working indicator (chat header and statusline); <C-s> sends and
-- stays in insert mode (the next letter is kept); each reply shows its model, tokens and cost; long
-- lines wrap between words; the window is not scrolled past the end after a navigation; :PiFork then
-- :PiChat reuses the chat's window; ? lists the keys; :'<,'>PiChat sends the lines with their path;
-- #buffer and / completion.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":h") .. "/harness.lua")
local cfg, out, finish = H.cfg, H.out, H.finish

local function feed(keys, mode)
  vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes(keys, true, false, true), mode or "x", false)
end

local function header(win)
  return vim.api.nvim_win_get_option(win, vim.fn.has("nvim-0.8") == 1 and "winbar" or "statusline")
end

local ok, err = pcall(function()
  local pi = require("pi")
  local chat = require("pi.chat")
  pi.setup({ cmd = cfg.cmd, autostart = false, settings = cfg.settings })
  vim.cmd("edit notes.txt")
  local notes = vim.api.nvim_get_current_buf()
  -- the first :PiChat on a cold server: the message is on the screen before the server answers
  local windows_before = #vim.api.nvim_tabpage_list_wins(0)
  vim.cmd("PiChat hello cold")
  out.cold = { lines = H.lines(0), header = header(0), ready = pi.is_ready() }
  H.wait_for("the chat buffer", function() return pi.state.session and chat.buffer(pi.state.session.sessionId) ~= nil end)
  local buf = chat.buffer(pi.state.session.sessionId)
  local win = vim.fn.bufwinid(buf)
  out.linebreak = vim.api.nvim_win_get_option(win, "linebreak")
  H.wait_for("the first reply", function() return H.text(buf):find("First answer.", 1, true) ~= nil and not chat.chat(buf).running end)
  out.windows_after_cold = #vim.api.nvim_tabpage_list_wins(0) - windows_before

  -- <C-s> in insert mode: sent, echoed at once, still in insert mode; "w" typed next is kept
  vim.api.nvim_set_current_win(win)
  vim.api.nvim_win_set_cursor(win, { vim.api.nvim_buf_line_count(buf), 0 })
  local real_send = chat.send
  chat.send = function(...) -- what the user sees right after <C-s>, before the server answered
    real_send(...)
    out.mode_after_send = vim.api.nvim_get_mode().mode
    out.echoed = H.lines(buf)
    out.header_working = header(win)
    out.statusline_working = pi.statusline()
  end
  feed("ihello there<C-s>world<Esc>", "xt")
  chat.send = real_send
  H.wait_for("the second reply", function() return H.text(buf):find("Second answer.", 1, true) ~= nil and not chat.chat(buf).running end)
  out.first = H.lines(buf)
  out.header_done = header(win)
  out.statusline_done = pi.statusline()

  -- a navigation redraws the chat: the window shows the end, with no empty screen past it
  vim.cmd("resize 8")
  local branch = assert(pi.sync.get_branch({}))
  assert(pi.sync.navigate({ targetId = branch.entries[#branch.entries].id }))
  H.wait_for("the redraw", function() return H.text(buf):find("First answer.", 1, true) ~= nil end)
  vim.wait(300)
  out.after_nav = { line_count = vim.api.nvim_buf_line_count(buf), last_visible = vim.fn.line("w$", win),
    top = vim.fn.line("w0", win), height = vim.api.nvim_win_get_height(win) }

  -- ? lists the keys of the chat
  vim.api.nvim_set_current_win(win)
  feed("?")
  out.keys = H.lines(vim.fn.bufnr("pi://keys"))
  vim.cmd("close")

  -- / completion: built-ins, templates and skills
  vim.api.nvim_set_current_win(win)
  local complete = require("pi.chat_complete")
  out.completions = vim.tbl_map(function(item) return item.word end, complete.omnifunc(0, "/"))

  -- :'<,'>PiChat sends the lines with their path and numbers; #buffer the last file's text
  vim.cmd("wincmd p")
  vim.api.nvim_set_current_buf(notes)
  vim.api.nvim_buf_set_lines(notes, 0, -1, false, { "alpha", "beta", "gamma", "delta" })
  local windows = #vim.api.nvim_tabpage_list_wins(0)
  vim.cmd("2,3PiChat explain these")
  H.wait_for("the third reply", function() return H.text(buf):find("Third answer.", 1, true) ~= nil and not chat.chat(buf).running end)
  out.windows_same_after_range = #vim.api.nvim_tabpage_list_wins(0) == windows
  out.expanded = complete.expand("see #buffer")

  -- :PiFork then :PiChat: the fork's chat takes the old chat's window (no third split)
  windows = #vim.api.nvim_tabpage_list_wins(0)
  local old = pi.state.session.sessionId
  vim.cmd("PiFork")
  H.wait_for("the fork", function() return pi.state.session.sessionId ~= old end)
  vim.cmd("PiChat")
  H.wait_for("the fork's chat", function() return chat.buffer(pi.state.session.sessionId) ~= nil end)
  out.windows_after_fork = #vim.api.nvim_tabpage_list_wins(0) - windows
  out.fork_chat_shown = vim.fn.bufwinid(chat.buffer(pi.state.session.sessionId)) ~= -1
end)
if not ok then
  out.error = tostring(err)
end
finish()
