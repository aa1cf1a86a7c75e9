-- For tests/nvim/test_nvim_first_contact.py: a prompt refused by the server (no API key) in a
-- narrow Neovim: the error is shown whole in the chat, the typed text stays in the prompt area.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":h") .. "/harness.lua")
local cfg, out, finish = H.cfg, H.out, H.finish

local ok, err = pcall(function()
  local pi = require("pi")
  local chat = require("pi.chat")
  vim.o.columns = 60
  pi.setup({ cmd = cfg.cmd, autostart = false, settings = cfg.settings })
  local errors = {}
  local real = pi.request
  pi.request = function(method, params, callback) -- record the error exactly as the server sent it
    return real(method, params, function(e, result)
      if e then
        table.insert(errors, pi.format_error(e))
      end
      return callback(e, result)
    end)
  end
  vim.cmd("PiChat")
  H.wait_for("the chat buffer", function() return pi.state.session and chat.buffer(pi.state.session.sessionId) ~= nil end)
  local buf = chat.buffer(pi.state.session.sessionId)
  chat.set_prompt(buf, "a carefully typed prompt\nover two lines")
  vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes("<CR>", true, false, true), "x", false)
  H.wait_for("the error", function() return #errors > 0 and H.text(buf):find("## Error", 1, true) ~= nil end)
  out.server_error = errors[1]
  out.lines = H.lines(buf)
  out.running = chat.chat(buf).running
  -- a run that ended in a model error (stored as pi stores it) shows its errorMessage whole too
  out.stored = require("pi.chat_render").message_lines({
    role = "assistant", content = {}, stopReason = "error",
    errorMessage = "400 invalid_request_error: " .. string.rep("x", 120) .. "\nsecond line",
  })
end)
if not ok then
  out.error = tostring(err)
end
finish()
