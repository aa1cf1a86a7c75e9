-- End-to-end script for tests/nvim/test_nvim_client.py: runs inside a headless Neovim 0.7+,
-- drives the pi plugin against the real pi-lsp server and writes what it saw as JSON.
-- Config: a JSON file named by $PI_NVIM_TEST_CONFIG with
--   { cmd, sessions_dir, workspace, results, ready, external_timeout_ms }.
local uv = vim.loop
local t0 = uv.now()

local function read_file(path)
  local f = assert(io.open(path, "r"))
  local text = f:read("*a")
  f:close()
  return text
end

local function write_file(path, text)
  local tmp = path .. ".tmp"
  local f = assert(io.open(tmp, "w"))
  f:write(text)
  f:close()
  assert(os.rename(tmp, path))
end

local encode = vim.json and vim.json.encode or vim.fn.json_encode
local decode = vim.json and vim.json.decode or vim.fn.json_decode

local cfg = decode(read_file(os.getenv("PI_NVIM_TEST_CONFIG")))
local R = { steps = {}, notifications = {}, autocmd_count = 0, timings = {}, errors = {} }

local function mark(name)
  R.timings[name] = uv.now() - t0
end

local function finish()
  R.timings.total = uv.now() - t0
  local ok, text = pcall(encode, R)
  if not ok then
    text = encode({ fatal = "could not encode results: " .. tostring(text) })
  end
  write_file(cfg.results, text)
  vim.cmd("qall!")
end

local function main()
  local pi = require("pi")
  pi.setup({
    cmd = cfg.cmd,
    root_dir = cfg.workspace,
    timeout = 10000,
    settings = {
      sessionDir = cfg.sessions_dir,
      summarizer = "offline",
      tokenizer = "estimate",
      compaction = { enabled = false },
    },
  })
  pi.on("PiSessionChanged", function(p)
    table.insert(R.notifications, {
      sessionId = p.sessionId,
      leafId = p.leafId or vim.NIL,
      appendedIds = p.appendedIds or {},
      reason = p.reason,
      at = uv.now() - t0,
    })
  end)
  vim.api.nvim_create_autocmd("User", {
    pattern = "PiSessionChanged",
    callback = function()
      R.autocmd_count = R.autocmd_count + 1
    end,
  })

  R.ready = vim.wait(15000, pi.is_ready, 20)
  mark("ready")
  if not R.ready then
    error("server did not answer initialize within 15 s")
  end

  -- one step: a sync call whose result or error is recorded under `name`
  local function step(name, fn, params)
    local result, err = pi.sync[fn](params)
    R.steps[name] = { result = result, err = err and { code = err.code, message = err.message } or nil }
    if err then
      table.insert(R.errors, name .. ": " .. pi.format_error(err))
    end
    return result or {}
  end

  local function now_ms()
    return math.floor(vim.fn.localtime() * 1000)
  end
  local usage = {
    input = 10,
    output = 5,
    cacheRead = 0,
    cacheWrite = 0,
    totalTokens = 15,
    cost = { input = 0, output = 0, cacheRead = 0, cacheWrite = 0, total = 0 },
  }
  local function user(text)
    return { entry = { type = "message", message = { role = "user", content = text, timestamp = now_ms() } } }
  end
  local function assistant(text)
    return {
      entry = {
        type = "message",
        message = {
          role = "assistant",
          content = { { type = "text", text = text } },
          api = "anthropic-messages",
          provider = "anthropic",
          model = "claude-test",
          usage = usage,
          stopReason = "stop",
          timestamp = now_ms(),
        },
      },
    }
  end

  -- sessions and entries --------------------------------------------------------------
  local st = step("new", "new_session", { sessionDir = cfg.sessions_dir, cwd = cfg.workspace })
  local sid = st.sessionId
  R.active_after_new = pi.state.session and pi.state.session.sessionId or vim.NIL
  local u1 = step("u1", "append_entry", user("hello from neovim")).id
  local a1 = step("a1", "append_entry", assistant("hi from the assistant")).id
  local lbl = step("label", "set_label", { targetId = u1, label = "start" }).id
  local u2 = step("u2", "append_entry", user("second question")).id
  local a2 = step("a2", "append_entry", assistant("second answer")).id
  step("nav_a1", "navigate", { targetId = a1 })
  local u3 = step("u3", "append_entry", user("alternative question")).id
  local a3 = step("a3", "append_entry", assistant("alternative answer")).id
  R.ids = { u1 = u1, a1 = a1, label = lbl, u2 = u2, a2 = a2, u3 = u3, a3 = a3 }

  step("tree", "get_tree", {})
  step("tree_flat", "get_tree", { format = "flat" })
  step("ctx_leaf", "build_context", {})
  step("nav_u2", "navigate", { targetId = u2 })
  R.leaf_after_nav_u2 = pi.state.session and pi.state.session.leafId or vim.NIL
  R.editor_text = pi.state.editor_text or vim.NIL
  step("ctx_after_nav", "build_context", {})
  step("ctx_a2", "build_context", { leafId = a2 })
  step("ctx_null", "build_context", { leafId = vim.NIL })
  step("branch_a2", "get_branch", { fromId = a2 })
  step("entry_u1", "get_entry", u1)
  step("entries", "get_entries", { session = sid })
  step("entries_page", "get_entries", { offset = 1, limit = 2 })
  R.ids.name = step("name", "set_session_name", { name = "nvim e2e" }).id
  step("state_named", "get_session_state", {})
  step("set_leaf_a3", "set_leaf", { id = a3 })
  step("state_a3", "get_session_state", { session = sid })
  mark("api")

  -- user interface ------------------------------------------------------------------------
  local ui = require("pi.ui")
  vim.cmd("PiTree")
  local tree_buf = -1
  R.tree_ok = vim.wait(8000, function()
    tree_buf = vim.fn.bufnr("pi://tree")
    return tree_buf ~= -1 and vim.api.nvim_buf_line_count(tree_buf) > 1
  end, 20)
  if R.tree_ok then
    -- pi's default filter leaves the label and session_info entries out; `a` shows every entry
    R.tree_default_lines = vim.api.nvim_buf_get_lines(tree_buf, 0, -1, false)
    vim.cmd("execute \"normal a\"")
    vim.wait(5000, function()
      return vim.api.nvim_buf_line_count(tree_buf) > #R.tree_default_lines
    end, 20)
    R.tree_lines = vim.api.nvim_buf_get_lines(tree_buf, 0, -1, false)
    R.tree_ids = {}
    for i = 1, #R.tree_lines do
      vim.api.nvim_win_set_cursor(0, { i, 0 })
      R.tree_ids[i] = ui.tree_id_under_cursor() or vim.NIL
    end
    -- <CR> on the a2 line navigates there (a non-user target: the leaf becomes a2)
    for i, id in ipairs(R.tree_ids) do
      if id == a2 then
        vim.api.nvim_win_set_cursor(0, { i, 0 })
      end
    end
    local before = #R.notifications
    vim.cmd("execute \"normal \\<CR>\"")
    R.tree_enter_ok = vim.wait(5000, function()
      return #R.notifications > before and pi.state.session and pi.state.session.leafId == a2
    end, 20)
    R.leaf_after_enter = pi.state.session and pi.state.session.leafId or vim.NIL
    -- the tree buffer follows the change
    vim.wait(3000, function()
      for _, line in ipairs(vim.api.nvim_buf_get_lines(tree_buf, 0, -1, false)) do
        if line:find("second answer", 1, true) and line:find("leaf", 1, true) then
          return true
        end
      end
      return false
    end, 20)
    R.tree_lines_after_enter = vim.api.nvim_buf_get_lines(tree_buf, 0, -1, false)
  end

  vim.cmd("PiContext")
  local ctx_buf = -1
  R.context_ok = vim.wait(8000, function()
    ctx_buf = vim.fn.bufnr("pi://context")
    return ctx_buf ~= -1 and vim.api.nvim_buf_line_count(ctx_buf) > 1
  end, 20)
  if R.context_ok then
    R.context_lines = vim.api.nvim_buf_get_lines(ctx_buf, 0, -1, false)
  end

  local before = #R.notifications
  vim.cmd("PiLabel via-command")
  vim.cmd("PiName renamed in nvim")
  R.commands_ok = vim.wait(5000, function()
    return #R.notifications >= before + 2
  end, 20)
  step("state_renamed", "get_session_state", {})
  step("tree_final", "get_tree", { session = sid })
  step("list", "list_sessions", { cwd = cfg.workspace })
  step("list_query", "list_sessions", { cwd = cfg.workspace, query = "alternative" })
  -- :PiSessions with a picker that takes the first item
  vim.ui.select = function(items, opts, on_choice)
    R.picker = { count = #items, first = opts.format_item(items[1]), path = items[1].path }
    on_choice(items[1])
  end
  vim.cmd("PiSessions alternative")
  R.picker_ok = vim.wait(5000, function()
    return R.picker ~= nil and pi.state.session ~= nil and pi.state.session.file == R.picker.path
  end, 20)
  mark("ui")

  -- an append by another process --------------------------------------------------------
  local state = pi.state.session or {}
  local n_before = #R.notifications
  write_file(cfg.ready, encode({ file = state.file or vim.NIL, sessionId = sid }))
  R.external_ok = vim.wait(cfg.external_timeout_ms or 8000, function()
    for i = n_before + 1, #R.notifications do
      if R.notifications[i].reason == "external" then
        return true
      end
    end
    return false
  end, 20)
  mark("external")
  step("state_after_external", "get_session_state", { session = sid })
  step("ctx_after_external", "build_context", { session = sid })

  -- more sessions -----------------------------------------------------------------------
  local fork = step("fork", "fork_session", { sourcePath = state.file, cwd = cfg.workspace })
  step("branch_new", "branch_to_new_session", { session = sid, entryId = a3 })
  local branched = R.steps.branch_new.result or {}
  step("branch_new_path", "get_branch", { session = branched.sessionId })
  step("open_again", "open_session", { path = state.file })
  step("continue", "continue_recent", { cwd = cfg.workspace })
  if fork.sessionId then
    step("close_fork", "close_session", { session = fork.sessionId })
  end

  -- a tree deeper than Neovim's JSON decoder nests (1000 levels) ---------------------------
  vim.cmd("PiOpen " .. vim.fn.fnameescape(cfg.deep_file))
  R.open_command_ok = vim.wait(5000, function()
    return pi.state.session ~= nil and pi.state.session.file == cfg.deep_file
  end, 20)
  local deep = step("open_deep", "get_session_state", {})
  R.deep_entry_count = deep.entryCount or vim.NIL
  local deep_tree
  ui.fetch_tree(function(err, t)
    deep_tree = { err = err, tree = t }
  end)
  R.deep_tree_ok = vim.wait(10000, function()
    return deep_tree ~= nil
  end, 20)
  if deep_tree and deep_tree.tree then
    local lines, line_ids = require("pi.tree").render(deep_tree.tree)
    R.deep_tree = {
      lines = #lines,
      first = lines[1],
      last = lines[#lines],
      last_id = line_ids[#line_ids] or vim.NIL,
      leaf = deep_tree.tree.leafId or vim.NIL,
      source = ui.last_tree_source or vim.NIL,
    }
  elseif deep_tree then
    R.deep_tree = { err = pi.format_error(deep_tree.err) }
  end

  -- settings changes reach the server -------------------------------------------------------
  local settings = vim.deepcopy(pi.config.settings)
  settings.contextWindow = 100000
  pi.set_settings(settings)
  step("ctx_small_window", "build_context", { session = sid })

  -- :PiNew and :PiContinue make another session active
  local before_new = pi.state.session and pi.state.session.sessionId
  vim.cmd("PiNew")
  R.new_command_ok = vim.wait(5000, function()
    return pi.state.session ~= nil and pi.state.session.sessionId ~= before_new
  end, 20)
  local fresh = pi.state.session and pi.state.session.sessionId
  vim.cmd("PiContinue")
  R.continue_command_ok = vim.wait(5000, function()
    return pi.state.session ~= nil and pi.state.session.sessionId ~= fresh
  end, 20)

  -- methods wired later (compaction, system prompt, skills): they must answer, not hang
  R.later = {}
  for _, call in ipairs({
    { "prepare_compaction", { session = sid } },
    { "get_system_prompt", { cwd = cfg.workspace } },
    { "list_skills", { cwd = cfg.workspace } },
  }) do
    local result, err = pi.sync[call[1]](call[2], 5000)
    R.later[call[1]] = {
      supported = pi.supports(call[1]),
      keys = result and vim.tbl_keys(result) or vim.NIL,
      code = err and err.code or vim.NIL,
    }
  end

  -- errors ------------------------------------------------------------------------------
  local _, e1 = pi.sync.get_entry({ session = sid, id = "no-such-entry" })
  local _, e2 = pi.sync.get_session_state({ session = "no-such-session" })
  local _, e3 = pi.sync.append_entry({ session = sid, entry = { type = "message", message = { role = "robot" } } })
  R.error_codes = {
    entry = e1 and e1.code or vim.NIL,
    session = e2 and e2.code or vim.NIL,
    params = e3 and e3.code or vim.NIL,
  }

  R.changes_counter = pi.state.changes
  R.client_id = pi.client_id
  local exits = {}
  pi.on("PiExit", function(p)
    table.insert(exits, { code = p.code, signal = p.signal, at = uv.now() - t0 })
  end)
  mark("stop")
  pi.stop()
  R.stopped = vim.wait(8000, function()
    return pi.client() == nil and #vim.lsp.get_active_clients() == 0
  end, 20)
  R.exits = exits
  R.clients_left = vim.tbl_map(function(c)
    return c.id
  end, vim.lsp.get_active_clients())
  mark("stopped")
end

local ok, err = xpcall(main, debug.traceback)
if not ok then
  R.fatal = tostring(err)
end
finish()
