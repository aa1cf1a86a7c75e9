-- :PiChanges: the files the last run changed (pi/getChanges) as a quickfix list. In that list
-- <CR> opens the file in a new tab beside its text before the run (diff mode), and `X` reverts the
-- file to that text (pi/restoreFiles of the run's start, for that path only); `X` in the diff tab
-- too.
local M = {}

local api = vim.api

local function pi()
  return require("pi")
end

local TITLE = "pi changes"
M.revert_key = "X"

local function info(msg)
  pi().notify("pi: " .. msg, vim.log.levels.INFO)
end

local function fail(what, err)
  pi().notify("pi: " .. what .. ": " .. pi().format_error(err), vim.log.levels.ERROR)
end

--- The pi context of the current quickfix list ({fromId, toId, files}), or nil for another list.
local function list_context()
  local what = vim.fn.getqflist({ title = 1, context = 0 })
  if type(what.context) == "table" and what.context.pi_changes then
    return what.context.pi_changes
  end
  return nil
end

--- The change {path, change} of the quickfix entry under the cursor (nil outside a pi list).
local function entry_under_cursor()
  local context = list_context()
  if not context then
    return nil
  end
  local index = vim.fn.line(".")
  return context.files[index], context
end

--- Revert `file` to its text before the run (asks before overwriting a file changed since).
---@param file {path: string}
---@param context {fromId: string}
---@param callback? fun(result: table?)
function M.revert(file, context, callback)
  local rewind = require("pi.rewind")
  local function go(force)
    rewind.restore(context.fromId, { paths = { file.path }, force = force }, function(err, result)
      if not err and not force and #(result.conflicts or {}) > 0 then
        return require("pi.commands").confirm(
          string.format("pi: %s was changed since the run; overwrite it?", file.path),
          "Overwrite",
          function()
            go(true)
          end,
          function()
            if callback then
              callback(result)
            end
          end
        )
      end
      if callback then
        callback(not err and result or nil)
      end
    end)
  end
  go(false)
end

--- Open `file` in a new tab beside its text before the run, in diff mode.
---@param file {path: string, change: string}
---@param context {fromId: string, toId: string}
---@param callback? fun(tab: integer?)
function M.open_diff(file, context, callback)
  pi().get_changes(
    { fromId = context.fromId, toId = context.toId, paths = { file.path }, diff = true },
    function(err, result)
      if err then
        fail("changes", err)
        return callback and callback(nil)
      end
      local change = (result.files or {})[1] or {}
      local diff = require("pi.diff")
      local hunks = diff.parse(type(change.diff) == "string" and change.diff or "")
      local path = require("pi.rewind").absolute(file.path)
      local now = vim.loop.fs_stat(path) and vim.fn.readfile(path) or {}
      local before = diff.unapply(now, hunks)
      vim.cmd("tabnew")
      local tab = api.nvim_get_current_tabpage()
      if not before then -- the file changed since the run: show the run's diff itself
        local buf = require("pi.ui").scratch("pi://changes/" .. file.path .. ".diff", "diff")
        require("pi.ui").set_lines(buf, vim.split(change.diff or "", "\n", { plain = true }))
        vim.cmd("only")
      else
        if vim.loop.fs_stat(path) then
          vim.cmd("edit " .. vim.fn.fnameescape(path))
        else
          vim.cmd("enew")
          vim.bo.buftype = "nofile"
        end
        vim.cmd("diffthis")
        local after_win = api.nvim_get_current_win()
        vim.cmd("leftabove vnew")
        local buf = api.nvim_get_current_buf()
        vim.bo.buftype, vim.bo.bufhidden, vim.bo.swapfile = "nofile", "wipe", false
        pcall(api.nvim_buf_set_name, buf, "pi://before/" .. file.path)
        api.nvim_buf_set_lines(buf, 0, -1, false, before)
        vim.bo.modifiable = false
        local ok, ft = pcall(vim.filetype.match, { filename = path }) -- 0.8+
        if ok and type(ft) == "string" then
          vim.bo.filetype = ft
        end
        vim.cmd("diffthis")
        api.nvim_set_current_win(after_win)
      end
      for _, win in ipairs(api.nvim_tabpage_list_wins(tab)) do
        local buf = api.nvim_win_get_buf(win)
        vim.keymap.set("n", M.revert_key, function()
          M.revert(file, context)
        end, { buffer = buf, desc = "pi: revert this file to its text before the run" })
        local hint = string.format(
          "pi: %s (%s) before | after the run   %s reverts the file",
          file.path,
          file.change,
          M.revert_key
        )
        api.nvim_win_set_option(
          win,
          vim.fn.has("nvim-0.8") == 1 and "winbar" or "statusline",
          (hint:gsub("%%", "%%%%"))
        )
      end
      if callback then
        callback(tab)
      end
    end
  )
end

local function map_list_keys()
  local buf = api.nvim_get_current_buf()
  vim.keymap.set("n", "<CR>", function()
    local file, context = entry_under_cursor()
    if not file then
      return vim.cmd(".cc")
    end
    M.open_diff(file, context)
  end, { buffer = buf, desc = "pi: diff of the change under the cursor" })
  vim.keymap.set("n", M.revert_key, function()
    local file, context = entry_under_cursor()
    if file then
      M.revert(file, context)
    end
  end, { buffer = buf, desc = "pi: revert the file under the cursor to its text before the run" })
end

--- :PiChanges: the files the last run changed as a quickfix list (opened).
---@param callback? fun(context: table?)
function M.open(callback)
  pi().get_changes({}, function(err, result)
    if err then
      fail("changes", err)
      return callback and callback(nil)
    end
    local files = result.files or {}
    if #files == 0 then
      info("changes: the last run changed no file")
      return callback and callback(nil)
    end
    local context = { fromId = result.fromId, toId = result.toId, files = files }
    local items = {}
    for _, file in ipairs(files) do
      table.insert(items, { filename = require("pi.rewind").absolute(file.path), lnum = 1, text = file.change })
    end
    vim.fn.setqflist({}, " ", {
      title = string.format("%s: %d file(s); <CR> diff, %s revert", TITLE, #files, M.revert_key),
      items = items,
      context = { pi_changes = context },
    })
    vim.cmd("botright copen")
    map_list_keys()
    if callback then
      callback(context)
    end
  end)
end

return M
