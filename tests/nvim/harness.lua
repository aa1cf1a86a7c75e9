-- Shared by the Lua scripts of tests/nvim that drive the plugin against a fake model: the config
-- (a JSON file named by $PI_NVIM_TEST_CONFIG with at least { cmd, settings, out }), the output
-- table (every vim.notify message recorded in `messages`), finish() and waiting helpers.
-- Load with: local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":h") .. "/harness.lua")
local H = {}
H.decode = vim.json and vim.json.decode or vim.fn.json_decode
H.encode = vim.json and vim.json.encode or vim.fn.json_encode

local handle = assert(io.open(os.getenv("PI_NVIM_TEST_CONFIG"), "r"))
H.cfg = H.decode(handle:read("*a"))
handle:close()

H.out = { asked = {}, messages = {} }
local real_notify = vim.notify
vim.notify = function(msg, level)
  table.insert(H.out.messages, msg)
  return real_notify(msg, level)
end

--- Write `out` for the Python side and quit.
function H.finish()
  local f = assert(io.open(H.cfg.out, "w"))
  f:write(H.encode(H.out))
  f:close()
  vim.cmd("qall!")
end

function H.lines(buf)
  return vim.api.nvim_buf_get_lines(buf or 0, 0, -1, false)
end

function H.text(buf)
  return table.concat(H.lines(buf), "\n")
end

--- Wait until fn() is true, else fail with the current buffer's text.
function H.wait_for(what, fn, ms)
  if not vim.wait(ms or 45000, fn, 20) then
    error("timed out waiting for " .. what .. "; buffer " .. vim.api.nvim_buf_get_name(0) .. ":\n" .. H.text())
  end
end

return H
