-- The chat buffer (:PiChat): the active session's branch, replies streamed from `pi/event` (thinking
-- and tool output folded, bash output live), a prompt area below a marker line, and approvals
-- (pi.approval) asked through vim.ui.select. How messages are drawn is in pi.chat_render, the actions
-- on the message under the cursor in pi.chat_actions.
local M = {}

local api = vim.api

local function pi()
  return require("pi")
end

M.marker = "---- prompt: <CR> (normal) / <C-s> (insert) sends, <C-c> stops ----"
M.keys = {
  send_normal = "<CR>",
  send_insert = "<C-s>",
  stop = "<C-c>",
  follow_up = "g<CR>", -- queue as a follow-up (delivered when the agent would stop)
  next_message = "]]",
  prev_message = "[[",
  yank_code = "gy",
  edit_resend = "<LocalLeader>e",
  branch_here = "<LocalLeader>b",
  fork_here = "<LocalLeader>f",
  rewind = "<LocalLeader>r", -- the files back to this message's state (preview first)
  help = "?", -- the keys of the chat
}

local FOLD_EXPR = "getline(v:lnum)=~'^┆'?(getline(v:lnum-1)=~'^┆'?1:'>1'):0"

local ns = api.nvim_create_namespace("pi_chat")
local queue_ns = api.nvim_create_namespace("pi_chat_queue")

-- bufnr -> { session, mark (marker line), live (row of the reply being streamed), text, thinking,
-- running, in_flight (our pi/prompt is unanswered), tools = { [toolCallId] = { mark, count } },
-- entries = { [extmark id] = {id, role} } }
local chats = {}

local chat_render = require("pi.chat_render")
local split, folded, block_text = chat_render.split, chat_render.folded, chat_render.block_text
local tool_result_lines, entry_lines = chat_render.tool_result_lines, chat_render.entry_lines
M.message_lines = chat_render.message_lines
M.fold_prefix = chat_render.fold_prefix

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

--- Remember that the message starting at `row` is the entry `id` (for the actions on it).
local function mark_entry(buf, row, id, role)
  if id then
    local mark = api.nvim_buf_set_extmark(buf, ns, row, 0, {})
    chats[buf].entries[mark] = { id = id, role = role }
  end
end

--- Append lines to the end of the transcript (just above the marker); returns their first row.
local function append(buf, lines)
  local row = marker_row(buf)
  replace(buf, row, row, lines)
  return row
end

local function live_lines(chat)
  local lines = { "## Assistant", "" }
  if chat.thinking ~= "" then
    vim.list_extend(lines, folded("thinking", chat.thinking))
  end
  vim.list_extend(lines, split(chat.text))
  return lines
end

local function update_live(buf)
  local chat = chats[buf]
  replace(buf, chat.live, marker_row(buf), live_lines(chat))
end

--- Replace the lines of a running tool's block (its mark is put back on its first row).
local function set_tool_block(buf, tool, lines)
  local row = api.nvim_buf_get_extmark_by_id(buf, ns, tool.mark, {})[1]
  replace(buf, row, row + tool.count, lines)
  api.nvim_buf_set_extmark(buf, ns, row, 0, { id = tool.mark })
  tool.count = #lines
  return row
end

local function tool_output(result)
  return block_text(type(result) == "table" and result.content or nil)
end

local function on_tool_event(buf, chat, event)
  local id = event.toolCallId
  if not id then
    return
  end
  local kind = event.type
  if kind == "tool_execution_start" then
    local lines = tool_result_lines(event.toolName, "", false, true)
    local row = append(buf, lines)
    chat.tools[id] = { mark = api.nvim_buf_set_extmark(buf, ns, row, 0, {}), count = #lines }
  elseif kind == "tool_execution_update" and chat.tools[id] then
    set_tool_block(
      buf,
      chat.tools[id],
      tool_result_lines(event.toolName, tool_output(event.partialResult), false, true)
    )
  end
end

--- A tool result message: it takes the place of its running block (else it is appended).
local function on_tool_result(buf, chat, message, entry_id)
  local lines = M.message_lines(message)
  local tool = message.toolCallId and chat.tools[message.toolCallId]
  local row
  if tool then
    row = set_tool_block(buf, tool, lines)
    api.nvim_buf_del_extmark(buf, ns, tool.mark)
    chat.tools[message.toolCallId] = nil
  else
    row = append(buf, lines)
  end
  mark_entry(buf, row, entry_id, "toolResult")
end

--- The queued messages (`queue_update`), as virtual lines above the marker: a queued message is
--- sent later (after the current tool batch, or when the agent would stop; after :PiStop, with the
--- next prompt), so it must stay in sight until it is delivered or taken back (:PiQueue).
local function draw_queue(buf, chat)
  api.nvim_buf_clear_namespace(buf, queue_ns, 0, -1)
  local queue = chat.queue or {}
  local lines = {}
  for _, kind in ipairs({ { "steering", "steering" }, { "followUp", "follow-up" } }) do
    for _, text in ipairs(queue[kind[1]] or {}) do
      table.insert(lines, { { string.format("queued (%s): %s", kind[2], chat_render.one_line(text, 100)), "Comment" } })
    end
  end
  if #lines > 0 then
    table.insert(lines, { { ":PiQueue takes them back into the prompt", "Comment" } })
    api.nvim_buf_set_extmark(buf, queue_ns, marker_row(buf), 0, { virt_lines = lines, virt_lines_above = true })
  end
end

--- The number of messages queued in the chat `chat`.
local function queued_count(chat)
  local queue = chat.queue or {}
  return #(queue.steering or {}) + #(queue.followUp or {})
end

local function apply(buf, chat, params)
  local event = params.event or {}
  local kind = event.type
  if kind == "agent_start" then
    chat.running = true
    M.draw_header(buf)
  elseif kind == "agent_end" then
    -- a retry or a follow-up may start another loop: a run of ours ends with its pi/prompt answer
    chat.running = chat.in_flight == true
    M.draw_header(buf)
  elseif kind == "message_start" and event.message and event.message.role == "assistant" then
    chat.text, chat.thinking = "", ""
    chat.live = marker_row(buf)
    append(buf, live_lines(chat))
  elseif kind == "message_update" and chat.live then
    local update = event.assistantMessageEvent or {}
    if update.type == "text_delta" then
      chat.text = chat.text .. (update.delta or "")
      update_live(buf)
    elseif update.type == "thinking_delta" then
      chat.thinking = chat.thinking .. (update.delta or "")
      update_live(buf)
    end
  elseif kind == "message_end" and event.message then
    local role = event.message.role
    if role == "assistant" and chat.live then
      local row = chat.live
      replace(buf, row, marker_row(buf), M.message_lines(event.message))
      mark_entry(buf, row, event.entryId, role)
      chat.live, chat.text, chat.thinking = nil, "", ""
    elseif role == "toolResult" then
      on_tool_result(buf, chat, event.message, event.entryId)
    elseif role == "user" and chat.echo and api.nvim_buf_get_extmark_by_id(buf, ns, chat.echo.mark, {})[1] then
      -- the message echoed by send(): it is now stored
      local row = api.nvim_buf_get_extmark_by_id(buf, ns, chat.echo.mark, {})[1]
      replace(buf, row, row + chat.echo.count, M.message_lines(event.message))
      api.nvim_buf_del_extmark(buf, ns, chat.echo.mark)
      chat.echo = nil
      mark_entry(buf, row, event.entryId, role)
    elseif role == "user" or role == "bashExecution" then
      mark_entry(buf, append(buf, M.message_lines(event.message)), event.entryId, role)
    end
    if role == "assistant" and event.message.model then
      chat.model = event.message.model
      M.draw_header(buf)
    end
  elseif kind == "queue_update" then
    chat.queue = { steering = event.steering or {}, followUp = event.followUp or {} }
    draw_queue(buf, chat)
  elseif kind:match("^tool_execution_") then
    on_tool_event(buf, chat, event)
  end
end

--- Apply one `pi/event` to the chat buffers of its session.
function M.on_event(params)
  if type(params) ~= "table" or type(params.event) ~= "table" or type(params.event.type) ~= "string" then
    return
  end
  for buf, chat in pairs(chats) do
    if api.nvim_buf_is_valid(buf) and chat.session == params.sessionId then
      apply(buf, chat, params)
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

--- Put `text` in the prompt area of `buf` (for editing before it is sent again).
function M.set_prompt(buf, text)
  local row = marker_row(buf)
  api.nvim_buf_set_lines(buf, row + 1, -1, false, split(text))
end

--- `!cmd` / `!!cmd` typed in the prompt: the user's own command (pi/bash), stored as pi stores it
--- (`!!`: left out of the context). During a run the server stores it when the run ends.
local function run_bash(buf, chat, bang, command)
  pi().bash({ session = chat.session, command = command, excludeFromContext = bang == "!!" }, function(err, result)
    if err then
      return pi().notify("pi: bash: " .. pi().format_error(err), vim.log.levels.ERROR)
    end
    if chat.running or not api.nvim_buf_is_valid(buf) then
      return pi().notify(
        string.format("pi: $ %s: exit %s (stored when the run ends)", command, tostring(result.exitCode))
      )
    end
    local message = { role = "bashExecution", command = command, output = result.output, exitCode = result.exitCode }
    mark_entry(buf, append(buf, M.message_lines(message)), result.entryId, "bashExecution")
  end)
end

--- A prompt the server refused (no API key, unknown model, busy): the error goes into the
--- transcript whole (a notification is cut to one line) and the text back into the prompt area,
--- above anything typed since, so nothing is lost.
local function prompt_failed(buf, text, err)
  local message = pi().format_error(err)
  pi().notify("pi: prompt: " .. message, vim.log.levels.ERROR)
  if not api.nvim_buf_is_valid(buf) or not chats[buf] then
    return
  end
  append(buf, vim.list_extend(vim.list_extend({ "## Error", "" }, split(message)), { "" }))
  local typed = vim.trim(table.concat(api.nvim_buf_get_lines(buf, marker_row(buf) + 1, -1, false), "\n"))
  M.set_prompt(buf, typed == "" and text or (text .. "\n\n" .. typed))
end

--- Send `text` (default: the prompt area) from the chat buffer `buf`. While a run is active it is
--- queued: as steering, or as a follow-up when `behavior` is "followUp". `!cmd` runs a command.
function M.send(buf, text, behavior)
  buf = (buf == nil or buf == 0) and api.nvim_get_current_buf() or buf
  local chat = chats[buf]
  if not chat then
    return
  end
  text = text or take_prompt(buf)
  if text == "" then
    return
  end
  local bang, command = text:match("^(!!?)(.*)$")
  if bang and vim.trim(command) ~= "" then
    return run_bash(buf, chat, bang, vim.trim(command))
  end
  local builtin = require("pi.chat_complete").builtin(text)
  if builtin then
    return builtin()
  end
  text = require("pi.chat_complete").expand(text)
  local params = { session = chat.session, text = text }
  local starts = not (chat.running or chat.in_flight)
  if not starts then
    params.streamingBehavior = behavior or "steer"
  else -- shown at once (a cold server answers after seconds); replaced by the stored message
    local lines = M.message_lines({ role = "user", content = text })
    local row = append(buf, lines)
    chat.echo = { mark = api.nvim_buf_set_extmark(buf, ns, row, 0, {}), count = #lines, lines = lines }
  end
  chat.running = true
  chat.in_flight = chat.in_flight or starts
  M.draw_header(buf)
  pi().prompt(params, function(err, result)
    if starts then -- the answer to the prompt that started the run comes when the run is over
      chat.in_flight, chat.running = false, false
      if api.nvim_buf_is_valid(buf) then
        local echo = chat.echo
        chat.echo = nil
        local row = echo and api.nvim_buf_get_extmark_by_id(buf, ns, echo.mark, {})[1]
        if row then -- never stored (the prompt was refused): the text goes back to the prompt area
          replace(buf, row, row + echo.count, {})
        end
        M.draw_header(buf)
      end
    end
    if err then
      return prompt_failed(buf, text, err)
    end
    if result and result.queued then
      local what = params.streamingBehavior == "followUp" and "follow-up" or "steering"
      pi().notify(string.format("pi: queued as %s (%s)", what, tostring(result.queued)))
    end
  end)
end

--- Abort the run of the chat buffer's session (the active session's elsewhere).
function M.stop(buf)
  buf = (buf == nil or buf == 0) and api.nvim_get_current_buf() or buf
  local chat = chats[buf]
  local session = chat and chat.session or nil
  pi().abort(session and { session = session } or {}, function(err)
    if err then
      return pi().notify("pi: stop: " .. pi().format_error(err), vim.log.levels.ERROR)
    end
    local count = chat and queued_count(chat) or 0
    if count > 0 then -- they stay queued (as in pi) and would go out after the next prompt
      pi().notify(
        string.format("pi: %d queued message(s) go with the next prompt; :PiQueue takes them back", count),
        vim.log.levels.WARN
      )
    end
  end)
end

--- The keys of the chat buffer: M.keys with setup()'s `chat_keys` over them.
function M.key_map()
  return vim.tbl_extend("force", M.keys, pi().config.chat_keys or {})
end

local function map_keys(buf)
  local keys = M.key_map()
  local actions = require("pi.chat_actions")
  local function map(mode, lhs, fn, desc)
    if lhs and lhs ~= "" then
      api.nvim_buf_set_keymap(buf, mode, lhs, "", { noremap = true, silent = true, callback = fn, desc = desc })
    end
  end
  map("n", keys.send_normal, function()
    M.send(buf)
  end, "pi: send (steer while a run is active)")
  map("i", keys.send_insert, function()
    -- stays in insert mode on the emptied prompt line, so the next letter typed starts the next message
    M.send(buf)
    api.nvim_win_set_cursor(0, { marker_row(buf) + 2, 0 })
  end, "pi: send (stays in insert mode)")
  map("n", keys.follow_up, function()
    M.send(buf, nil, "followUp")
  end, "pi: send, queued as a follow-up while a run is active")
  for _, mode in ipairs({ "n", "i" }) do
    map(mode, keys.stop, function()
      M.stop(buf)
    end, "pi: stop the run")
  end
  map("n", keys.next_message, function()
    actions.jump(1)
  end, "pi: next message")
  map("n", keys.prev_message, function()
    actions.jump(-1)
  end, "pi: previous message")
  map("n", keys.yank_code, actions.yank_code, "pi: yank the code block under the cursor")
  map("n", keys.edit_resend, actions.edit_resend, "pi: edit and resend the message under the cursor")
  map("n", keys.branch_here, actions.branch_here, "pi: continue from the message under the cursor")
  map("n", keys.fork_here, actions.fork_here, "pi: new session from the message under the cursor")
  map("n", keys.help, function()
    require("pi.ui").show_keys("pi chat keys", buf)
  end, "pi: the keys of this buffer")
  require("pi.chat_complete").attach(buf)
  map("n", keys.rewind, function()
    local entry = M.entry_at(buf, api.nvim_win_get_cursor(0)[1] - 1)
    require("pi.rewind").rewind(entry and entry.id or nil, false)
  end, "pi: rewind the files to the message under the cursor (preview first)")
end

--- Fold thinking and tool output in every window showing a chat buffer.
local function fold_window(win)
  api.nvim_win_set_option(win, "foldmethod", "expr")
  api.nvim_win_set_option(win, "foldexpr", FOLD_EXPR)
  api.nvim_win_set_option(win, "foldlevel", 0)
  api.nvim_win_set_option(win, "foldenable", true)
  api.nvim_win_set_option(win, "wrap", true)
  api.nvim_win_set_option(win, "linebreak", true) -- long lines wrap between words
end

--- After the whole transcript was drawn again: folds recomputed (zX), and the window showing the
--- end of the transcript with the cursor in the prompt area (never scrolled past the end).
local function settle(buf)
  for _, win in ipairs(vim.fn.win_findbuf(buf)) do
    api.nvim_win_call(win, function()
      vim.cmd("normal! zX")
      api.nvim_win_set_cursor(win, { api.nvim_buf_line_count(buf), 0 })
      vim.cmd("normal! zb")
    end)
  end
end

--- The chat's header, in the winbar (the statusline on 0.7): the session, the model of the last
--- reply (else the configured one) and "working..." while a run is on.
function M.draw_header(buf)
  local chat = chats[buf]
  if not chat then
    return
  end
  local session = pi().state.session
  local name = session and session.sessionId == chat.session and session.name or nil
  local model = chat.model or (pi().config.settings or {}).model or "default model"
  local text =
    string.format("pi chat %s | %s%s", name or chat.session:sub(1, 8), model, chat.running and " | working..." or "")
  local option = vim.fn.has("nvim-0.8") == 1 and "winbar" or "statusline"
  for _, win in ipairs(vim.fn.win_findbuf(buf)) do
    api.nvim_win_set_option(win, option, (text:gsub("%%", "%%%%")))
  end
  pcall(vim.cmd, "redrawstatus")
end

local function render(buf, session, entries)
  chats[buf] = chats[buf] or {}
  local chat = chats[buf]
  api.nvim_buf_clear_namespace(buf, ns, 0, -1)
  local lines, starts = {}, {}
  for _, entry in ipairs(entries) do
    if entry.type == "message" and entry.message and entry.message.role == "assistant" and entry.message.model then
      chat.model = entry.message.model
    end
    local shown = entry_lines(entry)
    if #shown > 0 then
      table.insert(starts, { row = #lines, id = entry.id, role = entry.message and entry.message.role or entry.type })
      vim.list_extend(lines, shown)
    end
  end
  api.nvim_buf_set_lines(buf, 0, -1, false, vim.list_extend(lines, { M.marker, "" }))
  chat.session, chat.live, chat.text, chat.thinking = session, nil, "", ""
  chat.tools, chat.entries = {}, {}
  chat.mark = api.nvim_buf_set_extmark(buf, ns, #lines - 2, 0, {})
  for _, start in ipairs(starts) do
    mark_entry(buf, start.row, start.id, start.role)
  end
  if chat.echo then -- a message sent but not stored yet stays in sight (a redraw cleared its mark)
    chat.echo.mark = api.nvim_buf_set_extmark(buf, ns, append(buf, chat.echo.lines), 0, {})
  end
  draw_queue(buf, chat)
end

--- Draw the branch of the chat's session again (after a navigation moved its leaf).
function M.refresh(buf, callback)
  local chat = chats[buf]
  if not chat then
    return
  end
  pi().get_branch({ session = chat.session }, function(err, result)
    if err then
      return pi().notify("pi: chat: " .. pi().format_error(err), vim.log.levels.ERROR)
    end
    if api.nvim_buf_is_valid(buf) then
      local prompt = api.nvim_buf_get_lines(buf, marker_row(buf) + 1, -1, false)
      render(buf, chat.session, result.entries or {})
      api.nvim_buf_set_lines(buf, marker_row(buf) + 1, -1, false, prompt)
      settle(buf)
    end
    if callback then
      callback()
    end
  end)
end

--- Show the chat buffer `buf`: in its window, else in the window of another chat (a fork or a
--- new session replaces the chat shown), else in a new split on the right.
function M.show_chat_window(buf)
  if vim.fn.bufwinid(buf) == -1 then
    for _, win in ipairs(api.nvim_tabpage_list_wins(0)) do
      local shown = api.nvim_win_get_buf(win)
      if chats[shown] or shown == M.placeholder then
        api.nvim_win_set_buf(win, buf)
        break
      end
    end
  end
  require("pi.ui").show_buffer(buf, "botright vsplit")
end

local function show(session_id, then_send, callback)
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
      api.nvim_create_autocmd("BufWinEnter", {
        buffer = buf,
        callback = function()
          fold_window(api.nvim_get_current_win())
        end,
      })
    end
    M.show_chat_window(buf)
    fold_window(api.nvim_get_current_win())
    render(buf, session_id, result.entries or {})
    settle(buf)
    M.draw_header(buf)
    if then_send and then_send ~= "" then
      M.send(buf, then_send)
    end
    if callback then
      callback(buf)
    end
  end)
end

--- :PiChat [text]: open the chat of the active session (a new one when none), sending `text`.
--- `callback(buf)` runs once the buffer is drawn.
function M.open(text, callback)
  local session = pi().state.session
  if session and session.sessionId then
    return show(session.sessionId, text, callback)
  end
  -- the server may take seconds to start: show the message (and that it is starting) at once
  local placeholder = api.nvim_create_buf(false, true)
  api.nvim_buf_set_option(placeholder, "bufhidden", "wipe")
  api.nvim_buf_set_option(placeholder, "filetype", "markdown")
  local lines = (text and text ~= "") and M.message_lines({ role = "user", content = text }) or {}
  table.insert(lines, "_starting pi-lsp..._")
  api.nvim_buf_set_lines(placeholder, 0, -1, false, lines)
  M.placeholder = placeholder
  require("pi.ui").show_buffer(placeholder, "botright vsplit")
  api.nvim_win_set_option(0, vim.fn.has("nvim-0.8") == 1 and "winbar" or "statusline", "pi chat | working...")
  vim.cmd("redraw")
  pi().new_session({}, function(err, state)
    if err then
      if api.nvim_buf_is_valid(placeholder) then
        api.nvim_buf_set_lines(placeholder, -2, -1, false, vim.split("## Error\n\n" .. pi().format_error(err), "\n"))
      end
      return pi().notify("pi: chat: " .. pi().format_error(err), vim.log.levels.ERROR)
    end
    show(state.sessionId, text, function(buf)
      if api.nvim_buf_is_valid(placeholder) then
        pcall(api.nvim_buf_delete, placeholder, { force = true })
      end
      M.placeholder = nil
      if callback then
        callback(buf)
      end
    end)
  end)
end

--- :PiQueue: take every queued message of the session back (`pi/clearQueue`, so none is sent
--- later) and put the texts in the chat's prompt area, below what is typed there.
function M.take_queue(callback)
  local current = api.nvim_get_current_buf()
  local session = (chats[current] and chats[current].session) or (pi().state.session and pi().state.session.sessionId)
  pi().clear_queue(session and { session = session } or {}, function(err, result)
    if err then
      return pi().notify("pi: queue: " .. pi().format_error(err), vim.log.levels.ERROR)
    end
    local texts = vim.list_extend(vim.list_extend({}, result.steering or {}), result.followUp or {})
    if #texts == 0 then
      pi().notify("pi: nothing is queued")
      return callback and callback(nil)
    end
    local function put_back(buf)
      local typed = vim.trim(table.concat(api.nvim_buf_get_lines(buf, marker_row(buf) + 1, -1, false), "\n"))
      if typed ~= "" then
        table.insert(texts, 1, typed)
      end
      M.set_prompt(buf, table.concat(texts, "\n\n"))
      pi().notify(
        string.format("pi: %d queued message(s) taken back into the prompt area", #texts - (typed ~= "" and 1 or 0))
      )
      if callback then
        callback(buf)
      end
    end
    local buf = session and M.buffer(session)
    if buf then
      M.show_chat_window(buf)
      put_back(buf)
    else
      M.open(nil, put_back)
    end
  end)
end

local function prompt_empty(buf)
  local rest = api.nvim_buf_get_lines(buf, marker_row(buf) + 1, -1, false)
  return vim.trim(table.concat(rest, "\n")) == ""
end

--- Follow changes made elsewhere (called by setup()): a navigation (:PiTree, another editor), lines
--- appended by another program or a compaction redraw the chat of the active session when no run
--- is streaming; a navigation's editor text fills an empty prompt area, as pi's editor does.
function M.attach()
  require("pi.client").on("PiEvent", M.on_event)
  pi().on("PiSessionChanged", function(change)
    local reason = change.reason
    local active = pi().state.session
    if reason ~= "navigate" and reason ~= "external" and reason ~= "compaction" then
      return
    elseif not active or active.sessionId ~= change.sessionId then
      return -- a request naming another session would make it the active one: wait until it is
    end
    pi().when_settled(function() -- the user may be opening another session right now
      local now = pi().state.session
      if not now or now.sessionId ~= change.sessionId then
        return
      end
      for buf, chat in pairs(chats) do
        if chat.session == change.sessionId and not chat.running and api.nvim_buf_is_valid(buf) then
          M.refresh(buf)
        end
      end
    end)
  end)
  pi().on("PiEditorText", function(editor)
    local session = pi().state.session
    local buf = session and M.buffer(session.sessionId)
    if buf and prompt_empty(buf) then
      M.set_prompt(buf, editor.text)
    end
  end)
end

--- What the chat buffer `buf` holds: { session, running, live, text, thinking }, or nil.
function M.chat(buf)
  return chats[buf]
end

--- The entry {id, role} of the message whose lines hold `row` (0-based) in `buf`, or nil.
function M.entry_at(buf, row)
  local chat = chats[buf]
  if not chat then
    return nil
  end
  local marks = api.nvim_buf_get_extmarks(buf, ns, { row, 0 }, 0, {})
  for _, mark in ipairs(marks) do
    local entry = chat.entries[mark[1]]
    if entry then
      return entry, mark[2]
    end
  end
  return nil
end

--- The entry of the nearest message at or above `row` with role `role`.
function M.entry_above(buf, row, role)
  while row >= 0 do
    local entry, start = M.entry_at(buf, row)
    if not entry then
      return nil
    end
    if entry.role == role then
      return entry, start
    end
    row = start - 1
  end
  return nil
end

--- Abort the run of every chat that has one, waiting up to `timeout_ms` for the answers (on quit).
---@param timeout_ms integer
function M.abort_all(timeout_ms)
  if not pi().is_ready() then
    return
  end
  local pending = 0
  for buf, chat in pairs(chats) do
    if (chat.running or chat.in_flight) and api.nvim_buf_is_valid(buf) then
      pending = pending + 1
      pi().abort({ session = chat.session }, function()
        pending = pending - 1
      end)
    end
  end
  if pending > 0 then
    vim.wait(timeout_ms, function()
      return pending == 0
    end, 10)
  end
end

--- Whether a chat of the session has a run on (or a prompt of ours unanswered).
---@param session_id string
---@return boolean
function M.is_running(session_id)
  for buf, chat in pairs(chats) do
    if chat.session == session_id and (chat.running or chat.in_flight) and api.nvim_buf_is_valid(buf) then
      return true
    end
  end
  return false
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

return M
