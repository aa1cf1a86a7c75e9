-- For tests/nvim/test_nvim_first_contact_tty.py: a follow-up queued by typing g<CR> during a slow
-- reply, in a Neovim on a pseudo-terminal. The script puts the text in the prompt area once the
-- reply streams and says so on the screen; the Python side types g<CR>, <C-c> and :PiQueue as a
-- user would (the script is back in Neovim's main loop, so typed keys run as commands), and a timer
-- finishes once the text is back in the prompt area and the queue is empty. Config: { cmd,
-- settings, out }.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":h") .. "/harness.lua")
local cfg, out, finish = H.cfg, H.out, H.finish

local pi = require("pi")
local chat = require("pi.chat")
pi.setup({ cmd = cfg.cmd, autostart = false, settings = cfg.settings })
local queue_ns = vim.api.nvim_get_namespaces()["pi_chat_queue"]
local function shown(buf)
  local lines = {}
  for _, mark in ipairs(vim.api.nvim_buf_get_extmarks(buf, queue_ns, 0, -1, { details = true })) do
    for _, chunks in ipairs(mark[4].virt_lines or {}) do
      table.insert(lines, chunks[1][1])
    end
  end
  return lines
end

vim.cmd("PiChat never ends")
local started = vim.loop.now()
local prompt_set = false
local timer = vim.loop.new_timer()
timer:start(100, 100, vim.schedule_wrap(function()
  local session = pi.state.session
  local buf = session and chat.buffer(session.sessionId)
  if not buf then
    return
  end
  local state = chat.chat(buf)
  if not prompt_set and (state.text or "") ~= "" then
    prompt_set = true
    chat.set_prompt(buf, "later please")
    chat.show_chat_window(buf)
    vim.cmd("stopinsert")
    vim.api.nvim_echo({ { "TEST: the prompt is set" } }, false, {})
  end
  local warned = false
  for _, message in ipairs(out.messages) do
    warned = warned or message:find("go with the next prompt", 1, true) ~= nil
  end
  if prompt_set and not out.after_stop and not state.running and warned then
    -- stopped, and warned that the follow-up stays queued: what the chat shows now, then tell
    -- the Python side to type :PiQueue
    out.after_stop = shown(buf)
    vim.api.nvim_echo({ { "TEST: stopped" } }, false, {})
  end
  local lines = H.lines(buf)
  local marker = vim.fn.index(lines, chat.marker)
  local prompt = vim.list_slice(lines, marker + 2)
  local back = prompt_set and not state.running and #shown(buf) == 0 and vim.tbl_contains(prompt, "later please")
  if back or vim.loop.now() - started > 80000 then
    timer:stop()
    if not back then
      out.error = "timed out waiting for :PiQueue to put the follow-up back"
    end
    out.prompt = prompt
    out.running = state.running
    finish()
  end
end))
