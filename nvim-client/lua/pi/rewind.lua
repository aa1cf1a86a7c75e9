-- Rewinding the workspace with the tree (contract v3 "Checkpoints"): :PiRewind [entry] shows what
-- restoring the files to that entry's state would do (pi/previewRestore: files created, changed,
-- deleted; conflicts), asks, then restores (pi/restoreFiles); :PiRewind! overwrites the conflicts
-- after a second question; :PiUndoRestore puts back what the last restore changed.
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

--- The last restore that can be undone: { undoId, session }.
M.last = nil

local PREVIEW = "pi://rewind"

--- The absolute path of a workspace-relative path of the active session.
---@param path string
---@return string
function M.absolute(path)
  local session = pi().state.session or {}
  local cwd = session.cwd or vim.loop.cwd()
  return path:sub(1, 1) == "/" and path or (cwd .. "/" .. path)
end

--- Lines describing a pi/previewRestore result.
---@param preview table {targetId, files: [{path, change, conflict}]}
---@return string[]
function M.preview_lines(preview)
  local files = preview.files or {}
  local conflicts = 0
  for _, file in ipairs(files) do
    conflicts = conflicts + (file.conflict and 1 or 0)
  end
  local lines = {
    string.format(
      "# Rewind the files to %s: %d file(s)%s",
      tostring(preview.targetId):sub(1, 8),
      #files,
      conflicts > 0 and string.format(", %d conflict(s)", conflicts) or ""
    ),
    "",
  }
  for _, file in ipairs(files) do
    local line = string.format("  %-7s %s", file.change, file.path)
    if file.conflict then
      line = line .. "   CONFLICT: changed since (left alone; :PiRewind! overwrites it)"
    end
    table.insert(lines, line)
  end
  return lines
end

local function close_preview()
  local buf = vim.fn.bufnr(PREVIEW)
  if buf ~= -1 then
    for _, win in ipairs(vim.fn.win_findbuf(buf)) do
      if #api.nvim_list_wins() > 1 then
        api.nvim_win_close(win, true)
      end
    end
  end
end

--- Reload the buffers of the files a restore (or undo) wrote and say what it did.
local function report(what, result)
  for _, file in ipairs(result.restored or {}) do
    require("pi.reload").follow(M.absolute(file.path), what)
  end
  local conflicts = result.conflicts or {}
  local text = string.format("%s %d file(s)", what, #(result.restored or {}))
  if #conflicts > 0 then
    text = text .. string.format("; %d left alone (changed since): %s", #conflicts, table.concat(conflicts, ", "))
  end
  if result.undoId and result.undoId ~= vim.NIL then
    text = text .. "; :PiUndoRestore undoes"
  end
  info(text)
end

--- Restore the workspace to the state of `target_id` (pi/restoreFiles), remembering the undo.
---@param target_id string
---@param opts? {force?: boolean, paths?: string[]}
---@param callback? fun(err: table?, result: table?)
function M.restore(target_id, opts, callback)
  opts = opts or {}
  local session = pi().state.session
  local params = { targetId = target_id, force = opts.force == true }
  if opts.paths then
    params.paths = opts.paths
  end
  pi().restore_files(params, function(err, result)
    if err then
      fail("rewind", err)
    else
      if result.undoId and result.undoId ~= vim.NIL then
        M.last = { undoId = result.undoId, session = session and session.sessionId }
      end
      report("rewind restored", result)
    end
    if callback then
      callback(err, result)
    end
  end)
end

--- :PiRewind[!] [entry]: preview, ask, restore. The entry: `target`, else the one under the cursor
--- (:PiTree, a chat message), else the leaf. With `force` (the bang) conflicts are overwritten
--- after a second question. `callback(result|nil)` runs when it is over (nil: nothing was done).
---@param target? string
---@param force? boolean
---@param callback? fun(result: table?)
function M.rewind(target, force, callback)
  local done = callback or function() end
  local function from(target_id)
    if not target_id then
      pi().notify("pi: rewind: the session is empty", vim.log.levels.WARN)
      return done(nil)
    end
    pi().preview_restore({ targetId = target_id }, function(err, preview)
      if err then
        fail("rewind", err)
        return done(nil)
      end
      local files = preview.files or {}
      if #files == 0 then
        info("rewind: the files are already as they were there (or it has no checkpoint)")
        return done(nil)
      end
      local conflicts = 0
      for _, file in ipairs(files) do
        conflicts = conflicts + (file.conflict and 1 or 0)
      end
      local buf = require("pi.ui").scratch(PREVIEW, "pirewind")
      require("pi.ui").set_lines(buf, M.preview_lines(preview))
      vim.cmd("redraw") -- the stock vim.ui.select blocks before a redraw: show the preview first
      local question = string.format(
        "pi: restore %d file(s)%s?",
        #files - (force and 0 or conflicts),
        conflicts == 0 and ""
          or string.format(force and ", overwriting %d changed since" or " (%d conflict(s) left alone)", conflicts)
      )
      require("pi.commands").confirm(question, "Restore", function()
        local function go(overwrite)
          close_preview()
          M.restore(target_id, { force = overwrite }, function(err2, result)
            done(not err2 and result or nil)
          end)
        end
        if force and conflicts > 0 then
          vim.cmd("redraw")
          return require("pi.commands").confirm(
            string.format("pi: overwrite %d file(s) changed since they were written?", conflicts),
            "Overwrite",
            function()
              go(true)
            end,
            function()
              close_preview()
              done(nil)
            end
          )
        end
        go(false)
      end, function()
        close_preview()
        done(nil)
      end)
    end)
  end
  local here = require("pi.commands").entry_here(target)
  if here then
    return from(here)
  end
  pi().get_session_state({}, function(err, state)
    if err then
      fail("rewind", err)
      return done(nil)
    end
    from(state.leafId)
  end)
end

--- :PiUndoRestore: put back what the last restore changed (pi/undoRestore).
---@param callback? fun(result: table?)
function M.undo(callback)
  local last = M.last
  if not last then
    info("no restore to undo")
    return callback and callback(nil)
  end
  local params = { undoId = last.undoId }
  if last.session then
    params.session = last.session
  end
  pi().undo_restore(params, function(err, result)
    if err then
      fail("undo restore", err)
      return callback and callback(nil)
    end
    M.last = nil
    report("undo restored", result)
    if callback then
      callback(result)
    end
  end)
end

return M
