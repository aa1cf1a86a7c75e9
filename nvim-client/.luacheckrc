-- luacheck (make lint: cd nvim-client && luacheck lua). Neovim runs LuaJIT; `vim` is its one global.
std = "luajit"
read_globals = { "vim" }
max_line_length = 120 -- as stylua.toml's column_width

-- Two names reused on purpose until the plugin's split (issue 21) renames them:
files["lua/pi/chat.lua"] = { ignore = { "411/render" } } -- the render module, then render(buf, ...)
files["lua/pi/init.lua"] = { ignore = { "431/stopped" } } -- send(stopped) inside the request helper
