-- For tests/nvim/test_nvim_active_session.py: background requests that address the session the
-- plugin shows (the statusline's usage, a chat's redraw after an external append) must not switch
-- the server back to it while the user's open of another session is being answered.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":h") .. "/harness.lua")
local cfg, out = H.cfg, H.out
out.sent = {}

local ok, err = pcall(function()
  local pi = require("pi")
  local status = require("pi.status")
  pi.setup({ cmd = cfg.cmd, autostart = false, settings = cfg.settings })
  status.debounce_ms = 0
  local first = assert(pi.request_sync(pi.methods.open_session, { path = cfg.first }, 20000))
  vim.cmd("PiChat") -- a chat of the first session, which an external append redraws
  H.wait_for("the first session's usage", function()
    return status.usage[first.sessionId] ~= nil
  end, 10000)
  vim.wait(500)

  -- The server has answered the open of the second session; before the plugin reads that answer,
  -- the statusline's timer fires and another program's append to the first session is announced
  -- (both happen in Neovim's loop between the answer's arrival and its callback).
  local lsp = pi.client()
  local request = lsp.request
  local method_call = vim.fn.has("nvim-0.11") == 1 -- client:request(...) there, client.request(...) before
  local function wrapped(method, params, callback, ...)
    table.insert(out.sent, method .. " " .. tostring(type(params) == "table" and params.session or ""))
    local on_answer = callback
    if method == pi.methods.open_session then
      on_answer = function(e, r, ...)
        status.refresh()
        pi._fire("PiSessionChanged", { sessionId = first.sessionId, reason = "external" })
        vim.wait(300) -- the timer fires; the requests of both reach the server
        return callback(e, r, ...)
      end
    end
    if method_call then
      return request(lsp, method, params, on_answer, ...)
    end
    return request(method, params, on_answer, ...)
  end
  lsp.request = method_call and function(_, ...)
    return wrapped(...)
  end or wrapped
  local second
  pi.request(pi.methods.open_session, { path = cfg.second }, function(_, result)
    second = result
  end)
  H.wait_for("the second session", function()
    return second ~= nil
  end, 10000)
  status.debounce_ms = 150
  vim.wait(1500) -- late answers land (and whatever they make the plugin do)
  lsp.request = request
  local server = assert(pi.request_sync(pi.methods.get_session_state, {}, 10000))
  out.first, out.second = first.sessionId, second.sessionId
  out.server_active = server.sessionId
  out.plugin_active = pi.state.session and pi.state.session.sessionId or vim.NIL
end)
if not ok then
  out.error = tostring(err)
end
H.finish()
