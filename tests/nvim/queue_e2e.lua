-- For tests/nvim/test_nvim_first_contact.py: a follow-up queued with g<CR> during a run is shown in
-- the chat; <C-c> stops the run and warns that it stays queued; :PiQueue takes it back into the
-- prompt area, and the next prompt goes out alone.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":h") .. "/harness.lua")
local cfg, out, finish = H.cfg, H.out, H.finish

local function feed(keys)
  vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes(keys, true, false, true), "x", false)
end

local ok, err = pcall(function()
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
  H.wait_for("the chat buffer", function() return pi.state.session and chat.buffer(pi.state.session.sessionId) ~= nil end)
  local buf = chat.buffer(pi.state.session.sessionId)
  H.wait_for("the reply to start", function() return (chat.chat(buf).text or "") ~= "" end)
  chat.set_prompt(buf, "later please")
  feed("g<CR>")
  H.wait_for("the queue shown", function() return #shown(buf) > 0 end)
  out.queued = shown(buf)
  feed("<C-c>")
  H.wait_for("the run to end", function() return not chat.chat(buf).running end)
  H.wait_for("the warning", function()
    for _, m in ipairs(out.messages) do
      if m:find("queued", 1, true) and m:find(":PiQueue", 1, true) then
        return true
      end
    end
    return false
  end)
  out.after_stop = shown(buf)
  chat.set_prompt(buf, "typed meanwhile")
  vim.cmd("PiQueue")
  H.wait_for("the text back", function() return H.text(buf):find("later please", 1, true) ~= nil end)
  H.wait_for("the queue cleared", function() return #shown(buf) == 0 end)
  local lines = H.lines(buf)
  local marker = vim.fn.index(lines, chat.marker)
  out.prompt = vim.list_slice(lines, marker + 2)
  vim.cmd("PiQueue") -- nothing left
  chat.send(buf, "unrelated")
  H.wait_for("the unrelated reply", function() return H.text(buf):find("Unrelated answer.", 1, true) ~= nil end)
  H.wait_for("the run to end", function() return not chat.chat(buf).running end)
  vim.wait(500) -- a follow-up still queued would start its own turn now
  out.final = H.lines(buf)
end)
if not ok then
  out.error = tostring(err)
end
finish()
