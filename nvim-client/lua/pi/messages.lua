-- Messages to the user: one screen line each (no "Press ENTER" prompt), errors as "message (code)".
local M = {}

--- `msg` cut to one screen line, so that no message ever waits for Enter.
---@param msg any
---@return string
function M.short(msg)
  msg = tostring(msg):gsub("%s*\n%s*", " ")
  local room = math.max(20, (vim.v.echospace or vim.o.columns) - 1)
  if vim.fn.strdisplaywidth(msg) > room then
    msg = vim.fn.strcharpart(msg, 0, room - 3) .. "..."
  end
  return msg
end

--- vim.notify with the message cut to one line.
---@param msg any
---@param level? integer
function M.notify(msg, level)
  vim.notify(M.short(msg), level or vim.log.levels.INFO)
end

--- "message (code)" for a JSON-RPC error (or any value).
---@param err any
---@return string
function M.format_error(err)
  if type(err) ~= "table" then
    return tostring(err)
  end
  if err.message then
    return err.message .. (err.code and string.format(" (%s)", err.code) or "")
  end
  return vim.inspect(err)
end

return M
