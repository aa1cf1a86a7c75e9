-- For tests/nvim/test_nvim_quit.py: start the pi plugin's server in a headless Neovim, make one
-- request (and with `prompt`, start a run and wait for its reply to stream), write {ready, pid} to
-- the file named in the config, then quit Neovim as a user does.
-- Config: a JSON file named by $PI_NVIM_TEST_CONFIG with { cmd, ready, settings?, prompt? }.
local decode = vim.json and vim.json.decode or vim.fn.json_decode
local encode = vim.json and vim.json.encode or vim.fn.json_encode
local handle = assert(io.open(os.getenv("PI_NVIM_TEST_CONFIG"), "r"))
local cfg = decode(handle:read("*a"))
handle:close()

local pi = require("pi")
pi.setup({ cmd = cfg.cmd, autostart = false, settings = cfg.settings or {} })
local ready = false
vim.api.nvim_create_autocmd("User", { pattern = "PiReady", callback = function() ready = true end })
local client = pi.start()
vim.wait(15000, function() return ready end, 20)
local answered = false
pi.request("pi/newSession", {}, function() answered = true end)
vim.wait(10000, function() return answered end, 20)

if cfg.prompt then -- quit while a run streams its reply
  local chat = require("pi.chat")
  vim.cmd("PiChat " .. cfg.prompt)
  vim.wait(30000, function()
    local buf = pi.state.session and chat.buffer(pi.state.session.sessionId)
    return buf ~= nil and table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), "\n"):find("Partial", 1, true) ~= nil
  end, 20)
end

local out = assert(io.open(cfg.ready, "w"))
out:write(encode({ ready = ready and answered, pid = client and client.rpc.pid or vim.NIL }))
out:close()
vim.cmd("qall!")
