-- luacheck (make lint: cd nvim-client && luacheck lua). Neovim runs LuaJIT; `vim` is its one global.
std = "luajit"
-- `vim` is read-only except its option tables (vim.bo.x = ..., vim.wo.x = ..., vim.g.x = ...).
local writable = { read_only = false, other_fields = true }
read_globals = {
  vim = {
    other_fields = true,
    fields = { bo = writable, wo = writable, o = writable, opt = writable, g = writable, b = writable, w = writable, env = writable },
  },
}
max_line_length = 120 -- as stylua.toml's column_width

