-- Context usage for the statusline, and one-line notifications for automatic compaction and
-- retries. statusline() only reads a cache: the cache is refreshed (one pi/getSessionStats,
-- debounced) when a run ends, the session changes or another session becomes active.
local M = {}

local function pi()
  return require("pi")
end

M.usage = {} -- sessionId -> ContextUsage {tokens, contextWindow, percent, ...}
M.debounce_ms = 150

local timer = nil

--- Ask for the active session's usage once, `debounce_ms` after the last call.
function M.refresh()
  if timer and not timer:is_closing() then
    timer:stop()
    timer:close()
  end
  timer = vim.defer_fn(function()
    timer = nil
    -- addressing the shown session while another is being opened would make it active again
    pi().when_settled(function()
      local session = pi().state.session
      if not session or not pi().is_ready() then -- never (re)start the server for a statusline
        return
      end
      local id = session.sessionId
      pi().get_session_stats({ session = id }, function(err, stats)
        if not err and stats and stats.contextUsage then
          M.usage[id] = stats.contextUsage
          pcall(vim.cmd, "redrawstatus")
        end
      end)
    end)
  end, M.debounce_ms)
end

local function tokens(n)
  return require("pi.commands").tokens(n)
end

--- "pi 12.3k/200k 6%" for the active session ("?" right after a compaction, until the next reply);
--- "" with no session. Cheap: no request is made.
function M.statusline()
  local session = pi().state.session
  if not session then
    return ""
  end
  local text = "pi"
  local usage = M.usage[session.sessionId]
  if usage then
    text = string.format("pi %s/%s", tokens(usage.tokens), tokens(usage.contextWindow))
    if type(usage.percent) == "number" then
      text = text .. string.format(" %d%%", math.floor(usage.percent + 0.5))
    end
  end
  if pi().state.compacting[session.sessionId] then
    text = text .. " (compacting)"
  elseif require("pi.chat").is_running(session.sessionId) then
    text = text .. " working..."
  end
  return text
end

--- Notify about what a `pi/event` says happens automatically (retries, compaction of a run).
function M.on_event(params)
  local event = type(params) == "table" and params.event or nil
  if type(event) ~= "table" then
    return
  end
  local kind = event.type
  if kind == "auto_retry_start" then
    pi().notify(
      string.format(
        "pi: retry %s/%s in %ss: %s",
        tostring(event.attempt),
        tostring(event.maxAttempts),
        tostring((event.delayMs or 0) / 1000),
        tostring(event.errorMessage or "")
      ),
      vim.log.levels.WARN
    )
  elseif kind == "auto_retry_end" and event.success == false then
    pi().notify("pi: gave up retrying: " .. tostring(event.finalError or ""), vim.log.levels.ERROR)
  elseif kind == "agent_end" then
    M.refresh()
  end
end

--- pi/compactionStarted: say so when it is automatic (a manual one was asked for).
function M.on_compaction_started(params)
  if params.reason and params.reason ~= "manual" then
    pi().notify(string.format("pi: compacting the session (%s)...", params.reason))
  end
end

--- pi/compactionEnded: the outcome of an automatic compaction, in one line.
function M.on_compaction_ended(params)
  M.refresh()
  if not params.reason or params.reason == "manual" then
    return
  end
  if params.error then
    pi().notify("pi: " .. tostring(params.error), vim.log.levels.ERROR)
  elseif params.result then
    pi().notify(
      string.format(
        "pi: compacted (%s): %s -> %s tokens%s",
        params.reason,
        tokens(params.result.tokensBefore),
        tokens(params.result.tokensAfter),
        params.willRetry and ", retrying" or ""
      )
    )
  end
end

--- Keep the usage cache current and report automatic work (called once by setup()).
function M.attach()
  local client = require("pi.client")
  client.on("PiEvent", M.on_event)
  client.on("PiCompactionStarted", M.on_compaction_started)
  client.on("PiCompactionEnded", M.on_compaction_ended)
  pi().on("PiSessionActive", M.refresh)
  pi().on("PiSessionChanged", M.refresh)
end

return M
