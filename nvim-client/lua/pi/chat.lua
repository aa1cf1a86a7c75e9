-- The chat buffer (:PiChat): the active session's branch, replies streamed from `pi/event`, a prompt
-- area below a marker line, and approvals (`pi/requestApproval`) asked through vim.ui.select.
local M = {}

local api = vim.api

local function pi()
  return require("pi")
end

M.marker = "---- prompt: <CR> (normal) / <C-s> (insert) sends, <C-c> stops ----"
M.keys = { send_normal = "<CR>", send_insert = "<C-s>", stop = "<C-c>" }

local ns = api.nvim_create_namespace("pi_chat")

-- bufnr -> { session = id, mark = extmark id of the marker line, live = row of the reply being
-- streamed or nil, text = its text so far, running = bool }
local chats = {}

local function split(text)
  return vim.split(text or "", "\n", { plain = true })
end

local function block_text(content)
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

local function one_line(text, max)
  text = tostring(text or ""):gsub("%s+", " ")
  if #text > max then
    text = text:sub(1, max - 3) .. "..."
  end
  return text
end

local function tool_line(name, args)
  local shown = type(args) == "table" and (args.command or args.path) or nil
  return string.format("> tool `%s` %s", name or "?", one_line(shown or pi().json_encode(args or {}), 100))
end

--- Markdown lines for one message of the branch (as stored or as sent in a pi/event).
function M.message_lines(message)
  local role = message.role
  if role == "user" then
    return vim.list_extend({ "## You", "" }, vim.list_extend(split(block_text(message.content)), { "" }))
  elseif role == "assistant" then
    local lines = { "## Assistant", "" }
    local text = block_text(message.content)
    if text ~= "" then
      vim.list_extend(lines, split(text))
    end
    for _, block in ipairs(type(message.content) == "table" and message.content or {}) do
      if block.type == "toolCall" then
        table.insert(lines, tool_line(block.name, block.arguments))
      end
    end
    if message.stopReason == "aborted" or message.stopReason == "error" then
      table.insert(lines, "_(" .. message.stopReason .. (message.errorMessage and (": " .. one_line(message.errorMessage, 80)) or "") .. ")_")
    end
    table.insert(lines, "")
    return lines
  elseif role == "toolResult" then
    local first = split(block_text(message.content))[1] or ""
    return { string.format("> %s %s: %s", message.isError and "failed" or "result", message.toolName or "", one_line(first, 100)), "" }
  end
  return {}
end

local function marker_row(buf)
  local pos = api.nvim_buf_get_extmark_by_id(buf, ns, chats[buf].mark, {})
  return pos[1]
end

--- Replace rows [first, last) of the transcript, keeping every window's cursor on the text it was on.
local function replace(buf, first, last, lines)
  local cursors = {}
  for _, win in ipairs(vim.fn.win_findbuf(buf)) do
    cursors[win] = api.nvim_win_get_cursor(win)
  end
  api.nvim_buf_set_lines(buf, first, last, false, lines)
  local shift = #lines - (last - first)
  for win, pos in pairs(cursors) do
    local row = pos[1] - 1
    if row < first then
      api.nvim_win_set_cursor(win, pos)
    elseif row >= last then
      api.nvim_win_set_cursor(win, { pos[1] + shift, pos[2] })
    end
  end
end

--- Append lines to the end of the transcript (just above the marker).
local function append(buf, lines)
  local row = marker_row(buf)
  replace(buf, row, row, lines)
end

local function live_lines(chat)
  local lines = { "## Assistant", "" }
  vim.list_extend(lines, split(chat.text))
  return lines
end

local function update_live(buf)
  local chat = chats[buf]
  local row = marker_row(buf)
  replace(buf, chat.live, row, live_lines(chat))
end

--- Apply one `pi/event` to the chat buffers of its session.
function M.on_event(params)
  local event = params and params.event or {}
  for buf, chat in pairs(chats) do
    if api.nvim_buf_is_valid(buf) and chat.session == params.sessionId then
      local kind = event.type
      if kind == "agent_start" then
        chat.running = true
      elseif kind == "agent_end" then
        chat.running = false
      elseif kind == "message_start" and event.message and event.message.role == "assistant" then
        chat.text = ""
        chat.live = marker_row(buf)
        append(buf, live_lines(chat))
      elseif kind == "message_update" and chat.live then
        local update = event.assistantMessageEvent or {}
        if update.type == "text_delta" then
          chat.text = chat.text .. (update.delta or "")
          update_live(buf)
        end
      elseif kind == "message_end" and event.message then
        if event.message.role == "assistant" and chat.live then
          replace(buf, chat.live, marker_row(buf), M.message_lines(event.message))
          chat.live, chat.text = nil, ""
        elseif event.message.role == "user" or event.message.role == "toolResult" then
          append(buf, M.message_lines(event.message))
        end
      end
    end
  end
end

--- The text typed below the marker; the prompt area is emptied.
local function take_prompt(buf)
  local row = marker_row(buf)
  local lines = api.nvim_buf_get_lines(buf, row + 1, -1, false)
  api.nvim_buf_set_lines(buf, row + 1, -1, false, { "" })
  return vim.trim(table.concat(lines, "\n"))
end

--- Send `text` (default: the prompt area) from the chat buffer `buf`; queued as steering while a
--- run is active.
function M.send(buf, text)
  buf = (buf == nil or buf == 0) and api.nvim_get_current_buf() or buf
  local chat = chats[buf]
  if not chat then
    return
  end
  text = text or take_prompt(buf)
  if text == "" then
    return
  end
  local params = { session = chat.session, text = text }
  if chat.running then
    params.streamingBehavior = "steer"
  end
  chat.running = true
  pi().prompt(params, function(err, result)
    if err then
      chat.running = false
      return pi().notify("pi: prompt: " .. pi().format_error(err), vim.log.levels.ERROR)
    end
    if result and result.queued then
      pi().notify("pi: queued (" .. result.queued .. ")")
    end
  end)
end

--- Abort the run of the chat buffer's session (the active session's elsewhere).
function M.stop(buf)
  buf = (buf == nil or buf == 0) and api.nvim_get_current_buf() or buf
  local session = chats[buf] and chats[buf].session or nil
  pi().abort(session and { session = session } or {}, function(err)
    if err then
      pi().notify("pi: stop: " .. pi().format_error(err), vim.log.levels.ERROR)
    end
  end)
end

local function map_keys(buf)
  local keys = vim.tbl_extend("force", M.keys, pi().config.chat_keys or {})
  local function map(mode, lhs, fn)
    if lhs and lhs ~= "" then
      api.nvim_buf_set_keymap(buf, mode, lhs, "", { noremap = true, silent = true, callback = fn })
    end
  end
  map("n", keys.send_normal, function()
    M.send(buf)
  end)
  map("i", keys.send_insert, function()
    vim.cmd("stopinsert")
    M.send(buf)
  end)
  map("n", keys.stop, function()
    M.stop(buf)
  end)
  map("i", keys.stop, function()
    M.stop(buf)
  end)
end

local function render(buf, session, entries)
  local lines = {}
  for _, entry in ipairs(entries) do
    if entry.type == "message" and entry.message then
      vim.list_extend(lines, M.message_lines(entry.message))
    end
  end
  api.nvim_buf_set_lines(buf, 0, -1, false, vim.list_extend(lines, { M.marker, "" }))
  chats[buf] = chats[buf] or {}
  local chat = chats[buf]
  chat.session, chat.live, chat.text = session, nil, ""
  if chat.mark then
    api.nvim_buf_del_extmark(buf, ns, chat.mark)
  end
  chat.mark = api.nvim_buf_set_extmark(buf, ns, #lines - 2, 0, {})
end

local function show(session_id, then_send)
  pi().get_branch({}, function(err, result)
    if err then
      return pi().notify("pi: chat: " .. pi().format_error(err), vim.log.levels.ERROR)
    end
    local name = "pi://chat/" .. session_id
    local buf = vim.fn.bufnr(name)
    if buf == -1 then
      buf = api.nvim_create_buf(true, true)
      api.nvim_buf_set_name(buf, name)
      api.nvim_buf_set_option(buf, "buftype", "nofile")
      api.nvim_buf_set_option(buf, "swapfile", false)
      api.nvim_buf_set_option(buf, "filetype", "markdown")
      map_keys(buf)
    end
    require("pi.ui").show_buffer(buf, "botright vsplit")
    render(buf, session_id, result.entries or {})
    api.nvim_win_set_cursor(0, { api.nvim_buf_line_count(buf), 0 })
    if then_send and then_send ~= "" then
      M.send(buf, then_send)
    end
  end)
end

--- :PiChat [text]: open the chat of the active session (a new one when none), sending `text`.
function M.open(text)
  local session = pi().state.session
  if session and session.sessionId then
    return show(session.sessionId, text)
  end
  pi().new_session({}, function(err, state)
    if err then
      return pi().notify("pi: chat: " .. pi().format_error(err), vim.log.levels.ERROR)
    end
    show(state.sessionId, text)
  end)
end

--- What the chat buffer `buf` holds: { session, running, live, text }, or nil.
function M.chat(buf)
  return chats[buf]
end

--- The chat buffer of a session, or nil.
function M.buffer(session_id)
  for buf, chat in pairs(chats) do
    if chat.session == session_id and api.nvim_buf_is_valid(buf) then
      return buf
    end
  end
  return nil
end

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
    api.nvim_buf_set_lines(buf, 0, -1, false, split(preview.diff))
    require("pi.ui").show_buffer(buf)
    diff_win = api.nvim_get_current_win()
  end
  local choice, answered = nil, false
  vim.ui.select(M.choices, {
    prompt = one_line(string.format("pi: allow %s %s?", request.toolName or "tool", what), 70),
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
