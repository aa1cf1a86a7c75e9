-- Buffers follow the agent's edits: when an `edit` / `write` tool ends (`tool_execution_end`), every
-- loaded buffer of that file is reloaded when it has no unsaved changes, else the user is warned
-- (saving it would overwrite the agent's edit). The file is known from `tool_execution_start`.
local M = {}

local api = vim.api
local uv = vim.loop

M.tools = { edit = true, write = true }

local started = {} -- toolCallId -> absolute path of the file the tool was asked to change

local function pi()
  return require("pi")
end

--- The absolute path a tool's `path` argument names: `@` and `~` as pi reads them, relative to
--- the session's cwd.
function M.resolve(path, cwd)
  path = tostring(path):gsub("^@", "")
  if path:sub(1, 1) == "~" then
    path = vim.fn.expand("~") .. path:sub(2)
  elseif path:sub(1, 1) ~= "/" then
    path = (cwd or uv.cwd()) .. "/" .. path
  end
  local full = vim.fn.fnamemodify(path, ":p")
  return uv.fs_realpath(full) or full
end

--- The loaded buffers whose file is `path` (compared by real path).
function M.buffers_of(path)
  local found = {}
  for _, buf in ipairs(api.nvim_list_bufs()) do
    local name = api.nvim_buf_is_loaded(buf)
        and api.nvim_buf_get_option(buf, "buftype") == ""
        and api.nvim_buf_get_name(buf)
      or ""
    if name ~= "" then
      local full = vim.fn.fnamemodify(name, ":p")
      if (uv.fs_realpath(full) or full) == path then
        table.insert(found, buf)
      end
    end
  end
  return found
end

--- Reload `buf` from disk (it has no unsaved changes): :checktime with 'autoread' set for it, and
--- :edit when checktime saw no change (an edit that kept the size within the same second).
local function reload(buf, path)
  local before = api.nvim_buf_get_lines(buf, 0, -1, false)
  api.nvim_buf_call(buf, function()
    vim.cmd("setlocal autoread")
    vim.cmd("silent! checktime " .. buf)
    vim.cmd("setlocal autoread<")
  end)
  local disk = vim.fn.readfile(path)
  if vim.deep_equal(api.nvim_buf_get_lines(buf, 0, -1, false), before) and not vim.deep_equal(before, disk) then
    api.nvim_buf_call(buf, function()
      vim.cmd("silent! edit")
    end)
  end
end

--- Apply one `pi/event` (called for every event of every session).
function M.on_event(params)
  local event = params.event
  local id = event.toolCallId
  if not id or not M.tools[event.toolName] then
    return
  end
  if event.type == "tool_execution_start" then
    local args = type(event.args) == "table" and event.args or {}
    if type(args.path) == "string" and args.path ~= "" then
      local session = pi().state.session
      local cwd = session and session.sessionId == params.sessionId and session.cwd or nil
      started[id] = M.resolve(args.path, cwd)
    end
  elseif event.type == "tool_execution_end" then
    local path = started[id]
    started[id] = nil
    if not path or event.isError then
      return
    end
    M.follow(path, "agent edited")
  end
end

--- Show the disk's `path` in its loaded buffers after someone else wrote it (`who`: "agent
--- edited", "rewind restored"): buffers without unsaved changes are reloaded, the others warned.
---@param path string absolute
---@param who string
function M.follow(path, who)
  for _, buf in ipairs(M.buffers_of(uv.fs_realpath(path) or path)) do
    if not uv.fs_stat(path) then
      pi().notify(
        string.format("pi: %s %s: it is deleted on disk", who, vim.fn.fnamemodify(path, ":t")),
        vim.log.levels.WARN
      )
    elseif api.nvim_buf_get_option(buf, "modified") then
      pi().notify(
        string.format("pi: %s %s, unsaved here: :w overwrites it, :e! takes it", who, vim.fn.fnamemodify(path, ":t")),
        vim.log.levels.WARN
      )
    else
      reload(buf, path)
    end
  end
end

--- Follow the agent's edits (called once by setup()).
function M.attach()
  require("pi.client").on("PiEvent", M.on_event)
end

return M
