-- pi.nvim: Neovim client for pi-lsp (AI coding-agent chat sessions over LSP). This module is the
-- public API: setup(), one Lua function per contract method (async, and blocking under M.sync),
-- and the client's lifecycle, requests and events (pi.client) under their public names.
--
-- Works with Neovim 0.7+ (0.11's vim.lsp.config / vim.lsp.enable where available, see pi.client).
--
--   require("pi").setup({ cmd = { "pi-lsp" }, settings = { compaction = { enabled = true } } })
--   require("pi").new_session({}, function(err, state) ... end)     -- async
--   local state, err = require("pi").sync.new_session({})             -- blocking (scripts)
local M = {}

local client = require("pi.client")

M.version = "0.1.0"

--- Lua function name -> JSON-RPC method of the pi-lsp contract (docs/protocol.md).
M.methods = require("pi.protocol").methods

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
  Timeout = client.Timeout,
  NotRunning = client.NotRunning,
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
  log_file = nil, -- nil: stdpath("cache")/pi-lsp.log (passed as --log-file); false: the server's stderr
}

---@type pi.Config
M.config = vim.deepcopy(defaults)
client.config = M.config

--- Plugin state, updated from results and notifications (see pi.State in pi.client).
---@type pi.State
M.state = client.state

-- ---------------------------------------------------------------- helpers

M._settings_object = client.settings_object

---@param value any
---@return string
function M.json_encode(value)
  if vim.json then
    return vim.json.encode(value)
  end
  return vim.fn.json_encode(value)
end

---@param text string
---@return any
function M.json_decode(text)
  if vim.json then
    return vim.json.decode(text, { luanil = { object = true } })
  end
  return vim.fn.json_decode(text)
end

local messages = require("pi.messages")
M.short = messages.short
M.notify = messages.notify
M.format_error = messages.format_error

-- ---------------------------------------------------------------- the client, under its public names

M.on = client.on
M._fire = client.fire
M.find_root = client.find_root
M.client = client.client
M.capabilities = client.capabilities
M.is_ready = client.is_ready
M.when_settled = client.when_settled
M.server_cmd = client.server_cmd
M.client_capabilities = client.client_capabilities
M.stop = client.stop
M.attach = client.attach
M.set_settings = client.set_settings
M.request = client.request
M.cancel = client.cancel
M.request_sync = client.request_sync

--- Whether the server implements a contract method (true when it does not say).
---@param method string a Lua name of M.methods or a method name
---@return boolean
function M.supports(method)
  local methods = M.capabilities().methods
  if type(methods) ~= "table" then
    return true
  end
  return vim.tbl_contains(methods, M.methods[method] or method)
end

local ui_attached = false

--- The UI modules subscribe to the client's events once (chat, statusline, buffer reloads, approvals).
local function attach_ui()
  if ui_attached then
    return
  end
  ui_attached = true
  require("pi.chat").attach()
  require("pi.status").attach()
  require("pi.reload").attach()
  require("pi.approval").attach()
  require("pi.ui").attach()
  require("pi.chat_complete").track()
end

--- Start the server (if needed) and return the LSP client object.
---@return table?
function M.start()
  attach_ui()
  return client.start()
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
---@return string
function M.statusline()
  return require("pi.status").statusline()
end

-- ---------------------------------------------------------------- setup

--- Configure the plugin: create the :Pi... commands, subscribe the UI to the client's events,
--- register the server with Neovim and (with `autostart`) start it.
---@param opts? pi.Config
---@return table
function M.setup(opts)
  M.config = vim.deepcopy(defaults)
  for key, value in pairs(opts or {}) do
    M.config[key] = value
  end
  client.config = M.config
  if M.config.commands then
    require("pi.user_commands").create()
  end
  attach_ui()
  local group = vim.api.nvim_create_augroup("pi_nvim", { clear = true })
  client.register(group)
  vim.api.nvim_create_autocmd("VimLeavePre", {
    group = group,
    callback = function()
      require("pi.chat").abort_all(1000) -- a run stopped first never writes to a closed pipe
      M.stop()
    end,
  })
  if M.config.autostart then
    M.start()
  end
  return M
end

-- M.client_id: the id of the running LSP client (read through, kept by pi.client)
return setmetatable(M, {
  __index = function(_, key)
    if key == "client_id" then
      return client.client_id
    end
  end,
})
