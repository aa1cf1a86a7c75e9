-- Actions on the message under the cursor of a chat buffer: jump between messages, yank a code
-- block, edit & resend, continue from here (navigate), new session from here (branchToNewSession).
local M = {}

local api = vim.api

local function pi()
  return require("pi")
end

local function chat()
  return require("pi.chat")
end

local function fail(what, err)
  pi().notify("pi: " .. what .. ": " .. pi().format_error(err), vim.log.levels.ERROR)
end

--- Rows of the transcript (above the prompt marker) of the current chat buffer, 0-based end.
local function transcript_end(buf)
  local lines = api.nvim_buf_get_lines(buf, 0, -1, false)
  for i = #lines, 1, -1 do
    if lines[i] == chat().marker then
      return i - 1, lines
    end
  end
  return #lines, lines
end

--- Move the cursor to the next (`step` 1) or previous (-1) message heading.
function M.jump(step)
  local buf = api.nvim_get_current_buf()
  local last, lines = transcript_end(buf)
  local row = api.nvim_win_get_cursor(0)[1] -- 1-based
  local i = row + step
  while i >= 1 and i <= last do
    if lines[i]:match("^## ") then
      api.nvim_win_set_cursor(0, { i, 0 })
      return true
    end
    i = i + step
  end
  return false
end

--- The lines of the fenced code block holding the cursor, or nil.
function M.code_block_at(buf, row)
  local last, lines = transcript_end(buf)
  local open, fence
  for i = 1, last do
    local mark = lines[i]:match("^%s*(```+)") or lines[i]:match("^%s*(~~~+)")
    if mark then
      if not open then
        open, fence = i, mark
      elseif mark:sub(1, 1) == fence:sub(1, 1) and #mark >= #fence then
        if row >= open and row <= i then
          return vim.list_slice(lines, open + 1, i - 1)
        end
        open = nil
      end
    end
  end
  return nil
end

--- Yank the code block under the cursor (without its fences) into the unnamed register and the
--- register given to the key (e.g. "+gy).
function M.yank_code()
  local buf = api.nvim_get_current_buf()
  local code = M.code_block_at(buf, api.nvim_win_get_cursor(0)[1])
  if not code then
    return pi().notify("pi: no code block under the cursor", vim.log.levels.WARN)
  end
  local register = vim.v.register ~= "" and vim.v.register or '"'
  vim.fn.setreg(register, code, "l")
  if register ~= '"' then
    vim.fn.setreg('"', code, "l")
  end
  pi().notify(string.format("pi: yanked %d lines", #code))
end

local function cursor_entry(role)
  local buf = api.nvim_get_current_buf()
  local row = api.nvim_win_get_cursor(0)[1] - 1
  local entry
  if role then
    entry = chat().entry_above(buf, row, role)
  else
    entry = chat().entry_at(buf, row)
  end
  local state = chat().chat(buf)
  if not entry or not state then
    pi().notify("pi: no saved message under the cursor", vim.log.levels.WARN)
    return nil
  end
  return buf, state, entry
end

--- pi/navigate to `entry`, draw the branch again, and put a user message's text in the prompt area.
local function navigate(buf, state, entry, callback)
  pi().navigate({ session = state.session, targetId = entry.id }, function(err, result)
    if err then
      return fail("navigate", err)
    end
    chat().refresh(buf, function()
      if result.editorText then
        chat().set_prompt(buf, result.editorText)
        local win = vim.fn.bufwinid(buf)
        if win ~= -1 then
          api.nvim_win_set_cursor(win, { api.nvim_buf_line_count(buf), 0 })
        end
      end
      if callback then
        callback(result)
      end
    end)
  end)
end

--- Edit & resend: go back to before the user message under (or above) the cursor and put its text
--- in the prompt area; sending it starts a new branch.
function M.edit_resend(callback)
  local buf, state, entry = cursor_entry("user")
  if buf then
    navigate(buf, state, entry, function(result)
      pi().notify("pi: edit the message and send it: it starts a new branch")
      if type(callback) == "function" then
        callback(result)
      end
    end)
  end
end

--- Continue from the message under the cursor (pi/navigate to it; a user message comes back to the
--- prompt area).
function M.branch_here(callback)
  local buf, state, entry = cursor_entry(nil)
  if buf then
    navigate(buf, state, entry, type(callback) == "function" and callback or nil)
  end
end

--- A new session holding the branch up to the message under the cursor, opened in its own chat.
function M.fork_here(callback)
  local _, state, entry = cursor_entry(nil)
  if not entry then
    return
  end
  pi().branch_to_new_session({ session = state.session, entryId = entry.id }, function(err, result)
    if err then
      return fail("fork", err)
    end
    chat().open(nil, function(buf)
      pi().notify("pi: new session " .. (result.sessionId or ""):sub(1, 8) .. " from the message")
      if type(callback) == "function" then
        callback(buf, result)
      end
    end)
  end)
end

return M
