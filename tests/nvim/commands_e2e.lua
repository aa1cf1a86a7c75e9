-- For tests/nvim/test_nvim_commands.py: every command of the plugin against the real server and a
-- fake model. Config: a JSON file named by $PI_NVIM_TEST_CONFIG with { cmd, settings, out }.
-- Writes what it saw to `out` (also when a step fails: `error` names it).
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":h") .. "/harness.lua")
local cfg, out, finish, decode, encode = H.cfg, H.out, H.finish, H.decode, H.encode
out.steps = {}

-- vim.ui.select answers by what is asked: `answers` maps a prompt pattern to a function(items).
local answers = {}
vim.ui.select = function(items, opts, on_choice)
  local prompt = opts.prompt or ""
  local shown = {}
  for i, item in ipairs(items) do
    shown[i] = opts.format_item and opts.format_item(item) or item
  end
  table.insert(out.asked, { prompt = prompt, items = shown })
  for pattern, pick in pairs(answers) do
    if prompt:find(pattern, 1, true) then
      local choice = pick(items)
      vim.defer_fn(function() on_choice(choice) end, 10)
      return
    end
  end
  vim.defer_fn(function() on_choice(nil) end, 10)
end

local lines, text, wait_for = H.lines, H.text, H.wait_for
local function said(pattern)
  for _, m in ipairs(out.messages) do
    if m:find(pattern, 1, true) then
      return m
    end
  end
  return nil
end
local function row_of(buf, pattern, plain)
  for i, line in ipairs(lines(buf)) do
    if line:find(pattern, 1, plain ~= false) then
      return i
    end
  end
  return nil
end
local function feed(keys)
  vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes(keys, true, false, true), "x", false)
end
local function step(name, fn)
  out.current = name
  fn()
  table.insert(out.steps, name)
end

local ok, err = pcall(function()
  local pi = require("pi")
  local chat = require("pi.chat")
  pi.setup({ cmd = cfg.cmd, autostart = false, settings = cfg.settings, chat_keys = { prev_message = "[m" } })
  local buf

  local function run_ended()
    return not chat.chat(buf).running
  end

  step("chat", function()
    vim.cmd("PiChat hello")
    wait_for("the first reply", function() return text():find("Bye.", 1, true) ~= nil end)
    buf = vim.api.nvim_get_current_buf()
    wait_for("the run to end", run_ended)
    local row = row_of(buf, "┆ thinking")
    out.thinking_folded = row ~= nil and vim.fn.foldclosed(row) == row
    out.thinking_fold_end = row and vim.fn.foldclosedend(row) or vim.NIL
    out.first = lines(buf)
  end)

  step("bash", function()
    chat.send(buf, "run it")
    wait_for("the bash output to start", function() return row_of(buf, "> running bash: one") ~= nil end)
    out.live_seen = row_of(buf, "┆ two") == nil -- "one" printed, "two" not yet
    wait_for("the reply after bash", function() return text():find("Ran it.", 1, true) ~= nil end)
    wait_for("the run to end", run_ended)
    local row = row_of(buf, "> result bash: one")
    out.output_folded = row ~= nil and vim.fn.foldclosed(row + 1) == row + 1
    out.output_fold_lines = row and vim.api.nvim_buf_get_lines(buf, row, vim.fn.foldclosedend(row + 1), false) or {}
    out.running_left = row_of(buf, "> running") ~= nil
    wait_for("the statusline", function() return pi.statusline():find("/", 1, true) ~= nil end, 5000)
    out.statusline = pi.statusline()
  end)

  step("user_bash", function()
    chat.send(buf, "!echo typed-by-me")
    wait_for("the user's command", function() return row_of(buf, "> result $ echo typed-by-me: typed-by-me") ~= nil end)
  end)

  step("retry", function()
    chat.send(buf, "retry please")
    wait_for("the retried reply", function() return text():find("After retry.", 1, true) ~= nil end)
    wait_for("the run to end", run_ended)
    out.retry_message = said("pi: retry 1/") or vim.NIL
  end)

  step("compact", function()
    answers["pi: compact?"] = function(items)
      out.compact_preview = lines(vim.fn.bufnr("pi://compact")) -- on the screen while asked
      return items[1]
    end
    local before = #out.messages
    vim.cmd("PiCompact keep the bash part")
    wait_for("the compaction", function() return said("pi: compacted:") ~= nil end)
    out.compact_question = out.asked[#out.asked].prompt
    out.compact_items = out.asked[#out.asked].items
    out.compacted = said("pi: compacted:")
    out.compact_messages = vim.list_slice(out.messages, before + 1)
  end)

  step("follow_up", function()
    vim.api.nvim_set_current_win(vim.fn.bufwinid(buf))
    chat.send(buf, "slow one")
    wait_for("the slow reply to start", function() return (chat.chat(buf).text or ""):find("Slow", 1, true) ~= nil end)
    vim.cmd("PiFollowUp and then this")
    wait_for("the follow-up answer", function() return text():find("Follow-up answered.", 1, true) ~= nil end)
    wait_for("the run to end", run_ended)
    wait_for("the automatic compaction", function() return said("pi: compacted (threshold)") ~= nil end)
    out.queued_message = said("pi: queued as follow-up") or vim.NIL
    out.auto_started = said("pi: compacting the session (threshold)") or vim.NIL
    out.auto_ended = said("pi: compacted (threshold)")
    wait_for("the statusline after compaction", function() return pi.statusline():find("?", 1, true) ~= nil end, 5000)
    out.statusline_after_compaction = pi.statusline()
  end)

  step("jump_and_yank", function()
    vim.api.nvim_win_set_cursor(0, { 1, 0 })
    feed("]]")
    out.jump_next = vim.api.nvim_get_current_line()
    out.jump_next_row = vim.api.nvim_win_get_cursor(0)[1]
    feed("]]")
    feed("[m") -- prev_message, set to [m in setup()
    out.jump_back_row = vim.api.nvim_win_get_cursor(0)[1]
    local code = row_of(buf, "print('hi')")
    vim.api.nvim_win_set_cursor(0, { code, 0 })
    vim.fn.setreg('"', "nothing")
    feed("gy")
    out.yanked = vim.fn.getreg('"')
  end)

  local session_file = pi.state.session.file
  out.session_file = session_file

  step("tree", function()
    assert(pi.sync.set_session_name("tree test"))
    vim.cmd("PiTree")
    local tree_buf
    wait_for("the tree", function()
      tree_buf = vim.fn.bufnr("pi://tree")
      return tree_buf ~= -1 and text(tree_buf):find("tree test", 1, true) == nil and vim.api.nvim_buf_line_count(tree_buf) > 3
    end)
    out.tree_default = lines(tree_buf)
    feed("a")
    wait_for("all entries", function() return text(tree_buf):find("session_info: tree test", 1, true) ~= nil end)
    out.tree_all = lines(tree_buf)
    feed("a")
    wait_for("the default filter again", function() return text(tree_buf):find("session_info", 1, true) == nil end)
    -- another program (pi in a terminal) appends a branch under the first reply of the session file
    local first_reply
    for line in io.lines(session_file) do
      local entry = decode(line)
      if entry.type == "message" and entry.message.role == "assistant" then
        first_reply = first_reply or entry.id
      end
    end
    local f = assert(io.open(session_file, "a"))
    f:write(encode({
      type = "message", id = "e0e0e0e0", parentId = first_reply, timestamp = "2026-01-01T00:00:00.000Z",
      message = { role = "user", content = { { type = "text", text = "branch from elsewhere" } }, timestamp = 1767225600000 },
    }) .. "\n")
    -- a reply that only calls a tool, and the tool's result: pi's tree leaves the reply out
    f:write(encode({
      type = "message", id = "e1e1e1e1", parentId = "e0e0e0e0", timestamp = "2026-01-01T00:00:01.000Z",
      message = { role = "assistant", content = { { type = "toolCall", id = "t9", name = "grep", arguments = {} } },
        stopReason = "toolUse", timestamp = 1767225601000 },
    }) .. "\n")
    f:write(encode({
      type = "message", id = "e2e2e2e2", parentId = "e1e1e1e1", timestamp = "2026-01-01T00:00:02.000Z",
      message = { role = "toolResult", toolCallId = "t9", toolName = "grep", content = { { type = "text", text = "found 3 matches" } },
        isError = false, timestamp = 1767225602000 },
    }) .. "\n")
    f:close()
    wait_for("the tree to show the other branch", function()
      return text(tree_buf):find("found 3 matches", 1, true) ~= nil
    end, 10000)
    out.tree_external = lines(tree_buf)
    -- S on the external message: navigate there, summarising the branch left
    vim.api.nvim_set_current_win(vim.fn.bufwinid(tree_buf))
    vim.api.nvim_win_set_cursor(0, { row_of(tree_buf, "branch from elsewhere"), 0 })
    feed("S")
    wait_for("the branch summary", function() return text(tree_buf):find("branch_summary", 1, true) ~= nil end)
    out.tree_summary = lines(tree_buf)
    vim.cmd("close")
    -- the chat followed: the branch up to the first reply, the summary, the message to edit
    wait_for("the chat to follow the navigation", function()
      local l = lines(buf)
      return text(buf):find("┆ branch summary", 1, true) ~= nil and l[#l] == "branch from elsewhere"
    end)
    out.chat_after_navigate = lines(buf)
  end)

  step("edit_resend", function()
    vim.api.nvim_set_current_win(vim.fn.bufwinid(buf))
    vim.api.nvim_win_set_cursor(0, { row_of(buf, "^hello$", false), 0 })
    feed("\\e")
    wait_for("the message back in the prompt", function()
      local l = lines(buf)
      return l[#l] == "hello" and l[#l - 1] == chat.marker
    end)
    out.after_edit = lines(buf)
    local last = vim.api.nvim_buf_line_count(buf)
    vim.api.nvim_buf_set_lines(buf, last - 1, last, false, { "hello again" })
    feed("<CR>")
    wait_for("the new branch's reply", function() return text(buf):find("Second branch.", 1, true) ~= nil end)
    wait_for("the run to end", run_ended)
    out.edited = lines(buf)
  end)

  step("fork_here", function()
    local main_session = pi.state.session.sessionId
    vim.api.nvim_win_set_cursor(0, { row_of(buf, "Second branch."), 0 })
    feed("\\f")
    wait_for("the forked chat", function()
      return pi.state.session.sessionId ~= main_session and vim.api.nvim_get_current_buf() ~= buf
    end)
    out.fork_chat = lines(0)
    out.fork_session = pi.state.session.sessionId
    out.main_session = main_session
  end)

  step("model", function()
    answers["pi model"] = function(items)
      for _, m in ipairs(items) do
        if m.id == "claude-sonnet-4-5" then
          return m
        end
      end
    end
    answers["pi thinking level"] = function(items) return "low" end
    vim.cmd("PiModel")
    wait_for("the model", function() return said("pi: model ") ~= nil end)
    out.model_message = said("pi: model ")
  end)

  step("system_prompt", function()
    vim.cmd("PiSystemPrompt")
    wait_for("the system prompt", function() return vim.fn.bufnr("pi://system-prompt") ~= -1 end)
    out.system_prompt = lines(vim.fn.bufnr("pi://system-prompt"))
    vim.cmd("close")
  end)

  step("fork_and_branch", function()
    vim.cmd("PiFork")
    wait_for("the fork", function() return said("pi: forked to") ~= nil end)
    out.forked = said("pi: forked to")
    vim.cmd("PiBranch")
    wait_for("the branch", function() return said("pi: branched to") ~= nil end)
    out.branched = said("pi: branched to")
  end)

  step("open", function()
    local path = cfg.new_session_path
    answers["no such file"] = function(items) return "Cancel" end
    local active = pi.state.session.sessionId
    vim.cmd("PiOpen " .. path)
    wait_for("the question", function() return #out.asked > 0 and out.asked[#out.asked].prompt:find("no such file", 1, true) end)
    vim.wait(300)
    out.cancel_kept_session = pi.state.session.sessionId == active
    answers["no such file"] = function(items) return items[1] end
    vim.cmd("PiOpen " .. path)
    wait_for("the new session", function() return pi.state.session.file == path end)
    out.open_question = out.asked[#out.asked].prompt
    out.open_items = out.asked[#out.asked].items
  end)

  step("checkhealth", function()
    vim.cmd("checkhealth pi")
    out.health = lines(0)
  end)
end)
if not ok then
  out.error = tostring(err)
end
out.statusline_final = require("pi").statusline()
finish()
