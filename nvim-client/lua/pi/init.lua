-- pi.nvim: Neovim client for pi-lsp (AI coding-agent chat sessions over LSP).
--
-- Works with Neovim 0.7+: only vim.lsp.start_client / client.request / client.notify / handlers,
-- vim.loop and nvim_create_user_command / nvim_create_autocmd are used.
--
--   require("pi").setup({ cmd = { "pi-lsp" }, settings = { compaction = { enabled = true } } })
--   require("pi").new_session({}, function(err, state) ... end)     -- async
--   local state, err = require("pi").sync.new_session({})             -- blocking (scripts)
local M = {}

local api = vim.api
local uv = vim.loop

M.version = "0.1.0"

--- Lua function name -> JSON-RPC method of the pi-lsp contract (docs/protocol.md).
M.methods = {
  new_session = "pi/newSession",
  open_session = "pi/openSession",
  continue_recent = "pi/continueRecent",
  list_sessions = "pi/listSessions",
  fork_session = "pi/forkSession",
  branch_to_new_session = "pi/branchToNewSession",
  get_session_state = "pi/getSessionState",
  close_session = "pi/closeSession",
  append_entry = "pi/appendEntry",
  get_entry = "pi/getEntry",
  get_entries = "pi/getEntries",
  get_branch = "pi/getBranch",
  get_tree = "pi/getTree",
  set_leaf = "pi/setLeaf",
  navigate = "pi/navigate",
  set_label = "pi/setLabel",
  set_session_name = "pi/setSessionName",
  build_context = "pi/buildContext",
  prepare_compaction = "pi/prepareCompaction",
  compact = "pi/compact",
  get_system_prompt = "pi/getSystemPrompt",
  list_skills = "pi/listSkills",
  prompt = "pi/prompt",
  abort = "pi/abort",
  clear_queue = "pi/clearQueue",
  get_run_state = "pi/getRunState",
  list_models = "pi/listModels",
  set_model = "pi/setModel",
  get_session_stats = "pi/getSessionStats",
  get_commands = "pi/getCommands",
  bash = "pi/bash",
  preview_restore = "pi/previewRestore",
  restore_files = "pi/restoreFiles",
  undo_restore = "pi/undoRestore",
  get_changes = "pi/getChanges",
  get_server_status = "pi/getServerStatus",
}

--- JSON-RPC error codes of the contract.
M.codes = {
  InvalidParams = -32602,
  SessionNotFound = -32001,
  EntryNotFound = -32002,
  NothingToCompact = -32003,
  ModelError = -32004,
  InvalidSessionFile = -32005,
  SessionBusy = -32006,
  RequestCancelled = -32800,
  MethodNotFound = -32601, -- also: a contract method this server build reserves but lacks
  -- client-side (not sent by the server)
  Timeout = -1,
  NotRunning = -2,
}

-- A string argument stands for this field (e.g. open_session("/path/x.jsonl")).
local primary_field = {
  open_session = "path",
  continue_recent = "cwd",
  list_sessions = "query",
  fork_session = "sourcePath",
  branch_to_new_session = "entryId",
  get_session_state = "session",
  close_session = "session",
  get_entry = "id",
  get_branch = "fromId",
  set_leaf = "id",
  navigate = "targetId",
  set_session_name = "name",
  prompt = "text",
  list_skills = "cwd",
}

-- Methods whose result is a SessionState: it becomes the plugin's active session.
local returns_state = {
  ["pi/newSession"] = true,
  ["pi/openSession"] = true,
  ["pi/continueRecent"] = true,
  ["pi/forkSession"] = true,
  ["pi/branchToNewSession"] = true,
  ["pi/getSessionState"] = true,
}

local defaults = {
  cmd = nil, -- nil: `pi-lsp` on PATH, else `<dir>/.venv/bin/pi-lsp` for each of server_dirs
  server_dirs = {}, -- e.g. { "~/src/pi-lsp" } (a checkout where `make setup` made .venv)
  cmd_env = nil,
  settings = {},
  root_dir = nil, -- string or function() -> string; default: a root marker above cwd, else cwd
  root_markers = {}, -- e.g. { ".pi", ".git" }
  autostart = true,
  timeout = 10000, -- ms, for the sync variants
  commands = true,
  chat_keys = {}, -- over pi.chat.keys: { send_normal = "<CR>", stop = "<C-c>", yank_code = "gy", ... } ("" unmaps)
  attach_patterns = { "AGENTS.md", "CLAUDE.md", "SYSTEM.md", "APPEND_SYSTEM.md", "SKILL.md" },
}

M.config = vim.deepcopy(defaults)

--- Plugin state, updated from results and notifications.
M.state = {
  session = nil, -- the active SessionState (leafId/entryCount kept current)
  events = {}, -- last payload per User event name (Neovim 0.7 autocmds carry no data)
  changes = 0, -- pi/sessionChanged notifications received
  stream = {}, -- sessionId -> { text = "", thinking = "" } during pi/prompt
  compacting = {}, -- sessionId -> true while a compaction runs
  editor_text = nil, -- text returned by the last navigate to a user message
}

M.client_id = nil
local ready = false
local stopped = false -- stop() was called: requests fail until start()
local pending = {}
local listeners = {}

-- ---------------------------------------------------------------- helpers

local function is_empty(t)
  return type(t) == "table" and next(t) == nil
end

--- A params object: empty Lua tables would otherwise be encoded as JSON arrays.
local function as_object(t)
  if t == nil or is_empty(t) then
    return vim.empty_dict()
  end
  return t
end

--- Settings are nested objects only: turn every empty table into an empty JSON object.
local function settings_object(t)
  if type(t) ~= "table" or t == vim.NIL then
    return t
  end
  if is_empty(t) then
    return vim.empty_dict()
  end
  if vim.tbl_islist(t) then
    return t
  end
  local out = {}
  for k, v in pairs(t) do
    out[k] = settings_object(v)
  end
  return out
end
M._settings_object = settings_object

function M.json_encode(value)
  if vim.json then
    return vim.json.encode(value)
  end
  return vim.fn.json_encode(value)
end

function M.json_decode(text)
  if vim.json then
    return vim.json.decode(text, { luanil = { object = true } })
  end
  return vim.fn.json_decode(text)
end

--- `msg` cut to one screen line, so that no message ever waits for Enter.
function M.short(msg)
  msg = tostring(msg):gsub("%s*\n%s*", " ")
  local room = math.max(20, (vim.v.echospace or vim.o.columns) - 1)
  if vim.fn.strdisplaywidth(msg) > room then
    msg = vim.fn.strcharpart(msg, 0, room - 3) .. "..."
  end
  return msg
end

--- vim.notify with the message cut to one line.
function M.notify(msg, level)
  vim.notify(M.short(msg), level or vim.log.levels.INFO)
end

local function notify_err(what, err)
  vim.schedule(function()
    M.notify(string.format("pi: %s: %s", what, M.format_error(err)), vim.log.levels.ERROR)
  end)
end

function M.format_error(err)
  if type(err) ~= "table" then
    return tostring(err)
  end
  if err.message then
    return err.message .. (err.code and string.format(" (%s)", err.code) or "")
  end
  return vim.inspect(err)
end

--- Subscribe a Lua function to a plugin event ("PiSessionChanged", ...); returns an unsubscribe fn.
function M.on(event, fn)
  listeners[event] = listeners[event] or {}
  table.insert(listeners[event], fn)
  return function()
    for i, f in ipairs(listeners[event] or {}) do
      if f == fn then
        table.remove(listeners[event], i)
        return
      end
    end
  end
end

--- Fire `User <event>` (with `data` on Neovim >= 0.8) and Lua listeners; payload in M.state.events.
local function fire(event, data)
  M.state.events[event] = data
  for _, fn in ipairs(listeners[event] or {}) do
    local ok, e = pcall(fn, data)
    if not ok then
      notify_err(event .. " listener", e)
    end
  end
  local opts = { pattern = event, modeline = false }
  if vim.fn.has("nvim-0.8") == 1 then
    opts.data = data
  end
  pcall(api.nvim_exec_autocmds, "User", opts)
end
M._fire = fire

local function set_active(state)
  if type(state) == "table" and state.sessionId then
    local previous = M.state.session
    M.state.session = vim.deepcopy(state) -- kept current by notifications; never the caller's table
    if not previous or previous.sessionId ~= state.sessionId then
      fire("PiSessionActive", state)
    end
  end
end

local function active_matches(session_id)
  local s = M.state.session
  return s ~= nil and (session_id == nil or s.sessionId == session_id)
end

-- ---------------------------------------------------------------- root and client

local function find_root()
  local cfg = M.config
  if type(cfg.root_dir) == "function" then
    return cfg.root_dir()
  elseif type(cfg.root_dir) == "string" then
    return cfg.root_dir
  end
  local cwd = uv.cwd()
  if cfg.root_markers and #cfg.root_markers > 0 then
    local dir = cwd
    while dir do
      for _, marker in ipairs(cfg.root_markers) do
        if uv.fs_stat(dir .. "/" .. marker) then
          return dir
        end
      end
      local parent = vim.fn.fnamemodify(dir, ":h")
      if parent == dir then
        break
      end
      dir = parent
    end
  end
  return cwd
end
M.find_root = find_root

local handlers = {}

handlers["pi/sessionChanged"] = function(_, p)
  p = p or {}
  M.state.changes = M.state.changes + 1
  if active_matches(p.sessionId) then
    local s = M.state.session
    s.leafId = p.leafId
    s.entryCount = (s.entryCount or 0) + #(p.appendedIds or {})
  end
  fire("PiSessionChanged", p)
end

handlers["pi/systemPromptChanged"] = function(_, p)
  fire("PiSystemPromptChanged", p or {})
end

handlers["pi/messageUpdate"] = function(_, p)
  p = p or {}
  local sid = p.sessionId or ""
  local buf = M.state.stream[sid] or { text = "", thinking = "" }
  M.state.stream[sid] = buf
  local delta = p.delta or {}
  if delta.type == "thinking" then
    buf.thinking = buf.thinking .. (delta.text or "")
  else
    buf.text = buf.text .. (delta.text or "")
  end
  fire("PiMessageUpdate", p)
end

handlers["pi/event"] = function(_, p)
  p = p or {}
  require("pi.chat").on_event(p)
  require("pi.status").on_event(p)
  if type(p.event) == "table" then
    require("pi.reload").on_event(p)
  end
  fire("PiEvent", p)
end

--- A server -> client request: the answer is this handler's return value.
handlers["pi/requestApproval"] = function(_, p)
  return require("pi.approval").approve(p)
end

handlers["pi/compactionStarted"] = function(_, p)
  p = p or {}
  if p.sessionId then
    M.state.compacting[p.sessionId] = true
  end
  require("pi.status").on_compaction_started(p)
  fire("PiCompactionStarted", p)
end

handlers["pi/compactionEnded"] = function(_, p)
  p = p or {}
  if p.sessionId then
    M.state.compacting[p.sessionId] = nil
  end
  require("pi.status").on_compaction_ended(p)
  fire("PiCompactionEnded", p)
end

--- The running client object, or nil.
function M.client()
  if M.client_id then
    local client = vim.lsp.get_client_by_id(M.client_id)
    if client and not client.is_stopped() then
      return client
    end
  end
  return nil
end

--- The server's `experimental.pi` capabilities (methods, getTreeFormats, ...), or {} before init.
function M.capabilities()
  local client = M.client()
  local caps = client and client.server_capabilities
  return (caps and caps.experimental and caps.experimental.pi) or {}
end

--- Whether the server implements a contract method (true when it does not say).
function M.supports(method)
  local methods = M.capabilities().methods
  if type(methods) ~= "table" then
    return true
  end
  return vim.tbl_contains(methods, M.methods[method] or method)
end

--- Whether the server has answered `initialize`.
function M.is_ready()
  return ready and M.client() ~= nil
end

local function fail_pending()
  local queued = pending
  pending = {}
  for _, fn in ipairs(queued) do
    fn(true)
  end
end

local function flush_pending()
  local queued = pending
  pending = {}
  for _, fn in ipairs(queued) do
    fn()
  end
end

--- The command that starts the server: `cmd` when set, else `pi-lsp` on PATH, else the first
--- `<dir>/.venv/bin/pi-lsp` of `server_dirs`. Returns nil and what to set when none is found.
function M.server_cmd()
  local cfg = M.config
  if cfg.cmd then
    return cfg.cmd
  end
  if vim.fn.executable("pi-lsp") == 1 then
    return { "pi-lsp" }
  end
  local dirs = type(cfg.server_dirs) == "string" and { cfg.server_dirs } or cfg.server_dirs or {}
  for _, dir in ipairs(dirs) do
    local candidate = vim.fn.fnamemodify(vim.fn.expand(dir), ":p"):gsub("/$", "") .. "/.venv/bin/pi-lsp"
    if vim.fn.executable(candidate) == 1 then
      return { candidate }
    end
  end
  return nil, 'pi-lsp not found: set cmd = {"/path/to/pi-lsp"} or server_dirs = {"/pi-lsp/checkout"}'
end

--- Client capabilities: Neovim's, plus the pi extensions this plugin implements.
function M.client_capabilities()
  return vim.tbl_deep_extend("force", vim.lsp.protocol.make_client_capabilities(), {
    experimental = { pi = { approvals = true } },
  })
end

--- Start the server (if needed) and return the client object.
function M.start()
  stopped = false
  local existing = M.client()
  if existing then
    return existing
  end
  local cfg = M.config
  local root = find_root()
  ready = false
  local cmd, missing = M.server_cmd()
  if not cmd then
    vim.notify("pi: " .. missing, vim.log.levels.ERROR) -- not cut: it says what to set
    return nil
  end
  local id = vim.lsp.start_client({
    name = "pi",
    cmd = cmd,
    capabilities = M.client_capabilities(),
    cmd_cwd = root,
    cmd_env = cfg.cmd_env,
    root_dir = root,
    init_options = { pi = settings_object(cfg.settings or {}) },
    settings = { pi = cfg.settings or {} },
    handlers = handlers,
    on_init = function()
      ready = true
      flush_pending()
      fire("PiReady", { root = root })
    end,
    on_exit = function(code, signal, client_id)
      local unexpected = client_id == M.client_id
      if unexpected then
        M.client_id = nil
        ready = false
        fail_pending()
      end
      vim.schedule(function()
        if unexpected and code ~= 0 then
          M.notify(string.format("pi: pi-lsp exited (code %s, signal %s)", code, signal), vim.log.levels.WARN)
        end
        fire("PiExit", { code = code, signal = signal })
      end)
    end,
  })
  if not id then
    notify_err("start", "could not start " .. table.concat(cmd, " "))
    return nil
  end
  M.client_id = id
  return vim.lsp.get_client_by_id(id)
end

--- Stop the server. Requests then fail (NotRunning) until start() is called again; a server that
--- exits by itself is restarted by the next request.
function M.stop(force)
  stopped = true
  local client = M.client()
  if client then
    client.stop(force)
  end
  M.client_id = nil
  ready = false
  fail_pending()
end

--- Attach a buffer (e.g. AGENTS.md, SKILL.md) so the server's diagnostics and sync apply to it.
function M.attach(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and api.nvim_get_current_buf() or bufnr
  local client = M.client() or (not stopped and M.start()) or nil
  if client then
    vim.lsp.buf_attach_client(bufnr, client.id)
  end
end

--- Replace the settings and announce them (workspace/didChangeConfiguration).
function M.set_settings(settings)
  M.config.settings = settings or {}
  local client = M.client()
  if client then
    client.config.settings = { pi = M.config.settings }
    local send = function(exited)
      if not exited then
        client.notify("workspace/didChangeConfiguration", { settings = { pi = settings_object(M.config.settings) } })
      end
    end
    if ready then
      send()
    else
      table.insert(pending, send)
    end
  end
end

-- ---------------------------------------------------------------- requests

local function after_result(method, params, result)
  if type(result) ~= "table" then
    return
  end
  if returns_state[method] then
    set_active(result)
    return
  end
  local addressed = type(params) == "table" and type(params.session) == "string" and params.session or nil
  if method == "pi/closeSession" then
    -- closing never changes the active session unless it is the one closed
    local closed = addressed or (M.state.session and M.state.session.sessionId)
    if M.state.session and M.state.session.sessionId == closed then
      M.state.session = nil
      fire("PiSessionActive", {})
    end
    return
  end
  if addressed and not (M.state.session and M.state.session.sessionId == addressed) then
    -- the server made the addressed session the active one: follow it
    M.request("pi/getSessionState", {}, function() end)
    return
  end
  if result.leafId ~= nil and M.state.session then -- setLeaf, navigate
    M.state.session.leafId = result.leafId
  elseif method == "pi/setLeaf" and M.state.session then -- leaf moved before the first entry
    M.state.session.leafId = nil
  end
  if method == "pi/navigate" and result.editorText then
    M.state.editor_text = result.editorText
    fire("PiEditorText", { text = result.editorText })
  end
end

local function send_request(method, params, callback, on_sent)
  callback = callback or function(err)
    if err then
      notify_err(method, err)
    end
  end
  params = as_object(params)
  if method == "pi/prompt" then
    M.state.stream[params.session or (M.state.session and M.state.session.sessionId) or ""] = nil
  end
  local client = M.client() or (not stopped and M.start()) or nil
  if not client then
    callback({ code = M.codes.NotRunning, message = "pi-lsp is not running" }, nil)
    return nil
  end
  local function send(stopped)
    if stopped then
      callback({ code = M.codes.NotRunning, message = "pi-lsp exited" }, nil)
      return nil
    end
    local ok, request_id = client.request(method, params, function(err, result)
      if not err then
        after_result(method, params, result)
      end
      callback(err, result)
    end)
    if not ok then
      callback({ code = M.codes.NotRunning, message = "pi-lsp is not running" }, nil)
      return nil
    end
    if on_sent then
      on_sent(request_id)
    end
    return request_id
  end
  if ready then
    return send()
  end
  table.insert(pending, send)
  return nil
end

--- Send any request; `callback(err, result)` runs on the main loop. Returns the request id when sent
--- (nil while the server is still starting: the request is queued and sent after `initialize`).
function M.request(method, params, callback)
  return send_request(method, params, callback)
end

--- Cancel a request sent with M.request ($/cancelRequest).
function M.cancel(request_id)
  local client = M.client()
  if client and request_id then
    client.cancel_request(request_id)
  end
end

--- Blocking request: returns `result, err`. `err` is the JSON-RPC error, or
--- `{code = M.codes.Timeout}` after `timeout_ms` (the request is then cancelled).
function M.request_sync(method, params, timeout_ms)
  local done, res, er = false, nil, nil
  local request_id
  local started = uv.now()
  timeout_ms = timeout_ms or M.config.timeout
  send_request(method, params, function(err, result)
    done, res, er = true, result, err
  end, function(id)
    request_id = id
  end)
  local ok = vim.wait(timeout_ms, function()
    return done
  end, 10)
  if not ok then
    M.cancel(request_id)
    return nil,
      { code = M.codes.Timeout, message = string.format("%s timed out after %d ms", method, uv.now() - started) }
  end
  return res, er
end

local function normalise(name, params)
  if type(params) == "string" and primary_field[name] then
    params = { [primary_field[name]] = params }
  end
  params = params or {}
  if name == "set_leaf" and params.id == nil then
    params.id = vim.NIL -- null: before the first entry
  elseif name == "set_label" and params.label == nil then
    params.label = vim.NIL -- null: clear the label
  end
  return params
end

--- M.sync.<name>(params, timeout_ms) -> result, err
M.sync = {}

for name, method in pairs(M.methods) do
  M[name] = function(params, callback)
    return M.request(method, normalise(name, params), callback)
  end
  M.sync[name] = function(params, timeout_ms)
    return M.request_sync(method, normalise(name, params), timeout_ms)
  end
end

--- "pi 12.3k/200k 6%": the active session's context tokens / window and percent, from a cache kept
--- current by events (no request per redraw); "" with no session. See pi.status.
function M.statusline()
  return require("pi.status").statusline()
end

-- ---------------------------------------------------------------- setup

function M.setup(opts)
  M.config = vim.deepcopy(defaults)
  for key, value in pairs(opts or {}) do
    M.config[key] = value
  end
  if M.config.commands then
    require("pi.ui").create_commands()
  end
  if not M._status_attached then
    M._status_attached = true
    require("pi.status").attach()
    require("pi.chat").attach()
  end
  local group = api.nvim_create_augroup("pi_nvim", { clear = true })
  if M.config.attach_patterns and #M.config.attach_patterns > 0 then
    api.nvim_create_autocmd({ "BufReadPost", "BufNewFile" }, {
      group = group,
      pattern = M.config.attach_patterns,
      callback = function(ev)
        M.attach(ev.buf)
      end,
    })
  end
  api.nvim_create_autocmd("VimLeavePre", {
    group = group,
    callback = function()
      M.stop()
    end,
  })
  if M.config.autostart then
    M.start()
  end
  return M
end

return M
