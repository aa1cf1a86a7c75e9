-- For tests/nvim/test_nvim_setup.py: setup() without `cmd`, the declared capabilities, :help pi.txt
-- and the length of the messages of session commands. Writes what it saw to $PI_NVIM_TEST_OUT.
local encode = vim.json and vim.json.encode or vim.fn.json_encode
local out = {}
local messages = {}
local real_notify = vim.notify
vim.notify = function(msg, level)
  table.insert(messages, msg)
  return real_notify(msg, level)
end

local pi = require("pi")
pi.setup({ autostart = false, server_dirs = { os.getenv("PI_NVIM_TEST_SERVER_DIR") } })
out.cmd = pi.server_cmd()
if vim.lsp.config then -- 0.11: registered with vim.lsp.config; a user's own config is merged over it
  out.lsp_config_cmd = vim.lsp.config.pi and vim.lsp.config.pi.cmd or vim.NIL
  vim.lsp.config("pi", { cmd_env = { PI_NVIM_USER_MARK = "merged" } })
end
local ready = false
vim.api.nvim_create_autocmd("User", { pattern = "PiReady", callback = function() ready = true end })
local client = pi.start()
vim.wait(15000, function() return ready end, 20)
out.ready = ready
out.approvals = client and client.config.capabilities.experimental.pi.approvals or vim.NIL
out.user_mark = client and (client.config.cmd_env or {}).PI_NVIM_USER_MARK or vim.NIL
vim.cmd("PiNew")
vim.wait(10000, function() return #messages > 0 end, 20)
out.messages = messages
out.columns = vim.o.columns
out.help_ok = pcall(vim.cmd, "help pi.txt")
out.help_file = vim.fn.expand("%:t")
vim.cmd("close")
out.help_pi_ok = pcall(vim.cmd, "help pi")
out.help_pi_path = vim.fn.expand("%:p")
out.help_pi_line = vim.api.nvim_get_current_line()

-- a buffer of attach_patterns is attached to the running client (0.11: through vim.lsp.enable)
local function pi_clients(filter)
  local all
  if vim.lsp.get_clients then
    all = vim.lsp.get_clients(filter)
  elseif filter.bufnr then -- 0.7
    all = vim.tbl_values(vim.lsp.buf_get_clients(filter.bufnr))
  else
    all = vim.lsp.get_active_clients()
  end
  return vim.tbl_filter(function(c) return c.name == "pi" end, all)
end
vim.fn.writefile({ "# Agents" }, "AGENTS.md")
vim.cmd("edit AGENTS.md")
out.agents_attached = vim.wait(10000, function() return #pi_clients({ bufnr = 0 }) == 1 end, 20)
out.pi_clients = #pi_clients({})

pi.stop()
pi.setup({ autostart = false, server_dirs = { "/nonexistent" } })
messages = {}
out.missing_client = pi.start() == nil
out.missing_message = messages[1] or vim.NIL

local f = assert(io.open(os.getenv("PI_NVIM_TEST_OUT"), "w"))
f:write(encode(out))
f:close()
vim.cmd("qall!")
