-- For tests/nvim/test_nvim_compact_tty.py: :PiCompact typed by a user in a Neovim on a
-- pseudo-terminal with the stock vim.ui.select, after two runs: the preview is drawn before the
-- question, and the compaction ends without a hit-enter prompt. The script runs its steps from
-- Neovim's main loop (H.steps) and says on the screen when the Python side may type. Config:
-- { cmd, settings, out }.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":h") .. "/harness.lua")
local cfg, out = H.cfg, H.out

local pi = require("pi")
local chat = require("pi.chat")
pi.setup({ cmd = cfg.cmd, autostart = false, settings = cfg.settings })
local buf, compacted_at

local function idle(text)
  return buf ~= nil and H.text(buf):find(text, 1, true) ~= nil and not chat.chat(buf).running
end

vim.cmd("PiChat hello there")
H.steps({
  {
    what = "the first run",
    ready = function()
      local session = pi.state.session
      buf = session and chat.buffer(session.sessionId)
      return idle("First answer.")
    end,
    run = function()
      chat.send(buf, "and a second question")
    end,
  },
  {
    what = "the second run",
    ready = function()
      return idle("Second answer.")
    end,
    run = function()
      vim.api.nvim_set_current_win(vim.fn.bufwinid(buf))
      H.say("TEST: two runs")
    end,
  },
  {
    what = "the compaction",
    ready = function()
      for _, message in ipairs(out.messages) do
        if message:find("pi: compacted:", 1, true) then
          compacted_at = compacted_at or vim.loop.now()
        end
      end
      -- a second more: a hit-enter prompt would be drawn by then
      return compacted_at ~= nil and vim.loop.now() - compacted_at > 1000
    end,
    run = function()
      out.mode = vim.api.nvim_get_mode()
      out.preview_closed = vim.fn.bufwinid(vim.fn.bufnr("pi://compact")) == -1
      out.chat = H.lines(buf)
    end,
  },
}, 60000)
