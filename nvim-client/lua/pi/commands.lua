-- Session commands that ask first or pick: :PiCompact, :PiSystemPrompt, :PiModel, :PiFork,
-- :PiBranch, :PiFollowUp, and :PiOpen's question before creating a session file.
local M = {}

local api = vim.api

local function pi()
  return require("pi")
end

local function info(msg)
  pi().notify("pi: " .. msg, vim.log.levels.INFO)
end

local function fail(what, err)
  pi().notify("pi: " .. what .. ": " .. pi().format_error(err), vim.log.levels.ERROR)
end

--- 12345 -> "12.3k", 200000 -> "200k", 1000000 -> "1M" (nil -> "?").
function M.tokens(n)
  if type(n) ~= "number" then
    return "?"
  end
  if n >= 1000000 then
    local text = string.format("%.1fM", n / 1000000)
    return (text:gsub("%.0M$", "M"))
  end
  if n >= 1000 then
    local text = string.format("%.1fk", n / 1000)
    return (text:gsub("%.0k$", "k"))
  end
  return tostring(math.floor(n))
end

--- Ask a yes/no question through vim.ui.select; `on_yes` runs only for the first answer,
--- `on_no` (if given) for any other.
---@param question string
---@param yes string the first answer's text ("Cancel" is the other)
---@param on_yes fun()
---@param on_no? fun()
function M.confirm(question, yes, on_yes, on_no)
  vim.ui.select({ yes, "Cancel" }, { prompt = pi().short(question) }, function(choice)
    if choice == yes then
      on_yes()
    elseif on_no then
      on_no()
    end
  end)
end
local confirm = M.confirm

-- ---------------------------------------------------------------- :PiCompact

--- One line saying what a compaction would do (from pi/prepareCompaction and the first kept entry).
function M.compaction_question(prep, kept)
  local parts = { string.format("summarise %d messages", prep.summarizeCount or 0) }
  if prep.isSplitTurn and (prep.turnPrefixCount or 0) > 0 then
    table.insert(parts, string.format("+%d of a split turn", prep.turnPrefixCount))
  end
  local keep = "keep the rest"
  if kept and kept ~= "" then
    keep = string.format('keep from "%s"', kept)
  end
  return string.format(
    "pi: compact? %s tokens now; %s, %s%s",
    M.tokens(prep.tokensBefore),
    table.concat(parts, " "),
    keep,
    prep.hasPreviousSummary and ", updating the last summary" or ""
  )
end

local function kept_preview(id, callback)
  if not id then
    return callback(nil)
  end
  pi().get_entry({ id = id }, function(err, result)
    local entry = not err and result and result.entry or {}
    local text = entry.message and require("pi.tree").content_text(entry.message.content) or entry.summary or entry.type
    callback(text and vim.trim(tostring(text):gsub("%s+", " ")):sub(1, 40) or nil)
  end)
end

--- Lines of the compaction preview: the branch's messages, those to be summarised first, then
--- those kept as they are (from the first kept entry on).
---@param prep table the pi/prepareCompaction result
---@param entries table[] the branch (pi/getBranch)
---@return string[]
function M.compaction_preview_lines(prep, entries)
  local render = require("pi.chat_render")
  local lines = { string.format("# Compaction: %s tokens now", M.tokens(prep.tokensBefore)), "", "## Summarised" }
  local kept = false
  for _, entry in ipairs(entries) do
    if entry.id == prep.firstKeptEntryId then
      kept = true
      vim.list_extend(lines, { "", "## Kept as it is" })
    end
    local message = entry.message
    if entry.type == "message" and message then
      local text = require("pi.tree").content_text(message.content) or message.command or ""
      table.insert(lines, string.format("- %s: %s", message.role, render.one_line(tostring(text), 90)))
    elseif entry.type == "compaction" then
      table.insert(lines, "- (the previous summary: " .. render.one_line(tostring(entry.summary or ""), 70) .. ")")
    end
  end
  if not kept then
    vim.list_extend(lines, { "", "## Kept as it is", "- (nothing)" })
  end
  return lines
end

local COMPACT_PREVIEW = "pi://compact"

local function close_window_of(name)
  local buf = vim.fn.bufnr(name)
  for _, win in ipairs(buf ~= -1 and vim.fn.win_findbuf(buf) or {}) do
    if #api.nvim_list_wins() > 1 then
      api.nvim_win_close(win, true)
    end
  end
end

--- :PiCompact [instructions]: show what pi/prepareCompaction would summarise and keep (a preview
--- split and a one-line question), then compact. The statusline says "compacting" meanwhile: no
--- message is added below the question (it would make Neovim wait for Enter).
function M.compact(instructions, callback)
  pi().prepare_compaction({}, function(err, prep)
    if err then
      return fail("compact", err)
    end
    if (prep.summarizeCount or 0) == 0 and (prep.turnPrefixCount or 0) == 0 then
      return info("nothing to compact: every message is within keepRecentTokens")
    end
    kept_preview(prep.firstKeptEntryId, function(kept)
      pi().get_branch({}, function(err_branch, branch)
        if not err_branch then
          local buf = require("pi.ui").scratch(COMPACT_PREVIEW, "markdown")
          require("pi.ui").set_lines(buf, M.compaction_preview_lines(prep, branch.entries or {}))
          vim.cmd("redraw") -- drawn before the stock vim.ui.select blocks
        end
        confirm(M.compaction_question(prep, kept), "Compact", function()
          close_window_of(COMPACT_PREVIEW)
          vim.cmd("redraw")
          local params = {}
          if instructions and instructions ~= "" then
            params.customInstructions = instructions
          end
          pi().compact(params, function(err2, result)
            if err2 then
              return fail("compact", err2)
            end
            info(
              string.format(
                "compacted: %s -> %s tokens (%s)",
                M.tokens(result.tokensBefore),
                M.tokens(result.tokensAfter),
                tostring(result.summarizer or "")
              )
            )
            if callback then
              callback(result)
            end
          end)
        end, function()
          close_window_of(COMPACT_PREVIEW)
        end)
      end)
    end)
  end)
end

-- ---------------------------------------------------------------- :PiSystemPrompt

--- Markdown lines for a pi/getSystemPrompt result: the sources with their tokens, then the text.
function M.system_prompt_lines(result, tokenizer)
  local lines = {
    string.format(
      "# System prompt: %s tokens%s",
      M.tokens(result.tokens),
      tokenizer and (" (" .. tokenizer .. ")") or ""
    ),
    "",
    "## Sources",
    "",
  }
  local sources = result.sources or {}
  if #sources == 0 then
    table.insert(lines, "- (pi's default prompt only)")
  end
  for _, source in ipairs(sources) do
    table.insert(
      lines,
      string.format(
        "- %s `%s`: %s tokens",
        source.kind,
        vim.fn.fnamemodify(source.path, ":~:."),
        M.tokens(source.tokens)
      )
    )
  end
  local skills = result.skills or {}
  if #skills > 0 then
    vim.list_extend(lines, { "", "## Skills", "" })
    for _, skill in ipairs(skills) do
      table.insert(lines, string.format("- `%s`: %s", skill.name, tostring(skill.description or ""):gsub("\n", " ")))
    end
  end
  local diagnostics = result.diagnostics or {}
  if #diagnostics > 0 then
    vim.list_extend(lines, { "", "## Problems", "" })
    for _, d in ipairs(diagnostics) do
      table.insert(lines, string.format("- %s: %s", d.severity or "warning", tostring(d.message or ""):gsub("\n", " ")))
    end
  end
  vim.list_extend(lines, { "", "## Text", "" })
  vim.list_extend(lines, vim.split(result.text or "", "\n", { plain = true }))
  return lines
end

--- :PiSystemPrompt: the active session's system prompt in a scratch buffer.
function M.system_prompt(callback)
  pi().get_system_prompt({}, function(err, result)
    if err then
      return fail("system prompt", err)
    end
    local buf = require("pi.ui").scratch("pi://system-prompt", "markdown")
    vim.keymap.set("n", "q", "<cmd>close<cr>", { buffer = buf, silent = true, desc = "pi: close" })
    local settings = pi().config.settings or {}
    require("pi.ui").set_lines(buf, M.system_prompt_lines(result, settings.tokenizer))
    if callback then
      callback(buf)
    end
  end)
end

-- ---------------------------------------------------------------- :PiModel

M.thinking_levels = require("pi.protocol").enums.thinking_levels

--- :PiModel: pick a model (pi/listModels), then a thinking level; pi/setModel records both.
function M.model(callback)
  pi().list_models({}, function(err, result)
    if err then
      return fail("model", err)
    end
    local current = result.current or {}
    vim.ui.select(result.models or {}, {
      prompt = "pi model (now " .. tostring(current.modelId) .. ")",
      format_item = function(m)
        return string.format(
          "%s  %s  (%s context%s)",
          m.id,
          m.name or "",
          M.tokens(m.contextWindow),
          m.reasoning and ", thinking" or ""
        )
      end,
    }, function(model)
      if not model then
        return
      end
      local levels = model.reasoning and M.thinking_levels or { "off" }
      vim.ui.select(
        levels,
        { prompt = "pi thinking level (now " .. tostring(current.thinkingLevel) .. ")" },
        function(level)
          if not level then
            return
          end
          pi().set_model({ modelId = model.id, thinkingLevel = level }, function(err2, set)
            if err2 then
              return fail("model", err2)
            end
            info(
              string.format(
                "model %s, thinking %s",
                set.model and set.model.modelId or model.id,
                set.thinkingLevel or level
              )
            )
            require("pi.status").refresh()
            if callback then
              callback(set)
            end
          end)
        end
      )
    end)
  end)
end

-- ---------------------------------------------------------------- :PiFork, :PiBranch

--- :PiFork: a new session file holding a copy of every branch of the active session.
function M.fork(callback)
  pi().get_session_state({}, function(err, state)
    if err then
      return fail("fork", err)
    end
    if not state.file or vim.fn.filereadable(state.file) == 0 then
      return pi().notify(
        "pi: fork: the session has no file yet (it is written with the first reply)",
        vim.log.levels.WARN
      )
    end
    pi().fork_session({ sourcePath = state.file }, function(err2, result)
      require("pi.ui").report("forked to")(err2, result)
      if not err2 and callback then
        callback(result)
      end
    end)
  end)
end

--- The entry `id`, else the entry under the cursor in :PiTree or a chat, else nil.
---@param id? string
---@return string?
function M.entry_here(id)
  if id and id ~= "" then
    return id
  end
  local tree_id = require("pi.ui").tree_id_under_cursor()
  if tree_id then
    return tree_id
  end
  local buf = api.nvim_get_current_buf()
  local entry = require("pi.chat").entry_at(buf, api.nvim_win_get_cursor(0)[1] - 1)
  return entry and entry.id or nil
end

--- :PiBranch [id]: a new session holding the path root -> the entry (under the cursor, else the leaf).
function M.branch(id, callback)
  local function from(entry_id)
    if not entry_id then
      return pi().notify("pi: branch: the session is empty", vim.log.levels.WARN)
    end
    pi().branch_to_new_session({ entryId = entry_id }, function(err, result)
      require("pi.ui").report("branched to")(err, result)
      if not err and callback then
        callback(result)
      end
    end)
  end
  local here = M.entry_here(id)
  if here then
    return from(here)
  end
  pi().get_session_state({}, function(err, state)
    if err then
      return fail("branch", err)
    end
    from(state.leafId)
  end)
end

-- ---------------------------------------------------------------- :PiOpen

--- :PiOpen {path}: open a session file; a path that does not exist is created only after asking.
function M.open(path, callback)
  local full = vim.fn.fnamemodify(vim.fn.expand(path), ":p")
  local function go()
    pi().open_session({ path = full }, callback)
  end
  if vim.loop.fs_stat(full) then
    return go()
  end
  confirm("pi: no such file; start a new session there? " .. vim.fn.fnamemodify(full, ":~:."), "Create", go)
end

return M
