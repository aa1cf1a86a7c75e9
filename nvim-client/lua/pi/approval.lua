-- Approvals: a `pi/requestApproval` from the server is answered through vim.ui.select (Allow /
-- Allow always / Deny, and for an edit/write "Review hunks / edit": pi.review), with the command,
-- an edit's diff or why the edit would fail shown in a scratch split meanwhile.
local protocol = require("pi.protocol")
local M = {}

local api = vim.api

M.choices = { "Allow", "Allow always", "Deny" }
M.review_choice = "Review hunks / edit"
local decisions = { Allow = "allow", ["Allow always"] = "allowAlways", Deny = "deny" }

--- Whether the request's preview can be reviewed hunk by hunk (an edit/write with hunks).
local function reviewable(preview)
  return type(preview.hunks) == "table" and #preview.hunks > 0 and type(preview.newContent) == "string"
end

--- Answer a `pi/requestApproval`: show the command or diff, then ask through vim.ui.select. The
--- LSP client needs the answer synchronously, so this waits (processing events) for the choice.
function M.approve(request)
  request = request or {}
  local preview = request.preview or {}
  local command = preview.command or (request.args and request.args.command) or nil
  local what = command or preview.path or ""
  -- what would run or change, in full, in a scratch split while the question is asked
  local shown, filetype = nil, nil
  if type(preview.diff) == "string" then
    shown, filetype = preview.diff, "diff"
  elseif type(preview.error) == "string" then
    shown, filetype = preview.error, "text"
  elseif type(command) == "string" then
    shown, filetype = command, "sh"
  end
  local previous, preview_win = api.nvim_get_current_win(), nil
  if shown then
    local buf = api.nvim_create_buf(false, true)
    api.nvim_buf_set_option(buf, "bufhidden", "wipe")
    api.nvim_buf_set_option(buf, "filetype", filetype)
    api.nvim_buf_set_lines(buf, 0, -1, false, vim.split(shown, "\n", { plain = true }))
    require("pi.ui").show_buffer(buf)
    preview_win = api.nvim_get_current_win()
    -- the stock vim.ui.select calls inputlist(), which blocks before the screen is redrawn: draw
    -- the split now, or the user answers without having seen what they approve
    vim.cmd("redraw")
  end
  local choice, answered = nil, false
  local choices = M.choices
  if reviewable(preview) then
    choices = vim.list_extend(vim.list_slice(M.choices), { M.review_choice })
  end
  vim.ui.select(choices, {
    prompt = require("pi.chat_render").one_line(
      string.format("pi: allow %s %s?", request.toolName or "tool", what),
      70
    ),
  }, function(item)
    choice, answered = item, true
  end)
  vim.wait(24 * 3600 * 1000, function()
    return answered
  end, 50)
  if preview_win and api.nvim_win_is_valid(preview_win) then
    api.nvim_win_close(preview_win, true)
  end
  if api.nvim_win_is_valid(previous) then
    api.nvim_set_current_win(previous)
  end
  if choice == M.review_choice then
    local answer = require("pi.review").review(request)
    if api.nvim_win_is_valid(previous) then
      api.nvim_set_current_win(previous)
    end
    return answer
  end
  return { decision = decisions[choice] or "deny" }
end

--- Answer the server's approval requests (called once by setup()).
function M.attach()
  require("pi.client").answer(protocol.server_requests.request_approval, M.approve)
end

return M
