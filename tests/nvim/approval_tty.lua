-- For tests/nvim/test_nvim_approval_tty.py: an edit approved through the stock vim.ui.select (its
-- inputlist() blocks) in a Neovim drawn on a pseudo-terminal. Config: { cmd, settings, out }.
-- The Python side reads the screen, answers the question and waits for `out`.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":h") .. "/harness.lua")
local cfg, out, finish = H.cfg, H.out, H.finish

local ok, err = pcall(function()
  local pi = require("pi")
  local chat = require("pi.chat")
  pi.setup({ cmd = cfg.cmd, autostart = false, settings = cfg.settings })
  vim.cmd("PiChat change it")
  H.wait_for("the chat buffer", function() return chat.buffer((pi.state.session or {}).sessionId or "") ~= nil end)
  local buf = chat.buffer(pi.state.session.sessionId)
  H.wait_for("the reply after the edit", function() return H.text(buf):find("Edited.", 1, true) ~= nil end, 60000)
  H.wait_for("the run to end", function() return not chat.chat(buf).running end)
end)
if not ok then
  out.error = tostring(err)
end
finish()
