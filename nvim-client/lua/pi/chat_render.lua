-- How the chat buffer draws messages: markdown lines for each message of a branch, with thinking,
-- tool output and summaries as folded lines (each starting with M.fold_prefix).
local M = {}

local function pi()
  return require("pi")
end

--- Lines starting with this are folded (thinking, tool output): the fold expression reads only text.
M.fold_prefix = "┆ "

function M.split(text)
  return vim.split(text or "", "\n", { plain = true })
end

function M.block_text(content)
  if type(content) == "string" then
    return content
  end
  local parts = {}
  for _, block in ipairs(content or {}) do
    if block.type == "text" then
      table.insert(parts, block.text or "")
    end
  end
  return table.concat(parts, "\n")
end

--- `text` on one line of at most `max` bytes.
function M.one_line(text, max)
  text = tostring(text or ""):gsub("%s+", " ")
  if #text > max then
    text = text:sub(1, max - 3) .. "..."
  end
  return text
end

--- `text` as folded lines under a visible-when-folded `title` (`keep_indent`: the first line's
--- leading blanks are kept, as a diff's columns need).
function M.folded(title, text, keep_indent)
  local lines = { M.fold_prefix .. title }
  local body = keep_indent and (text or ""):gsub("^\n+", ""):gsub("%s+$", "") or vim.trim(text or "")
  for _, line in ipairs(M.split(body)) do
    table.insert(lines, M.fold_prefix .. line)
  end
  return lines
end

local function tool_line(name, args)
  local shown = type(args) == "table" and (args.command or args.path) or nil
  return string.format("> tool `%s` %s", name or "?", M.one_line(shown or pi().json_encode(args or {}), 100))
end

local function thinking_text(content)
  local parts = {}
  for _, block in ipairs(type(content) == "table" and content or {}) do
    if block.type == "thinking" and (block.thinking or "") ~= "" then
      table.insert(parts, block.thinking)
    end
  end
  return table.concat(parts, "\n")
end

--- A tool's block: one `> running` / `> result` line with its output folded below it; with `diff`
--- (an accepted edit's `details.diff`) the diff is folded instead (the result is one line: the head).
function M.tool_result_lines(name, text, is_error, running, diff)
  local first = M.split(vim.trim(text or ""))[1] or ""
  local head
  if running then
    head = string.format("> running %s: %s", name or "", M.one_line(first, 100))
  else
    head = string.format("> %s %s: %s", is_error and "failed" or "result", name or "", M.one_line(first, 100))
  end
  local lines = { head }
  if type(diff) == "string" and vim.trim(diff) ~= "" then
    vim.list_extend(lines, M.folded("diff", diff, true))
  elseif vim.trim(text or "") ~= "" then
    vim.list_extend(lines, M.folded("output", text))
  end
  return lines
end

--- "_claude-sonnet-4-5 · 1.2k in, 35 out · $0.0042_": the model, tokens and cost of a reply (nil
--- without usage).
---@param message table an assistant message
---@return string?
function M.reply_footer(message)
  local usage = type(message.usage) == "table" and message.usage or nil
  if not usage then
    return message.model and ("_" .. message.model .. "_") or nil
  end
  local tokens = require("pi.commands").tokens
  local input = (usage.input or 0) + (usage.cacheRead or 0) + (usage.cacheWrite or 0)
  local parts =
    { tostring(message.model or "?"), string.format("%s in, %s out", tokens(input), tokens(usage.output or 0)) }
  local cost = type(usage.cost) == "table" and usage.cost.total or nil
  if type(cost) == "number" then
    table.insert(parts, string.format("$%.4f", cost))
  end
  return "_" .. table.concat(parts, " · ") .. "_"
end

--- Markdown lines for one message of the branch (as stored or as sent in a pi/event).
function M.message_lines(message)
  local role = message.role
  if role == "user" then
    return vim.list_extend({ "## You", "" }, vim.list_extend(M.split(M.block_text(message.content)), { "" }))
  elseif role == "assistant" then
    local lines = { "## Assistant", "" }
    local thinking = thinking_text(message.content)
    if thinking ~= "" then
      vim.list_extend(lines, M.folded("thinking", thinking))
    end
    local text = M.block_text(message.content)
    if text ~= "" then
      vim.list_extend(lines, M.split(text))
    end
    for _, block in ipairs(type(message.content) == "table" and message.content or {}) do
      if block.type == "toolCall" then
        table.insert(lines, tool_line(block.name, block.arguments))
      end
    end
    local footer = M.reply_footer(message)
    if footer then
      table.insert(lines, footer)
    end
    if message.stopReason == "aborted" or message.stopReason == "error" then
      -- the error whole (e.g. what the API said), never cut: it is how the user learns what to fix
      local why = message.errorMessage and M.split(vim.trim(message.errorMessage)) or {}
      why[1] = "_(" .. message.stopReason .. (why[1] and (": " .. why[1]) or "")
      why[#why] = why[#why] .. ")_"
      vim.list_extend(lines, why)
    end
    table.insert(lines, "")
    return lines
  elseif role == "toolResult" then
    local details = type(message.details) == "table" and message.details or {}
    local lines =
      M.tool_result_lines(message.toolName, M.block_text(message.content), message.isError, false, details.diff)
    table.insert(lines, "")
    return lines
  elseif role == "bashExecution" then
    local lines =
      M.tool_result_lines("$ " .. tostring(message.command or ""), message.output, (message.exitCode or 0) ~= 0)
    table.insert(lines, "")
    return lines
  elseif role == "compactionSummary" or role == "branchSummary" then
    local lines = M.folded(role == "compactionSummary" and "compaction summary" or "branch summary", message.summary)
    table.insert(lines, "")
    return lines
  end
  return {}
end

--- Lines for a stored entry: messages, and compaction / branch summaries (folded).
function M.entry_lines(entry)
  if entry.type == "message" and entry.message then
    return M.message_lines(entry.message)
  elseif entry.type == "compaction" then
    return M.message_lines({ role = "compactionSummary", summary = entry.summary })
  elseif entry.type == "branch_summary" then
    return M.message_lines({ role = "branchSummary", summary = entry.summary })
  end
  return {}
end

return M
