-- For tests/nvim/test_nvim_folds_tty.py: the folds of a chat (thinking, a bash result's output, an
-- edit's diff) after each way the chat is drawn again: a streamed reply, edit-and-resend (typed
-- <LocalLeader>e, then the edited text sent with <CR>) and a navigation in :PiTree (typed <CR>).
-- The user opens the diff (typed zo) before the reply streams. The script runs its steps from Neovim's main loop (H.steps) and says on the screen when the
-- Python side may type. Config: { cmd, settings, out }.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":h") .. "/harness.lua")
local cfg, out = H.cfg, H.out

local pi = require("pi")
local chat = require("pi.chat")
pi.setup({ cmd = cfg.cmd, autostart = false, settings = cfg.settings })
local prefix = chat.fold_prefix
local buf

local function folded_line(line)
  return line ~= nil and line:sub(1, #prefix) == prefix
end

--- Each run of folded lines in the chat's window: its first line, whether it is a closed fold,
--- and whether that fold ends where the run ends.
local function folds()
  local shown = {}
  vim.api.nvim_win_call(vim.fn.bufwinid(buf), function()
    local lines = H.lines(buf)
    for row, line in ipairs(lines) do
      if folded_line(line) and not folded_line(lines[row - 1]) then
        local last = row
        while folded_line(lines[last + 1]) do
          last = last + 1
        end
        table.insert(shown, {
          title = line,
          closed = vim.fn.foldclosed(row) == row,
          whole = vim.fn.foldclosedend(row) == last,
        })
      end
    end
  end)
  return shown
end

--- Where the chat's window shows its end: the screen row of the last line (the cursor is put
--- there) and the window's height; equal when it is not scrolled past the end.
local function view()
  local win = vim.fn.bufwinid(buf)
  return vim.api.nvim_win_call(win, function()
    local cursor = vim.api.nvim_win_get_cursor(win)
    vim.api.nvim_win_set_cursor(win, { vim.api.nvim_buf_line_count(buf), 0 })
    local shown = { row = vim.fn.winline(), height = vim.fn.winheight(win), top = vim.fn.line("w0") }
    vim.api.nvim_win_set_cursor(win, cursor)
    return shown
  end)
end

local function idle(text)
  return buf ~= nil and H.text(buf):find(text, 1, true) ~= nil and not chat.chat(buf).running
end

local function row_of(lines, wanted, after)
  for row = (after or 0) + 1, #lines do
    if lines[row] == wanted then
      return row
    end
  end
end

local function prompt_text()
  local lines = H.lines(buf)
  return table.concat(vim.list_slice(lines, row_of(lines, chat.marker) + 1), "\n")
end

vim.cmd("PiChat first")
H.steps({
  {
    what = "the first run",
    ready = function()
      local session = pi.state.session
      buf = session and chat.buffer(session.sessionId)
      return idle("Done one.")
    end,
    run = function()
      out.first = folds()
      -- a window below the chat's makes it shorter than the transcript (as a user's layout may)
      vim.api.nvim_set_current_win(vim.fn.bufwinid(buf))
      vim.cmd("belowright new")
      vim.cmd("wincmd p")
      vim.api.nvim_win_set_height(vim.fn.bufwinid(buf), 12)
      local lines = H.lines(buf)
      local diff = row_of(lines, prefix .. "diff")
      out.diff = diff and vim.list_slice(lines, diff, diff + 4) or {}
      local win = vim.fn.bufwinid(buf)
      vim.api.nvim_set_current_win(win)
      vim.api.nvim_win_set_cursor(win, { diff, 0 })
      H.say("TEST: on the diff")
    end,
  },
  {
    what = "the diff opened with zo",
    ready = function()
      return vim.fn.foldclosed(row_of(H.lines(buf), prefix .. "diff")) == -1
    end,
    run = function()
      out.opened = folds()
      vim.api.nvim_win_set_cursor(0, { vim.api.nvim_buf_line_count(buf), 0 })
      H.say("TEST: type the second message")
    end,
  },
  {
    what = "the streamed second reply",
    ready = function()
      return idle("Second answer.")
    end,
    run = function()
      out.streamed = folds()
      local lines = H.lines(buf)
      vim.api.nvim_win_set_cursor(vim.fn.bufwinid(buf), { row_of(lines, "second", row_of(lines, "Done one.")), 0 })
      H.say("TEST: on the second message")
    end,
  },
  {
    what = "edit and resend's navigation",
    ready = function()
      return H.text(buf):find("Second answer.", 1, true) == nil and prompt_text() == "second"
    end,
    run = function()
      out.resend_navigated = folds()
      out.resend_view = view()
      H.say("TEST: edit the message")
    end,
  },
  {
    what = "the resent message's reply",
    ready = function()
      return idle("Resent answer.")
    end,
    run = function()
      out.resent = folds()
      vim.cmd("PiTree")
    end,
  },
  {
    what = "the tree",
    ready = function()
      local tree = vim.fn.bufnr("pi://tree")
      return tree ~= -1 and H.text(tree):find("Second answer.", 1, true) ~= nil
    end,
    run = function()
      local tree = vim.fn.bufnr("pi://tree")
      for row, line in ipairs(H.lines(tree)) do
        if line:find("Second answer.", 1, true) then
          vim.api.nvim_set_current_win(vim.fn.bufwinid(tree))
          vim.api.nvim_win_set_cursor(0, { row, 0 })
        end
      end
      H.say("TEST: on the tree entry")
    end,
  },
  {
    what = "the navigation in the tree",
    ready = function()
      return idle("Second answer.") and H.text(buf):find("Resent answer.", 1, true) == nil
    end,
    run = function()
      out.tree_navigated = folds()
      out.tree_view = view()
      H.say("TEST: done")
    end,
  },
}, 60000)
