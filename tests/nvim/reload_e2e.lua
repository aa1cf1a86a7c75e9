-- For tests/nvim/test_nvim_first_contact.py: the agent edits a file open in an unmodified buffer
-- (it is reloaded) and writes one open with unsaved changes (kept, with a warning).
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":h") .. "/harness.lua")
local cfg, out, finish = H.cfg, H.out, H.finish

local ok, err = pcall(function()
  local pi = require("pi")
  local chat = require("pi.chat")
  pi.setup({ cmd = cfg.cmd, autostart = false, settings = cfg.settings })
  vim.cmd("edit hello.txt")
  local hello = vim.api.nvim_get_current_buf()
  vim.cmd("split other.txt")
  local other = vim.api.nvim_get_current_buf()
  vim.api.nvim_buf_set_lines(other, 0, -1, false, { "typed by the user" })
  vim.cmd("PiChat change them")
  H.wait_for("the chat buffer", function() return pi.state.session and chat.buffer(pi.state.session.sessionId) ~= nil end)
  local buf = chat.buffer(pi.state.session.sessionId)
  H.wait_for("the reply after the edits", function() return H.text(buf):find("Edited.", 1, true) ~= nil end)
  H.wait_for("the run to end", function() return not chat.chat(buf).running end)
  out.hello = H.lines(hello)
  out.hello_modified = vim.bo[hello].modified
  out.other = H.lines(other)
  out.other_modified = vim.bo[other].modified
end)
if not ok then
  out.error = tostring(err)
end
finish()
