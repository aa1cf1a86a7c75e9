-- For tests/nvim/test_nvim_first_contact_tty.py: the agent edits a file open in an unmodified buffer
-- (it is reloaded and redrawn) and writes one open with unsaved changes (kept, with a warning), in a
-- Neovim on a pseudo-terminal. As review_tty.lua, the script returns to Neovim's main loop (a
-- user's Neovim is not inside vim.wait) and a timer finishes once the run is over. Config: { cmd,
-- settings, out }.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":h") .. "/harness.lua")
local cfg, out, finish = H.cfg, H.out, H.finish

local pi = require("pi")
local chat = require("pi.chat")
pi.setup({ cmd = cfg.cmd, autostart = false, settings = cfg.settings })
vim.cmd("edit hello.txt")
local hello = vim.api.nvim_get_current_buf()
vim.cmd("split other.txt")
local other = vim.api.nvim_get_current_buf()
vim.api.nvim_buf_set_lines(other, 0, -1, false, { "typed by the user" })
vim.cmd("PiChat change them")
local started = vim.loop.now()
local ended_at = nil
local timer = vim.loop.new_timer()
timer:start(100, 100, vim.schedule_wrap(function()
  local session = pi.state.session
  local buf = session and chat.buffer(session.sessionId)
  local done = buf and H.text(buf):find("Edited.", 1, true) ~= nil and not chat.chat(buf).running
  if done and not ended_at then
    ended_at = vim.loop.now()
  end
  -- a second after the run: what the user sees has been drawn by then (the Python side reads it)
  local settled = ended_at and vim.loop.now() - ended_at > 1000
  if settled or vim.loop.now() - started > 80000 then
    timer:stop()
    if not settled then
      out.error = "timed out waiting for the reply after the edits"
    end
    out.hello = H.lines(hello)
    out.hello_modified = vim.bo[hello].modified
    out.other = H.lines(other)
    out.other_modified = vim.bo[other].modified
    out.statusline = pi.statusline()
    finish()
  end
end))
