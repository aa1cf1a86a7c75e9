-- What can be typed in the chat's prompt area besides text: `/` commands (the plugin's built-ins,
-- pi's prompt templates and `/skill:name`, completed with <C-x><C-o>, and offered at once when `/`
-- starts a line), `@file` paths (completed; the model reads them), `#buffer` (replaced by the text
-- of the last file buffer you were in, unsaved changes included), and the selection that
-- `:'<,'>PiChat` sends with its path and lines.
local M = {}

local api = vim.api

local function pi()
  return require("pi")
end

--- `/name` typed alone runs the plugin's command instead of being sent.
M.builtins = {
  compact = "PiCompact",
  model = "PiModel",
  tree = "PiTree",
  fork = "PiFork",
  new = "PiNew",
  name = "PiName",
  context = "PiContext",
  changes = "PiChanges",
  rewind = "PiRewind",
  undo = "PiUndoRestore",
  sessions = "PiSessions",
  stop = "PiStop",
}

M.last_file_buf = nil -- the last buffer with a file the user was in (for #buffer)

--- The function that runs a built-in `/command [args]`, or nil when `text` is not one.
---@param text string
---@return fun()?
function M.builtin(text)
  local name, args = text:match("^/([%a][%w-]*)%s*(.-)%s*$")
  local command = name and M.builtins[name]
  if not command then
    return nil
  end
  return function()
    vim.cmd(command .. (args ~= "" and (" " .. args) or ""))
  end
end

--- A fenced block of `lines` of `buf` (1-based, inclusive) headed by its path and line numbers.
---@param buf integer
---@param first integer
---@param last integer
---@return string
function M.block(buf, first, last)
  local name = api.nvim_buf_get_name(buf)
  local path = name ~= "" and vim.fn.fnamemodify(name, ":~:.") or "[No Name]"
  local lines = api.nvim_buf_get_lines(buf, first - 1, last, false)
  local where = (first == 1 and last >= api.nvim_buf_line_count(buf)) and ""
    or string.format(" lines %d-%d", first, last)
  local fence = "```"
  for _, line in ipairs(lines) do
    if line:find("```", 1, true) then
      fence = "````"
    end
  end
  return string.format(
    "`%s`%s:\n%s%s\n%s\n%s",
    path,
    where,
    fence,
    api.nvim_buf_get_option(buf, "filetype"),
    table.concat(lines, "\n"),
    fence
  )
end

--- `text` with each `#buffer` replaced by the last file buffer's text (with its path).
---@param text string
---@return string
function M.expand(text)
  if not text:find("#buffer", 1, true) then
    return text
  end
  local buf = M.last_file_buf
  if not buf or not api.nvim_buf_is_valid(buf) then
    pi().notify("pi: #buffer: no file buffer visited yet; sent as typed", vim.log.levels.WARN)
    return text
  end
  local block = M.block(buf, 1, api.nvim_buf_line_count(buf))
  return (text:gsub("#buffer", function()
    return "\n\n" .. block .. "\n\n"
  end))
end

local commands_cache = {} -- session -> the pi/getCommands list
local fetching = {} -- session -> true while its pi/getCommands is unanswered
local waited = {} -- session -> true once a popup waited for its pi/getCommands

local function session_key()
  local session = pi().state.session
  return session and session.sessionId or ""
end

--- Ask for the templates and skills ahead (when a chat opens). A failure is not kept: the next
--- popup asks again.
function M.prefetch()
  local key = session_key()
  if commands_cache[key] or fetching[key] then
    return
  end
  fetching[key] = true
  pi().get_commands({}, function(err, result)
    fetching[key] = nil
    if not err and result then
      commands_cache[key] = result.commands or {}
    end
  end)
end

local function command_items()
  local key = session_key()
  if not commands_cache[key] and not waited[key] then
    -- a cold server's first pi/getCommands builds its run service (about 3 s measured): the
    -- popup waits for it (once: a server that does not answer is not waited for again) rather
    -- than offering the built-ins alone
    waited[key] = true
    M.prefetch()
    vim.wait(10000, function()
      return not fetching[key]
    end, 10)
  end
  local items = {}
  for name, command in pairs(M.builtins) do
    table.insert(items, { word = "/" .. name, menu = ":" .. command, kind = "pi" })
  end
  table.sort(items, function(a, b)
    return a.word < b.word
  end)
  for _, command in ipairs(commands_cache[key] or {}) do
    table.insert(items, {
      word = "/" .. command.name,
      menu = command.description and tostring(command.description):sub(1, 60) or "",
      kind = command.source,
    })
  end
  return items
end

--- 'omnifunc' of the chat buffer: `/` commands at the start of a line, `@` paths, `#buffer`.
---@param findstart integer
---@param base string
---@return integer|table
function M.omnifunc(findstart, base)
  if findstart == 1 then
    local line = api.nvim_get_current_line():sub(1, api.nvim_win_get_cursor(0)[2])
    if line:match("^/[%w:_-]*$") then
      return 0
    end
    local start = line:find("[@#][^%s]*$")
    return start and start - 1 or -3
  end
  local items = {}
  if base:sub(1, 1) == "/" then
    for _, item in ipairs(command_items()) do
      if item.word:sub(1, #base) == base then
        table.insert(items, item)
      end
    end
  elseif base:sub(1, 1) == "@" then
    for _, file in ipairs(vim.fn.getcompletion(base:sub(2), "file")) do
      table.insert(items, "@" .. file)
    end
  elseif ("#buffer"):sub(1, #base) == base then
    table.insert(items, { word = "#buffer", menu = "the text of the last file buffer" })
  end
  return items
end

local popup_group = api.nvim_create_augroup("pi_chat_slash_popup", { clear = true })

--- 'completeopt' for the popup of `/`: `saved` with "menuone" and "noinsert" added.
---@param saved string
---@return string
local function popup_completeopt(saved)
  local flags = vim.split(saved, ",", { plain = true, trimempty = true })
  for _, flag in ipairs({ "menuone", "noinsert" }) do
    if not vim.tbl_contains(flags, flag) then
      table.insert(flags, flag)
    end
  end
  return table.concat(flags, ",")
end

--- The keys `/` types: at the start of a line, `/` and the popup of commands. The popup offers
--- without inserting, and stays up when one command is left ('completeopt' gets "noinsert" and
--- "menuone" until the completion or insert mode ends, then is put back): with Vim's default the
--- first command would be inserted at once, so "/review" typed on would become "/changesreview";
--- here typed letters narrow the list and <C-y> takes the command.
---@return string
function M.slash_keys()
  if vim.fn.col(".") ~= 1 then
    return "/"
  end
  local saved = vim.o.completeopt
  if not saved:find("noselect", 1, true) then
    vim.o.completeopt = popup_completeopt(saved)
    api.nvim_clear_autocmds({ group = popup_group })
    api.nvim_create_autocmd({ "CompleteDone", "InsertLeave" }, {
      group = popup_group,
      once = true,
      callback = function()
        vim.o.completeopt = saved
        api.nvim_clear_autocmds({ group = popup_group })
      end,
    })
  end
  return api.nvim_replace_termcodes("/<C-x><C-o>", true, false, true)
end

--- Set up completion in a chat buffer (called when it is created).
---@param buf integer
function M.attach(buf)
  M.prefetch()
  _G.PiChatOmnifunc = M.omnifunc
  api.nvim_buf_set_option(buf, "omnifunc", "v:lua.PiChatOmnifunc")
  api.nvim_buf_set_keymap(buf, "i", "/", "", {
    expr = true,
    noremap = true,
    callback = M.slash_keys,
    desc = "pi: complete / commands at the start of a line",
  })
end

--- Remember the last file buffer the user entered (for #buffer); called once by setup().
function M.track()
  api.nvim_create_autocmd("BufEnter", {
    group = api.nvim_create_augroup("pi_nvim_complete", { clear = true }),
    callback = function(ev)
      if api.nvim_buf_get_option(ev.buf, "buftype") == "" and api.nvim_buf_get_name(ev.buf) ~= "" then
        M.last_file_buf = ev.buf
      end
    end,
  })
end

return M
