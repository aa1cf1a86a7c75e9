-- For tests/nvim/test_nvim_setup.py: the lazy.nvim spec of nvim-client/README.md, read as Lua, and
-- what lazy.nvim does with it (require(spec.main).setup(spec.opts)), without starting a server.
-- $PI_NVIM_TEST_SPEC names a file holding the spec's Lua; $PI_NVIM_TEST_OUT where to write.
local encode = vim.json and vim.json.encode or vim.fn.json_encode
local out = {}
local ok, err = pcall(function()
  local spec = assert(loadfile(os.getenv("PI_NVIM_TEST_SPEC")))()
  out.main, out.cmd = spec.main, spec.cmd
  local opts = vim.deepcopy(spec.opts)
  opts.autostart = false -- lazy would start it: nothing to start here
  require(spec.main).setup(opts)
  out.missing_commands = vim.tbl_filter(function(name)
    return vim.fn.exists(":" .. name) ~= 2
  end, spec.cmd)
  local known_options = vim.tbl_keys(require("pi").config)
  out.unknown_options = vim.tbl_filter(function(key)
    return not vim.tbl_contains(known_options, key)
  end, vim.tbl_keys(spec.opts))
  local chat_keys = require("pi.chat").keys
  out.unknown_chat_keys = vim.tbl_filter(function(key)
    return chat_keys[key] == nil
  end, vim.tbl_keys(spec.opts.chat_keys or {}))
  out.key_map_yank = require("pi.chat").key_map().yank_code
end)
out.error = not ok and tostring(err) or nil
local f = assert(io.open(os.getenv("PI_NVIM_TEST_OUT"), "w"))
f:write(encode(out))
f:close()
vim.cmd("qall!")
