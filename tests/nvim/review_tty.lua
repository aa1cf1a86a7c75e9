-- For tests/nvim/test_nvim_review_tty.py: an edit's approval reviewed through the stock
-- vim.ui.select in a Neovim on a pseudo-terminal. Unlike approval_tty.lua this script does not wait
-- in vim.wait (typed keys are not run as commands meanwhile): it returns to Neovim's main loop, as
-- a user's Neovim is, and a timer finishes once the reply after the edit is in. Config: { cmd,
-- settings, out }.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":h") .. "/harness.lua")
local cfg, out, finish = H.cfg, H.out, H.finish

local pi = require("pi")
local chat = require("pi.chat")
pi.setup({ cmd = cfg.cmd, autostart = false, settings = cfg.settings })
vim.cmd("PiChat change it")
local started = vim.loop.now()
local timer = vim.loop.new_timer()
timer:start(100, 100, vim.schedule_wrap(function()
  local session = pi.state.session
  local buf = session and chat.buffer(session.sessionId)
  local done = buf and H.text(buf):find("Edited.", 1, true) ~= nil and not chat.chat(buf).running
  if done or vim.loop.now() - started > 80000 then
    timer:stop()
    if not done then
      out.error = "timed out waiting for the reply after the edit"
    end
    finish()
  end
end))
