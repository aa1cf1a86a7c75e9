-- Unified diffs as the server sends them (an edit's preview hunks, pi/getChanges' diffs): hunks
-- parsed into old and new lines, a file rebuilt with only some hunks applied (per-hunk review), and
-- the text before a change rebuilt from the text after it (the "before" side of :PiChanges' diff).
local M = {}

---@class pi.Hunk
---@field index integer the hunk's index in the change (the server's `index`)
---@field old_start integer first old line (1-based; for an empty range, the line after which it is)
---@field old_count integer
---@field new_start integer first new line (1-based; for an empty range, the line after which it is)
---@field new_count integer
---@field old string[] the hunk's lines in the old text (context and removed)
---@field new string[] the hunk's lines in the new text (context and added)

--- Lines of `text` without the empty string after a final newline; `eol` says whether there was one.
---@param text string
---@return string[], boolean
function M.lines(text)
  local lines = vim.split(text or "", "\n", { plain = true })
  local eol = #lines > 1 and lines[#lines] == ""
  if eol or text == "" then
    table.remove(lines)
  end
  return lines, eol
end

--- The text of `lines` (with a final newline when `eol`).
---@param lines string[]
---@param eol boolean
---@return string
function M.text(lines, eol)
  if #lines == 0 then
    return ""
  end
  return table.concat(lines, "\n") .. (eol and "\n" or "")
end

--- Parse one hunk's text (from its `@@` line on); nil when it is not a hunk.
---@param text string
---@param index? integer
---@return pi.Hunk?
function M.parse_hunk(text, index)
  local lines = vim.split(text, "\n", { plain = true })
  local a, b, c, d = lines[1]:match("^@@ %-(%d+),?(%d*) %+(%d+),?(%d*) @@")
  if not a then
    return nil
  end
  local hunk = {
    index = index or 0,
    old_start = tonumber(a),
    old_count = b == "" and 1 or tonumber(b),
    new_start = tonumber(c),
    new_count = d == "" and 1 or tonumber(d),
    old = {},
    new = {},
  }
  for i = 2, #lines do
    local mark, rest = lines[i]:sub(1, 1), lines[i]:sub(2)
    if mark == " " then
      table.insert(hunk.old, rest)
      table.insert(hunk.new, rest)
    elseif mark == "-" then
      table.insert(hunk.old, rest)
    elseif mark == "+" then
      table.insert(hunk.new, rest)
    end -- "\ No newline at end of file", and the empty string after the last line
  end
  return hunk
end

--- Every hunk of a whole unified diff (its `---`/`+++` lines are skipped).
---@param text string
---@return pi.Hunk[]
function M.parse(text)
  local hunks, current = {}, nil
  for _, line in ipairs(vim.split(text or "", "\n", { plain = true })) do
    if line:match("^@@ ") then
      current = { line }
      table.insert(hunks, current)
    elseif current then
      table.insert(current, line)
    end
  end
  local parsed = {}
  for i, lines in ipairs(hunks) do
    table.insert(parsed, M.parse_hunk(table.concat(lines, "\n"), i - 1))
  end
  return parsed
end

--- Number of lines before a hunk's range (`start` is the line after which an empty range is).
local function before(start, count)
  return count == 0 and start or start - 1
end

--- The file `new_lines` with each hunk kept only when `keep(hunk)` is true (the old lines put back
--- otherwise); also the row range (0-based, end exclusive) each hunk occupies in the result.
---@param new_lines string[] the text with every hunk applied
---@param hunks pi.Hunk[] sorted by position
---@param keep fun(hunk: pi.Hunk): boolean
---@return string[], table<integer, {first: integer, last: integer}>
function M.compose(new_lines, hunks, keep)
  local out, ranges, row = {}, {}, 0 -- row: new_lines consumed
  for _, hunk in ipairs(hunks) do
    local start = before(hunk.new_start, hunk.new_count)
    for i = row + 1, start do
      table.insert(out, new_lines[i])
    end
    local first = #out
    for _, line in ipairs(keep(hunk) and hunk.new or hunk.old) do
      table.insert(out, line)
    end
    ranges[hunk.index] = { first = first, last = #out }
    row = start + hunk.new_count
  end
  for i = row + 1, #new_lines do
    table.insert(out, new_lines[i])
  end
  return out, ranges
end

--- The old text rebuilt from the new text and the hunks between them; nil when the new text does
--- not match the hunks (it changed since the diff was made).
---@param new_lines string[]
---@param hunks pi.Hunk[]
---@return string[]?
function M.unapply(new_lines, hunks)
  for _, hunk in ipairs(hunks) do
    local start = before(hunk.new_start, hunk.new_count)
    for i, line in ipairs(hunk.new) do
      if new_lines[start + i] ~= line then
        return nil
      end
    end
  end
  return (M.compose(new_lines, hunks, function()
    return false
  end))
end

return M
