-- For tests/nvim/test_nvim_complete_tty.py: completion in the chat's prompt area as a user types
-- it, in a Neovim on a pseudo-terminal: `/` at the start of a line (the popup of built-ins,
-- prompt templates and skills; a template picked and sent), `@` paths and `#buffer` with
-- <C-x><C-o>, and a built-in picked and sent alone (it runs the command). The script opens the chat from a file buffer (the one #buffer sends), runs its steps
-- from Neovim's main loop (H.steps) and says on the screen when the Python side may type.
-- Config: { cmd, settings, out }.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":h") .. "/harness.lua")
local cfg, out = H.cfg, H.out

local pi = require("pi")
local chat = require("pi.chat")
pi.setup({ cmd = cfg.cmd, autostart = false, settings = cfg.settings })
vim.cmd("edit notes.txt")
local buf

local function idle(text)
  return buf ~= nil and H.text(buf):find(text, 1, true) ~= nil and not chat.chat(buf).running
end

--- The cursor on the (empty) prompt line of the chat, in normal mode, and the screen redrawn.
local function to_prompt(say)
  vim.cmd("stopinsert")
  local win = vim.fn.bufwinid(buf)
  vim.api.nvim_set_current_win(win)
  vim.api.nvim_win_set_cursor(win, { vim.api.nvim_buf_line_count(buf), 0 })
  H.say(say)
end

vim.cmd("PiChat")
H.steps({
  {
    what = "the chat",
    ready = function()
      local session = pi.state.session
      buf = session and chat.buffer(session.sessionId)
      return buf ~= nil
    end,
    run = function()
      to_prompt("TEST: the chat is open")
    end,
  },
  {
    what = "the reply to the template",
    ready = function()
      return idle("Template answer.")
    end,
    run = function()
      to_prompt("TEST: type a path")
    end,
  },
  {
    what = "the reply to the path and buffer",
    ready = function()
      return idle("Path answer.")
    end,
    run = function()
      out.lines = H.lines(buf)
      out.completeopt = vim.o.completeopt
      to_prompt("TEST: type a built-in")
    end,
  },
  {
    what = ":PiTree run by /tree",
    ready = function()
      local tree = vim.fn.bufnr("pi://tree")
      return tree ~= -1 and vim.fn.bufwinid(tree) ~= -1
    end,
    run = function()
      local lines = H.lines(buf)
      out.prompt_after_builtin = lines[#lines]
      H.say("TEST: done")
    end,
  },
}, 60000)
