-- :checkhealth pi — the server found and running, its version and protocol, whether an API key is
-- set (never the key), where model calls go, the model, the active session, the tokenizer, and the
-- prompt files the server watches (pi/getServerStatus, pi/listModels).
-- Neovim 0.7 reports through require("health").report_*, 0.9+ through vim.health.*.
local protocol = require("pi.protocol")
local M = {}

local function reporter()
  local h = vim.health
  if h and h.ok and h.start then
    return { start = h.start, ok = h.ok, warn = h.warn, error = h.error, info = h.info }
  end
  local old = require("health")
  return {
    start = old.report_start,
    ok = old.report_ok,
    warn = old.report_warn,
    error = old.report_error,
    info = old.report_info,
  }
end

M.timeout_ms = 10000

--- The lines of the report as { {level, text, advice?} ...}, where level is ok|warn|error|info.
function M.collect()
  local pi = require("pi")
  local items = {}
  local function add(level, text, advice)
    table.insert(items, { level, text, advice })
  end
  if vim.fn.has("nvim-0.7") == 1 then
    add("ok", "Neovim " .. tostring(vim.version().major) .. "." .. tostring(vim.version().minor))
  else
    add("error", "Neovim 0.7 or newer is needed")
  end
  local cmd, missing = pi.server_cmd()
  if not cmd then
    add("error", missing)
    return items
  end
  add("ok", "server command: " .. table.concat(cmd, " "))
  local client = pi.client() or pi.start()
  if not client or not vim.wait(M.timeout_ms, pi.is_ready, 20) then
    add("error", "pi-lsp did not start (see :LspLog)", { "check that `" .. table.concat(cmd, " ") .. " --help` runs" })
    return items
  end
  local caps = pi.capabilities()
  local status, err = pi.request_sync(protocol.methods.get_server_status, {}, M.timeout_ms)
  if err then
    add("warn", "pi/getServerStatus: " .. pi.format_error(err), { "an older pi-lsp: update it for the full report" })
    status = {}
  end
  add(
    "ok",
    string.format(
      "pi-lsp %s, protocol %s",
      tostring(status.version or "?"),
      tostring(status.protocolVersion or caps.protocolVersion or "?")
    )
  )
  local key = status.apiKey
  if key and key.found then
    add("ok", "Anthropic API key found (" .. tostring(key.source) .. ")")
  elseif key then
    add(
      "warn",
      "no Anthropic API key: chat runs fail, summaries are offline digests",
      { "set ANTHROPIC_API_KEY in the environment Neovim starts pi-lsp with, or log in with pi (auth.json)" }
    )
  end
  add(
    "info",
    "model calls go to "
      .. (
        (status.baseUrl and status.baseUrl ~= vim.NIL) and tostring(status.baseUrl)
        or "Anthropic's endpoint (ANTHROPIC_BASE_URL unset)"
      )
  )
  local models = pi.request_sync(protocol.methods.list_models, {}, M.timeout_ms)
  local current = models and models.current
  if current then
    add(
      "ok",
      string.format(
        "model %s/%s, thinking %s",
        tostring(current.provider),
        tostring(current.modelId),
        tostring(current.thinkingLevel)
      )
    )
  end
  local session = pi.state.session
  if session then
    add(
      "info",
      string.format(
        "session %s%s (%s)",
        session.sessionId,
        session.name and (' "' .. session.name .. '"') or "",
        session.file and vim.fn.fnamemodify(session.file, ":~") or "not written yet"
      )
    )
  else
    add("info", "no active session (:PiChat, :PiContinue or :PiSessions starts one)")
  end
  if status.tokenizer then
    add(
      "info",
      string.format(
        "tokenizer %s, summarizer %s, approval %s",
        status.tokenizer,
        tostring(status.summarizer),
        tostring(status.approval)
      )
    )
  end
  local watching = status.watching
  if watching then
    if watching.backend == vim.NIL or not watching.backend then
      add("info", "no prompt files watched yet (they are once a session or workspace folder is open)")
    else
      add(
        "ok",
        string.format(
          "watching (%s) %d root(s), %d prompt file(s)",
          watching.backend,
          #(watching.roots or {}),
          #(watching.files or {})
        )
      )
      for _, file in ipairs(watching.files or {}) do
        add("info", "watched: " .. vim.fn.fnamemodify(file, ":~:."))
      end
    end
  end
  return items
end

function M.check()
  local report = reporter()
  report.start("pi")
  for _, item in ipairs(M.collect()) do
    report[item[1]](item[2], item[3])
  end
end

return M
