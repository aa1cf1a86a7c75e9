-- Approvals: a `pi/requestApproval` from the server is answered through vim.ui.select (Allow /
-- Allow always / Deny), with an edit's diff shown in a scratch split meanwhile.
local M = {}

local api = vim.api

M.choices = { "Allow", "Allow always", "Deny" }
local decisions = { Allow = "allow", ["Allow always"] = "allowAlways", Deny = "deny" }

--- Answer a `pi/requestApproval`: show the command or diff, then ask through vim.ui.select. The
--- LSP client needs the answer synchronously, so this waits (processing events) for the choice.
function M.approve(request)
  request = request or {}
  local preview = request.preview or {}
  local what = preview.command or (request.args and request.args.command) or preview.path or ""
  local diff_win
  if preview.diff then
    local buf = api.nvim_create_buf(false, true)
    api.nvim_buf_set_option(buf, "bufhidden", "wipe")
    api.nvim_buf_set_option(buf, "filetype", "diff")
    api.nvim_buf_set_lines(buf, 0, -1, false, vim.split(preview.diff, "\n", { plain = true }))
    require("pi.ui").show_buffer(buf)
    diff_win = api.nvim_get_current_win()
  end
  local choice, answered = nil, false
  vim.ui.select(M.choices, {
    prompt = require("pi.chat_render").one_line(string.format("pi: allow %s %s?", request.toolName or "tool", what), 70),
  }, function(item)
    choice, answered = item, true
  end)
  vim.wait(24 * 3600 * 1000, function()
    return answered
  end, 50)
  if diff_win and api.nvim_win_is_valid(diff_win) then
    api.nvim_win_close(diff_win, true)
  end
  return { decision = decisions[choice] or "deny" }
end

return M
