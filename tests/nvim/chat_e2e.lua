-- For tests/nvim/test_nvim_chat.py: :PiChat against the real server and a fake model. Config: a JSON
-- file named by $PI_NVIM_TEST_CONFIG with { cmd, settings, out }. Writes what it saw to `out`.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":h") .. "/harness.lua")
local cfg, out, finish = H.cfg, H.out, H.finish

local ok, err = pcall(function()
  local pi = require("pi")
  local chat = require("pi.chat")
  pi.setup({ cmd = cfg.cmd, autostart = false, settings = cfg.settings })
  vim.ui.select = function(items, opts, on_choice) -- the user picks "Allow" in the picker
    local shown = {}
    for _, win in ipairs(vim.api.nvim_list_wins()) do
      local b = vim.api.nvim_win_get_buf(win)
      table.insert(shown, { filetype = vim.bo[b].filetype, lines = vim.api.nvim_buf_get_lines(b, 0, -1, false) })
    end
    table.insert(out.asked, { items = items, prompt = opts.prompt, windows = shown })
    vim.defer_fn(function() on_choice(items[1], 1) end, 10)
  end
  local text, wait_for = H.text, H.wait_for

  -- 1. :PiChat hello: a new session, the reply streams into the chat buffer
  vim.cmd("PiChat hello")
  wait_for("the first reply", function() return text():find("Hello from the fake model.", 1, true) ~= nil end)
  local buf = vim.api.nvim_get_current_buf()
  wait_for("the run to end", function() return not chat.chat(buf).running end)
  out.filetype = vim.bo[buf].filetype
  out.first = vim.api.nvim_buf_get_lines(buf, 0, -1, false)

  -- 2. typed in the prompt area, sent with <CR> while the cursor reads the top; bash is approved
  local last = vim.api.nvim_buf_line_count(buf)
  vim.api.nvim_buf_set_lines(buf, last - 1, last, false, { "run it" })
  vim.api.nvim_win_set_cursor(0, { 1, 2 })
  vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes("<CR>", true, false, true), "x", false)
  wait_for("the second reply", function() return text():find("Done.", 1, true) ~= nil end)
  wait_for("the run to end", function() return not chat.chat(buf).running end)
  out.cursor = vim.api.nvim_win_get_cursor(0)
  out.second = vim.api.nvim_buf_get_lines(buf, 0, -1, false)

  -- 3. a reply that stalls mid-stream is stopped with :PiStop
  vim.cmd("PiChat never ends")
  wait_for("the stalled reply", function() return (chat.chat(buf).text or ""):find("Partial", 1, true) ~= nil end)
  out.partial = chat.chat(buf).text
  vim.cmd("PiStop")
  wait_for("the abort", function() return text():find("_(aborted", 1, true) ~= nil end)
  wait_for("the run to end", function() return not chat.chat(buf).running end)
  out.third = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
end)
if not ok then
  out.error = tostring(err)
end
finish()
