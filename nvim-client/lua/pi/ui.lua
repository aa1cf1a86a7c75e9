-- User commands and scratch buffers (:PiTree, :PiContext, :PiSessions, ...).
local M = {}

local api = vim.api
local tree = require("pi.tree")

local function pi()
  return require("pi")
end

-- Trees deeper than this are fetched without nesting: Neovim's JSON decoder stops at 1000 levels.
M.nested_tree_limit = 400
M.flat_tree = nil -- nil: unknown; true/false once the server answered a flat request

local tree_ids = {} -- bufnr -> { [line] = entry id }

local function info(msg)
  pi().notify("pi: " .. msg, vim.log.levels.INFO)
end

--- A callback that says in one line which session a request opened (or its error).
function M.report(what)
  return function(err, result)
    if err then
      pi().notify("pi: " .. what .. ": " .. pi().format_error(err), vim.log.levels.ERROR)
    elseif type(result) == "table" and result.sessionId then
      local file = result.file and (" (" .. vim.fn.fnamemodify(result.file, ":~:.") .. ")") or ""
      info(string.format("%s %s%s", what, result.name or result.sessionId:sub(1, 8), file))
    end
  end
end

--- Focus the window showing `buf`, else show it in a new `split` (default "botright split").
function M.show_buffer(buf, split)
  local win = vim.fn.bufwinid(buf)
  if win == -1 then
    vim.cmd(split or "botright split")
    api.nvim_win_set_buf(0, buf)
  else
    api.nvim_set_current_win(win)
  end
  return buf
end

--- `?` in a pi buffer: its buffer-local normal-mode keys with what they do, in a `pi://keys` split.
---@param title string
---@param buf integer the buffer whose keys are listed
function M.show_keys(title, buf)
  local lines = { "# " .. title, "" }
  local maps = api.nvim_buf_get_keymap(buf, "n")
  table.sort(maps, function(a, b)
    return a.lhs < b.lhs
  end)
  for _, map in ipairs(maps) do
    if map.desc and map.desc:sub(1, 3) == "pi:" then
      table.insert(lines, string.format("  %-12s %s", (map.lhs:gsub(" ", "<Space>")), map.desc:sub(5)))
    end
  end
  vim.list_extend(lines, { "", "q closes this list" })
  local keys = M.scratch("pi://keys", "pikeys")
  vim.keymap.set("n", "q", "<cmd>close<cr>", { buffer = keys, silent = true, desc = "pi: close" })
  M.set_lines(keys, lines)
  return keys
end

--- A named scratch buffer, shown in a window (reused when already visible).
function M.scratch(name, filetype)
  local buf = vim.fn.bufnr(name)
  if buf == -1 or not api.nvim_buf_is_valid(buf) then
    buf = api.nvim_create_buf(false, true)
    api.nvim_buf_set_name(buf, name)
    api.nvim_buf_set_option(buf, "buftype", "nofile")
    api.nvim_buf_set_option(buf, "bufhidden", "hide")
    api.nvim_buf_set_option(buf, "swapfile", false)
    api.nvim_buf_set_option(buf, "filetype", filetype)
  end
  return M.show_buffer(buf)
end

--- Replace the text of a read-only scratch buffer.
function M.set_lines(buf, lines)
  api.nvim_buf_set_option(buf, "modifiable", true)
  api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  api.nvim_buf_set_option(buf, "modifiable", false)
end

-- ---------------------------------------------------------------- tree

-- Requests here never name a session: they go to the server's active one and so never change it
-- (a background refresh must not steal the active session from the user's next request).
local function fetch_entries(leaf_id, callback)
  local all, offset, limit = {}, 0, 10000
  local function page()
    pi().get_entries({ offset = offset, limit = limit }, function(err, result)
      if err then
        return callback(err)
      end
      for _, e in ipairs(result.entries or {}) do
        table.insert(all, e)
      end
      offset = offset + #(result.entries or {})
      if #(result.entries or {}) == 0 or offset >= (result.total or 0) then
        return callback(nil, tree.from_entries(all, leaf_id))
      end
      page()
    end)
  end
  page()
end

--- Fetch the tree of the active session: `pi/getTree` with `format: "flat"` when the server
--- offers it (nested otherwise), or built from `pi/getEntries` when a nested answer could be too
--- deep for Neovim's JSON decoder. callback(err, {leafId, roots}).
function M.fetch_tree(callback)
  pi().get_session_state({}, function(err, state)
    if err then
      return callback(err)
    end
    local formats = pi().capabilities().getTreeFormats
    if M.flat_tree == nil and type(formats) == "table" then
      M.flat_tree = vim.tbl_contains(formats, "flat")
    end
    if M.flat_tree ~= true and (state.entryCount or 0) > M.nested_tree_limit then
      M.last_tree_source = "entries"
      return fetch_entries(state.leafId, callback)
    end
    local params = M.flat_tree == false and {} or { format = "flat" }
    pi().get_tree(params, function(err2, result)
      if err2 then
        return callback(err2)
      end
      if result.nodes then
        M.flat_tree = true
        M.last_tree_source = "flat"
      elseif result.roots then
        M.flat_tree = false
        M.last_tree_source = "nested"
      end
      callback(nil, tree.normalise(result))
    end)
  end)
end

--- The tree filter (one of pi.tree.filters); `f` cycles, `a` toggles "all".
M.tree_filter = "default"

local function render_tree(buf, t)
  local lines, ids = tree.render(t, { filter = M.tree_filter })
  tree_ids[buf] = ids
  M.set_lines(buf, lines)
  -- put the cursor on the leaf
  for i, id in ipairs(ids) do
    if id and id == t.leafId then
      local win = vim.fn.bufwinid(buf)
      if win ~= -1 then
        api.nvim_win_set_cursor(win, { i, 0 })
      end
      break
    end
  end
end

--- Entry id on the cursor line of a :PiTree buffer (nil elsewhere).
function M.tree_id_under_cursor()
  local buf = api.nvim_get_current_buf()
  local ids = tree_ids[buf]
  if not ids then
    return nil
  end
  local id = ids[api.nvim_win_get_cursor(0)[1]]
  return id or nil
end

function M.refresh_tree(callback)
  local buf = vim.fn.bufnr("pi://tree")
  if buf == -1 or not pi().is_ready() then -- never (re)start the server for a refresh
    return
  end
  M.fetch_tree(function(err, t)
    if err and err.code == pi().codes.SessionNotFound then
      if api.nvim_buf_is_valid(buf) then
        tree_ids[buf] = {}
        M.set_lines(buf, { "(no active session)" })
      end
    elseif err and err.code ~= pi().codes.NotRunning then
      pi().notify("pi: tree: " .. pi().format_error(err), vim.log.levels.ERROR)
    elseif not err and api.nvim_buf_is_valid(buf) then
      render_tree(buf, t)
    end
    if callback then
      callback(err, t)
    end
  end)
end

--- Navigate (pi/navigate) to the entry under the cursor; with `summarize`, the branch left is
--- summarised into a branch_summary entry first (pi's navigate-with-summary).
function M.tree_navigate(summarize)
  local id = M.tree_id_under_cursor()
  if not id then
    return
  end
  local params = { targetId = id }
  if summarize == true then
    params.summarize = true
    info("summarising the branch left...")
  end
  pi().navigate(params, function(err, result)
    if err then
      return pi().notify("pi: navigate: " .. pi().format_error(err), vim.log.levels.ERROR)
    end
    if result.editorText then
      info("editor text: " .. result.editorText:gsub("\n", " "):sub(1, 80))
    end
    M.refresh_tree()
  end)
end

--- Use `filter` (default: the next of pi.tree.filters) in :PiTree and redraw it.
function M.set_tree_filter(filter)
  if not filter then
    local index = 1
    for i, name in ipairs(tree.filters) do
      if name == M.tree_filter then
        index = i
      end
    end
    filter = tree.filters[index % #tree.filters + 1]
  end
  M.tree_filter = filter
  info("tree filter: " .. filter)
  M.refresh_tree()
end

function M.open_tree(callback)
  M.fetch_tree(function(err, t)
    if err then
      pi().notify("pi: tree: " .. pi().format_error(err), vim.log.levels.ERROR)
      if callback then
        callback(err)
      end
      return
    end
    local buf = M.scratch("pi://tree", "pitree")
    local function key(lhs, fn, desc)
      vim.keymap.set("n", lhs, fn, { buffer = buf, silent = true, desc = "pi: " .. desc })
    end
    key("<CR>", M.tree_navigate, "navigate here")
    key("S", function()
      M.tree_navigate(true)
    end, "navigate here, summarising the branch left")
    key("f", function()
      M.set_tree_filter()
    end, "next tree filter")
    key("R", function()
      require("pi.rewind").rewind(M.tree_id_under_cursor(), false)
    end, "rewind the files to this entry (preview first)")
    key("a", function()
      M.set_tree_filter(M.tree_filter == "all" and "default" or "all")
    end, "show all entries / default filter")
    vim.keymap.set("n", "r", function()
      M.refresh_tree()
    end, { buffer = buf, silent = true, desc = "pi: refresh tree" })
    vim.keymap.set("n", "q", "<cmd>close<cr>", { buffer = buf, silent = true, desc = "pi: close" })
    key("?", function()
      M.show_keys("pi tree keys", buf)
    end, "the keys of this buffer")
    render_tree(buf, t)
    if callback then
      callback(nil, buf)
    end
  end)
end

-- ---------------------------------------------------------------- context

local function add_text(lines, text)
  for _, l in ipairs(vim.split(tostring(text or ""), "\n", true)) do
    table.insert(lines, l)
  end
end

--- Markdown lines for a pi/buildContext result.
function M.context_lines(ctx)
  local lines = {}
  local usage = ctx.usage or {}
  local model = ctx.model and (tostring(ctx.model.provider) .. "/" .. tostring(ctx.model.modelId)) or "no model"
  table.insert(
    lines,
    string.format(
      "# pi context: %d messages, %s tokens of %s (%s%%), %s, thinking %s",
      #(ctx.messages or {}),
      tostring(usage.tokens or "?"),
      tostring(usage.contextWindow or "?"),
      usage.percent and string.format("%.1f", usage.percent) or "?",
      model,
      tostring(ctx.thinkingLevel or "off")
    )
  )
  for _, msg in ipairs(ctx.messages or {}) do
    table.insert(lines, "")
    local role = msg.role or "?"
    if role == "compactionSummary" or role == "branchSummary" then
      table.insert(lines, "## " .. role)
      add_text(lines, msg.summary)
    elseif role == "bashExecution" then
      table.insert(lines, "## bashExecution: $ " .. tostring(msg.command))
      add_text(lines, msg.output)
    else
      local extra = msg.toolName or msg.customType or msg.model
      table.insert(lines, "## " .. role .. (extra and (" (" .. tostring(extra) .. ")") or ""))
      if type(msg.content) == "string" then
        add_text(lines, msg.content)
      else
        for _, block in ipairs(msg.content or {}) do
          if block.type == "text" then
            add_text(lines, block.text)
          elseif block.type == "thinking" then
            add_text(lines, "> thinking: " .. tostring(block.thinking))
          elseif block.type == "toolCall" then
            add_text(
              lines,
              string.format(
                "> tool call %s %s",
                tostring(block.name),
                pi().json_encode(block.arguments or vim.empty_dict())
              )
            )
          elseif block.type == "image" then
            table.insert(lines, "> [image " .. tostring(block.mimeType) .. "]")
          end
        end
      end
    end
  end
  return lines
end

function M.open_context(callback)
  pi().build_context({}, function(err, ctx)
    if err then
      pi().notify("pi: context: " .. pi().format_error(err), vim.log.levels.ERROR)
      if callback then
        callback(err)
      end
      return
    end
    local buf = M.scratch("pi://context", "markdown")
    vim.keymap.set("n", "q", "<cmd>close<cr>", { buffer = buf, silent = true, desc = "pi: close" })
    M.set_lines(buf, M.context_lines(ctx))
    if callback then
      callback(nil, buf)
    end
  end)
end

function M.refresh_context()
  local buf = vim.fn.bufnr("pi://context")
  if buf == -1 or vim.fn.bufwinid(buf) == -1 or not pi().is_ready() then
    return
  end
  pi().build_context({}, function(err, ctx)
    if not api.nvim_buf_is_valid(buf) then
      return
    end
    if not err then
      M.set_lines(buf, M.context_lines(ctx))
    elseif err.code == pi().codes.SessionNotFound then
      M.set_lines(buf, { "(no active session)" })
    end
  end)
end

-- ---------------------------------------------------------------- sessions, labels, names

function M.pick_session(query)
  local params = {}
  if query and query ~= "" then
    params.query = query
  end
  pi().list_sessions(params, function(err, result)
    if err then
      return pi().notify("pi: sessions: " .. pi().format_error(err), vim.log.levels.ERROR)
    end
    local sessions = result.sessions or {}
    if #sessions == 0 then
      return info("no sessions")
    end
    vim.ui.select(sessions, {
      prompt = "pi sessions",
      format_item = function(s)
        local title = s.name or (s.firstMessage or ""):gsub("\n", " ")
        return string.format("%s  %s  (%d messages)", tostring(s.modified or ""):sub(1, 16), title, s.messageCount or 0)
      end,
    }, function(choice)
      if choice then
        pi().open_session({ path = choice.path }, M.report("opened"))
      end
    end)
  end)
end

--- Label the entry under the cursor in :PiTree, else the leaf; empty text clears the label.
function M.label(text)
  local label = (text and text ~= "") and text or vim.NIL
  local function apply(target)
    if not target then
      return pi().notify("pi: label: no entry to label", vim.log.levels.WARN)
    end
    pi().set_label({ targetId = target, label = label }, function(err)
      if err then
        pi().notify("pi: label: " .. pi().format_error(err), vim.log.levels.ERROR)
      end
    end)
  end
  local target = M.tree_id_under_cursor()
  if target then
    return apply(target)
  end
  pi().get_session_state({}, function(err, state)
    if err then
      return pi().notify("pi: label: " .. pi().format_error(err), vim.log.levels.ERROR)
    end
    apply(state.leafId)
  end)
end

--- Keep :PiTree and :PiContext current (called once by setup()).
function M.attach()
  local client = require("pi.client")
  local function refresh()
    local buf = vim.fn.bufnr("pi://tree")
    if buf ~= -1 and vim.fn.bufwinid(buf) ~= -1 then
      M.refresh_tree()
    end
    M.refresh_context()
  end
  client.on("PiSessionChanged", refresh)
  client.on("PiSessionActive", refresh)
  api.nvim_create_autocmd("BufWipeout", {
    group = api.nvim_create_augroup("pi_nvim_ui", { clear = true }),
    pattern = "pi://tree",
    callback = function(ev)
      tree_ids[ev.buf] = nil
    end,
  })
end

return M
