-- The connection to pi-lsp: the server's lifecycle (start, stop, settings), requests (async, queued
-- until `initialize` is answered, blocking, cancelled) and the event bus. Server notifications and
-- requests only update `state` and fire events here; the UI modules (chat, status, reload,
-- approval) subscribe with on() / answer() in their attach(), so this module requires none of them.
--
-- Neovim 0.11+: the server's configuration is registered with vim.lsp.config("pi") (a user's own
-- vim.lsp.config("pi", {...}) is merged over it), buffers of `attach_patterns` are attached through
-- vim.lsp.enable("pi"), and the client's methods are called as methods (client:request). Before
-- 0.11: vim.lsp.start_client and a BufReadPost autocmd.
local protocol = require("pi.protocol")
local M = {}

local messages = require("pi.messages")

local api = vim.api
local uv = vim.loop

local has_011 = vim.fn.has("nvim-0.11") == 1

---@class pi.Config
---@field cmd? string[] the server command (default: `pi-lsp` on PATH, else `<dir>/.venv/bin/pi-lsp` of server_dirs)
---@field server_dirs? string[]|string pi-lsp checkouts where `make setup` made .venv
---@field cmd_env? table<string, string> extra environment of the server
---@field settings? table the `pi` settings (docs/protocol.md "Settings"), sent as initializationOptions.pi
---@field root_dir? string|fun(): string the workspace (default: a root marker above cwd, else cwd)
---@field root_markers? string[] e.g. { ".pi", ".git" }
---@field autostart? boolean start the server in setup() (default true)
---@field timeout? integer ms, for the sync variants (default 10000)
---@field commands? boolean create the :Pi... commands (default true)
---@field chat_keys? table<string, string> over pi.chat.keys ("" unmaps)
---@field attach_patterns? string[] file names whose buffers the server gets (diagnostics of AGENTS.md, SKILL.md...)
---@field log_file? string|false the server's own log (default: stdpath("cache")/pi-lsp.log); false: its stderr

---@type pi.Config
M.config = {}

---@class pi.State
---@field session? table the active SessionState (leafId/entryCount kept current)
---@field events table<string, any> last payload per User event name (Neovim 0.7 autocmds carry no data)
---@field changes integer pi/sessionChanged notifications received
---@field compacting table<string, boolean> sessionId -> true while a compaction runs
---@field editor_text? string text returned by the last navigate to a user message
M.state = { events = {}, changes = 0, compacting = {} }

--- Client-side error codes (never sent by the server).
M.Timeout = -1
M.NotRunning = -2

M.client_id = nil
local ready = false
local stopped = false -- stop() was called: requests fail until start()

-- Requests in flight that may change the server's active session (addressing a session makes it
-- the active one). A background request that addresses the session the plugin shows (statusline,
-- a chat's redraw) waits for them in when_settled(), or it could switch the server back to it.
local switching = 0
local settled_waiters = {}

local function settle(lost)
  switching = lost and 0 or math.max(switching - 1, 0)
  if switching > 0 then
    return
  end
  local waiters = settled_waiters
  settled_waiters = {}
  if not lost then -- a server that exited is not restarted for a background request
    for _, waiter in ipairs(waiters) do
      waiter()
    end
  end
end

--- Run `fn` now, or once no request that may change the active session is in flight; `fn` reads
--- M.state.session itself (it may have changed meanwhile).
---@param fn fun()
function M.when_settled(fn)
  if switching == 0 then
    return fn()
  end
  table.insert(settled_waiters, fn)
end

local pending = {}
local listeners = {}
local request_answerers = {}

-- ---------------------------------------------------------------- helpers

--- Call the LSP client's method `name`: `client:name(...)` from 0.11 (where the dot form is
--- deprecated), `client.name(...)` before (0.7's client functions take no self).
local function call(client, name, ...)
  if has_011 then
    return client[name](client, ...)
  end
  return client[name](...)
end
M.call = call

local function is_empty(t)
  return type(t) == "table" and next(t) == nil
end

local islist = vim.islist or vim.tbl_islist

--- A params object: empty Lua tables would otherwise be encoded as JSON arrays.
function M.as_object(t)
  if t == nil or is_empty(t) then
    return vim.empty_dict()
  end
  return t
end

--- Settings are nested objects only: turn every empty table into an empty JSON object.
function M.settings_object(t)
  if type(t) ~= "table" or t == vim.NIL then
    return t
  end
  if is_empty(t) then
    return vim.empty_dict()
  end
  if islist(t) then
    return t
  end
  local out = {}
  for k, v in pairs(t) do
    out[k] = M.settings_object(v)
  end
  return out
end

local function report(what, err)
  vim.schedule(function()
    messages.notify(string.format("pi: %s: %s", what, messages.format_error(err)), vim.log.levels.ERROR)
  end)
end

-- ---------------------------------------------------------------- event bus

--- Subscribe `fn(data)` to a plugin event ("PiEvent", "PiSessionChanged", ...); returns a function
--- that unsubscribes it.
---@param event string
---@param fn fun(data: any)
---@return fun()
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

--- Run the Lua listeners of `event`, then `User <event>` autocmds (with `data` on 0.8+); the
--- payload stays in state.events[event] for 0.7 autocmds.
---@param event string
---@param data any
function M.fire(event, data)
  M.state.events[event] = data
  for _, fn in ipairs(vim.list_slice(listeners[event] or {})) do
    local ok, e = pcall(fn, data)
    if not ok then
      report(event .. " listener", e)
    end
  end
  local opts = { pattern = event, modeline = false }
  if vim.fn.has("nvim-0.8") == 1 then
    opts.data = data
  end
  pcall(api.nvim_exec_autocmds, "User", opts)
end

--- Answer the server -> client request `method` with `fn(params)`'s return value (one per method).
---@param method string
---@param fn fun(params: table): any
function M.answer(method, fn)
  request_answerers[method] = fn
end

-- ---------------------------------------------------------------- notifications

local function active_matches(session_id)
  local s = M.state.session
  return s ~= nil and (session_id == nil or s.sessionId == session_id)
end

local function set_active(state)
  if type(state) == "table" and state.sessionId then
    local previous = M.state.session
    M.state.session = vim.deepcopy(state) -- kept current by notifications; never the caller's table
    if not previous or previous.sessionId ~= state.sessionId then
      M.fire("PiSessionActive", state)
    end
  end
end
M.set_active = set_active

local handlers = {}

handlers[protocol.notifications.session_changed] = function(_, p)
  p = p or {}
  M.state.changes = M.state.changes + 1
  if active_matches(p.sessionId) then
    local s = M.state.session
    s.leafId = p.leafId
    s.entryCount = (s.entryCount or 0) + #(p.appendedIds or {})
  end
  M.fire("PiSessionChanged", p)
end

handlers[protocol.notifications.system_prompt_changed] = function(_, p)
  M.fire("PiSystemPromptChanged", p or {})
end

handlers[protocol.notifications.event] = function(_, p)
  p = p or {}
  if type(p.event) == "table" and type(p.event.type) == "string" then
    M.fire("PiEvent", p)
  end
end

handlers[protocol.server_requests.request_approval] = function(_, p)
  local answer = request_answerers[protocol.server_requests.request_approval]
  if not answer then
    return { decision = "deny", reason = "the editor has no approval handler" }
  end
  return answer(p or {})
end

handlers[protocol.notifications.compaction_started] = function(_, p)
  p = p or {}
  if p.sessionId then
    M.state.compacting[p.sessionId] = true
  end
  M.fire("PiCompactionStarted", p)
end

handlers[protocol.notifications.compaction_ended] = function(_, p)
  p = p or {}
  if p.sessionId then
    M.state.compacting[p.sessionId] = nil
  end
  M.fire("PiCompactionEnded", p)
end

-- ---------------------------------------------------------------- lifecycle

--- The workspace root: `root_dir`, else the nearest directory above cwd holding a root marker, else cwd.
---@return string
function M.find_root()
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

--- The running LSP client object, or nil.
---@return table?
function M.client()
  if M.client_id then
    local client = vim.lsp.get_client_by_id(M.client_id)
    if client and not call(client, "is_stopped") then
      return client
    end
  end
  return nil
end

--- The server's `experimental.pi` capabilities (methods, getTreeFormats, ...), or {} before init.
---@return table
function M.capabilities()
  local client = M.client()
  local caps = client and client.server_capabilities
  return (caps and caps.experimental and caps.experimental.pi) or {}
end

--- Whether the server has answered `initialize`.
---@return boolean
function M.is_ready()
  return ready and M.client() ~= nil
end

local function run_pending(exited)
  local queued = pending
  pending = {}
  for _, fn in ipairs(queued) do
    fn(exited)
  end
end

--- The command that starts the server: `cmd` when set, else `pi-lsp` on PATH, else the first
--- `<dir>/.venv/bin/pi-lsp` of `server_dirs`. Returns nil and what to set when none is found.
---@return string[]?, string?
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
---@return table
function M.client_capabilities()
  return vim.tbl_deep_extend("force", vim.lsp.protocol.make_client_capabilities(), {
    experimental = { pi = { approvals = true } },
  })
end

--- Whether a buffer's file is one of `attach_patterns` (matched against its name, as autocmds do).
local function wants_buffer(bufnr)
  local name = api.nvim_buf_get_name(bufnr)
  if name == "" or api.nvim_buf_get_option(bufnr, "buftype") ~= "" then
    return false
  end
  local tail = vim.fn.fnamemodify(name, ":t")
  for _, pattern in ipairs(M.config.attach_patterns or {}) do
    if vim.fn.match(tail, vim.fn.glob2regpat(pattern)) ~= -1 then
      return true
    end
  end
  return false
end

--- The command with `--log-file`: the server logs to its own file at its own levels, not to stderr,
--- which Neovim would copy into lsp.log as ERROR lines.
local function with_log_file(cmd)
  local file = M.config.log_file
  if file == false or cmd == nil or vim.tbl_contains(cmd, "--log-file") then
    return cmd
  end
  file = file or (vim.fn.stdpath("cache") .. "/pi-lsp.log")
  vim.fn.mkdir(vim.fn.fnamemodify(file, ":h"), "p")
  local full = vim.list_slice(cmd)
  vim.list_extend(full, { "--log-file", file })
  return full
end

--- The server's client configuration (cmd, settings, handlers, on_init, on_exit).
local function client_config(cmd, root)
  local cfg = M.config
  return {
    name = "pi",
    cmd = with_log_file(cmd),
    capabilities = M.client_capabilities(),
    cmd_cwd = root,
    cmd_env = cfg.cmd_env,
    root_dir = root,
    init_options = { pi = M.settings_object(cfg.settings or {}) },
    settings = { pi = cfg.settings or {} },
    handlers = handlers,
    on_init = function(client)
      if not M.client_id or not M.client() then -- started by vim.lsp.enable for an attached buffer
        M.client_id = client.id
      end
      ready = true
      run_pending()
      M.fire("PiReady", { root = root })
    end,
    on_exit = function(code, signal, client_id)
      local unexpected = client_id == M.client_id
      if unexpected then
        M.client_id = nil
        ready = false
        run_pending(true)
        settle(true)
      end
      vim.schedule(function()
        if unexpected and code ~= 0 then
          messages.notify(string.format("pi: pi-lsp exited (code %s, signal %s)", code, signal), vim.log.levels.WARN)
        end
        M.fire("PiExit", { code = code, signal = signal })
      end)
    end,
  }
end

--- Register the configuration with Neovim (0.11+: vim.lsp.config("pi"), and vim.lsp.enable("pi")
--- for the buffers of `attach_patterns`; before: a BufReadPost autocmd in `group`).
---@param group integer the plugin's augroup
function M.register(group)
  local patterns = M.config.attach_patterns or {}
  if has_011 and vim.lsp.config and vim.lsp.enable then
    local cmd = M.server_cmd()
    local config = client_config(cmd, nil)
    config.root_dir = function(bufnr, on_dir)
      if wants_buffer(bufnr) then
        on_dir(M.find_root())
      end
    end
    vim.lsp.config("pi", config)
    vim.lsp.enable("pi", cmd ~= nil and #patterns > 0)
    return
  end
  if #patterns > 0 then
    api.nvim_create_autocmd({ "BufReadPost", "BufNewFile" }, {
      group = group,
      pattern = patterns,
      callback = function(ev)
        M.attach(ev.buf)
      end,
    })
  end
end

--- Start the server (if needed) and return the client object.
---@return table?
function M.start()
  stopped = false
  local existing = M.client()
  if existing then
    return existing
  end
  local root = M.find_root()
  ready = false
  local cmd, missing = M.server_cmd()
  if not cmd then
    vim.notify("pi: " .. missing, vim.log.levels.ERROR) -- not cut: it says what to set
    return nil
  end
  local id
  if has_011 and vim.lsp.config then
    -- the registered configuration, with the user's vim.lsp.config("pi", {...}) merged over it
    local config =
      vim.tbl_extend("force", vim.lsp.config.pi or client_config(cmd, root), { root_dir = root, cmd_cwd = root })
    id = vim.lsp.start(config, { attach = false })
  else
    id = vim.lsp.start_client(client_config(cmd, root))
  end
  if not id then
    report("start", "could not start " .. table.concat(cmd, " "))
    return nil
  end
  M.client_id = id
  return vim.lsp.get_client_by_id(id)
end

--- Stop the server. Requests then fail (NotRunning) until start() is called again; a server that
--- exits by itself is restarted by the next request.
---@param force? boolean
function M.stop(force)
  stopped = true
  local client = M.client()
  if client then
    call(client, "stop", force)
  end
  M.client_id = nil
  ready = false
  run_pending(true)
  settle(true)
end

--- Attach a buffer (e.g. AGENTS.md, SKILL.md) so the server's diagnostics and sync apply to it.
---@param bufnr? integer
function M.attach(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and api.nvim_get_current_buf() or bufnr
  local client = M.client() or (not stopped and M.start()) or nil
  if client then
    vim.lsp.buf_attach_client(bufnr, client.id)
  end
end

--- Replace the settings and announce them (workspace/didChangeConfiguration).
---@param settings table
function M.set_settings(settings)
  M.config.settings = settings or {}
  local client = M.client()
  if client then
    client.config.settings = { pi = M.config.settings }
    local send = function(exited)
      if not exited then
        call(
          client,
          "notify",
          "workspace/didChangeConfiguration",
          { settings = { pi = M.settings_object(M.config.settings) } }
        )
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

-- Methods whose result is a SessionState: it becomes the plugin's active session.
local returns_state = {
  [protocol.methods.new_session] = true,
  [protocol.methods.open_session] = true,
  [protocol.methods.continue_recent] = true,
  [protocol.methods.fork_session] = true,
  [protocol.methods.branch_to_new_session] = true,
  [protocol.methods.get_session_state] = true,
}

local function after_result(method, params, result)
  if type(result) ~= "table" then
    return
  end
  if returns_state[method] then
    set_active(result)
    return
  end
  local addressed = type(params) == "table" and type(params.session) == "string" and params.session or nil
  if method == protocol.methods.close_session then
    -- closing never changes the active session unless it is the one closed
    local closed = addressed or (M.state.session and M.state.session.sessionId)
    if M.state.session and M.state.session.sessionId == closed then
      M.state.session = nil
      M.fire("PiSessionActive", {})
    end
    return
  end
  if addressed and not (M.state.session and M.state.session.sessionId == addressed) then
    -- the server made the addressed session the active one: follow it
    M.request(protocol.methods.get_session_state, {}, function() end)
    return
  end
  if result.leafId ~= nil and M.state.session then -- setLeaf, navigate
    M.state.session.leafId = result.leafId
  elseif method == protocol.methods.set_leaf and M.state.session then -- leaf moved before the first entry
    M.state.session.leafId = nil
  end
  if method == protocol.methods.navigate and result.editorText then
    M.state.editor_text = result.editorText
    M.fire("PiEditorText", { text = result.editorText })
  end
end

local function switches_session(method, params)
  if returns_state[method] and method ~= protocol.methods.get_session_state then
    return true
  end
  local addressed = type(params) == "table" and params.session or nil
  return type(addressed) == "string" and not (M.state.session and M.state.session.sessionId == addressed)
end

local function send_request(method, params, callback, on_sent)
  callback = callback or function(err)
    if err then
      report(method, err)
    end
  end
  params = M.as_object(params)
  local client = M.client() or (not stopped and M.start()) or nil
  if not client then
    callback({ code = M.NotRunning, message = "pi-lsp is not running" }, nil)
    return nil
  end
  local function send(exited)
    if exited then
      callback({ code = M.NotRunning, message = "pi-lsp exited" }, nil)
      return nil
    end
    local switches = switches_session(method, params)
    local ok, request_id = call(client, "request", method, params, function(err, result)
      if not err then
        after_result(method, params, result)
      end
      if switches then -- the plugin's state is the answer's now (and a failing callback blocks nothing)
        settle(false)
      end
      callback(err, result)
    end)
    if not ok then
      callback({ code = M.NotRunning, message = "pi-lsp is not running" }, nil)
      return nil
    end
    if switches then
      switching = switching + 1
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
---@param method string
---@param params? table
---@param callback? fun(err: table?, result: any)
---@return integer?
function M.request(method, params, callback)
  return send_request(method, params, callback)
end

--- Cancel a request sent with request() ($/cancelRequest).
---@param request_id? integer
function M.cancel(request_id)
  local client = M.client()
  if client and request_id then
    call(client, "cancel_request", request_id)
  end
end

--- Blocking request: returns `result, err`. `err` is the JSON-RPC error, or `{code = Timeout}`
--- after `timeout_ms` (the request is then cancelled).
---@param method string
---@param params? table
---@param timeout_ms? integer
---@return any, table?
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
    return nil, { code = M.Timeout, message = string.format("%s timed out after %d ms", method, uv.now() - started) }
  end
  return res, er
end

return M
