-- Reviewing an edit before it is written (contract v3): the file now and the proposed file side by
-- side in a new tab (diff mode); each hunk is accepted or rejected, and the answer to
-- pi/requestApproval names the accepted hunks. Where the approval handler runs in a coroutine
-- (Neovim 0.9+), the proposed buffer can also be edited and written with :w: that text is allowed.
--
-- The LSP client wants the answer from the handler itself, so the review reads its keys with
-- getchar() (as the stock vim.ui.select's inputlist() does) until the user decides; editing leaves
-- that loop and suspends the handler's coroutine until :w (or the tab is closed: deny).
local M = {}

local api = vim.api

M.keys = {
  next = "n",
  prev = "p",
  accept = "a",
  reject = "r",
  allow = "y",
  deny = "d",
  edit = "e",
}

--- The review's lines (winbar; statusline on 0.7), each short enough for half a screen: the keys
--- over the file now, where the review is over the proposed file.
local function hints(state)
  local current = state.hunks[state.current]
  local keys = M.keys
  local legend = string.format(
    "%s/%s move %s/%s accept/reject %s allow %s deny",
    keys.next,
    keys.prev,
    keys.accept,
    keys.reject,
    keys.allow,
    keys.deny
  )
  if state.can_edit then
    legend = legend .. string.format(" %s edit,:w", keys.edit)
  end
  local status = string.format(
    "%s: hunk %d/%d %s",
    state.name,
    state.current,
    #state.hunks,
    state.accepted[current.index] and "accepted" or "REJECTED"
  )
  return legend, status
end

local function set_hints(state, legend, status)
  local option = vim.fn.has("nvim-0.8") == 1 and "winbar" or "statusline"
  for win, text in pairs({ [state.old_win] = legend, [state.new_win] = status }) do
    if api.nvim_win_is_valid(win) then
      api.nvim_win_set_option(win, option, (text:gsub("%%", "%%%%")))
    end
  end
end

--- Draw the proposed buffer with the accepted hunks only, the cursor on the current hunk.
local function draw(state)
  local diff = require("pi.diff")
  local lines, ranges = diff.compose(state.new_lines, state.hunks, function(hunk)
    return state.accepted[hunk.index]
  end)
  state.ranges = ranges
  api.nvim_buf_set_option(state.new_buf, "modifiable", true)
  api.nvim_buf_set_lines(state.new_buf, 0, -1, false, lines)
  api.nvim_buf_set_option(state.new_buf, "modifiable", false)
  api.nvim_buf_set_option(state.new_buf, "modified", false)
  local range = ranges[state.hunks[state.current].index]
  local row = math.min(math.max(range.first + 1, 1), math.max(#lines, 1))
  api.nvim_win_set_cursor(state.new_win, { row, 0 })
  pcall(vim.cmd, "diffupdate")
  set_hints(state, hints(state))
  vim.cmd("redraw!")
end

--- The answer for the accepted hunks: a plain allow when all are, else the accepted indices.
local function hunks_answer(state)
  local indices, all = {}, true
  for _, hunk in ipairs(state.hunks) do
    if state.accepted[hunk.index] then
      table.insert(indices, hunk.index)
    else
      all = false
    end
  end
  if all then
    return { decision = "allow" }
  end
  return { decision = "allow", hunks = indices }
end

local function close(state)
  if state.tab and api.nvim_tabpage_is_valid(state.tab) and #api.nvim_list_tabpages() > 1 then
    vim.cmd("tabclose! " .. api.nvim_tabpage_get_number(state.tab))
  end
  for _, buf in ipairs({ state.old_buf, state.new_buf }) do
    if api.nvim_buf_is_valid(buf) then
      pcall(api.nvim_buf_delete, buf, { force = true })
    end
  end
end

local function scratch(name, lines, filetype)
  local buf = api.nvim_get_current_buf()
  api.nvim_buf_set_option(buf, "buftype", "nofile")
  api.nvim_buf_set_option(buf, "bufhidden", "wipe")
  api.nvim_buf_set_option(buf, "swapfile", false)
  pcall(api.nvim_buf_set_name, buf, name)
  api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  api.nvim_buf_set_option(buf, "modifiable", false)
  if filetype then
    api.nvim_buf_set_option(buf, "filetype", filetype)
  end
  vim.cmd("diffthis")
  return buf
end

--- Edit the proposed text: the handler's coroutine waits until :w (allow that text) or the tab
--- is closed (deny).
local function edit(state, co)
  local text = require("pi.diff").text
  api.nvim_buf_set_option(state.new_buf, "buftype", "acwrite")
  api.nvim_buf_set_option(state.new_buf, "modifiable", true)
  set_hints(state, ":w allows your text, :tabclose denies", state.name .. ": edit the proposed text")
  local answered = false
  local function answer(result)
    if not answered then
      answered = true
      vim.schedule(function()
        close(state)
        coroutine.resume(co, result)
      end)
    end
  end
  api.nvim_create_autocmd("BufWriteCmd", {
    buffer = state.new_buf,
    callback = function()
      local content = text(api.nvim_buf_get_lines(state.new_buf, 0, -1, false), state.eol)
      api.nvim_buf_set_option(state.new_buf, "modified", false)
      answer(content == state.new_content and { decision = "allow" } or { decision = "allow", content = content })
    end,
  })
  api.nvim_create_autocmd({ "BufWipeout", "BufHidden" }, {
    buffer = state.new_buf,
    once = true,
    callback = function()
      answer({ decision = "deny", reason = "The user closed the review without writing it." })
    end,
  })
  return coroutine.yield()
end

--- Review an edit/write whose preview has `hunks` and `newContent`; returns the answer to
--- pi/requestApproval.
---@param request table the ApprovalRequest
---@return table {decision, hunks?, content?, reason?}
function M.review(request)
  local diff = require("pi.diff")
  local preview = request.preview
  local hunks = {}
  for _, h in ipairs(preview.hunks) do
    local hunk = assert(diff.parse_hunk(h.diff, h.index), "not a hunk: " .. tostring(h.header))
    table.insert(hunks, hunk)
  end
  local new_lines, eol = diff.lines(preview.newContent)
  local old_lines = diff.compose(new_lines, hunks, function()
    return false
  end)
  local path = preview.path or (request.args or {}).path or "file"
  local name = vim.fn.fnamemodify(path, ":t")
  local ok, filetype = pcall(vim.filetype.match, { filename = path }) -- 0.8+
  filetype = ok and type(filetype) == "string" and filetype or nil
  local co, main = coroutine.running()
  local state = {
    name = name,
    hunks = hunks,
    new_lines = new_lines,
    new_content = preview.newContent,
    eol = eol or preview.newContent == "",
    accepted = {},
    current = 1,
    can_edit = co ~= nil and not main,
  }
  for _, hunk in ipairs(hunks) do
    state.accepted[hunk.index] = true
  end
  vim.cmd("tabnew")
  state.tab = api.nvim_get_current_tabpage()
  state.old_buf = scratch("pi://review/" .. name .. " (now)", old_lines, filetype)
  state.old_win = api.nvim_get_current_win()
  vim.cmd("rightbelow vnew")
  state.new_buf = scratch("pi://review/" .. name .. " (proposed)", new_lines, filetype)
  state.new_win = api.nvim_get_current_win()
  draw(state)
  local keys = M.keys
  while true do
    local char = vim.fn.getchar()
    local key = type(char) == "number" and vim.fn.nr2char(char) or char
    if key == keys.next then
      state.current = state.current % #hunks + 1
    elseif key == keys.prev then
      state.current = (state.current - 2) % #hunks + 1
    elseif key == keys.accept or key == keys.reject then
      state.accepted[hunks[state.current].index] = key == keys.accept
    elseif key == keys.allow or key == "\r" then
      local answer = hunks_answer(state)
      close(state)
      return answer
    elseif key == keys.deny or key == "q" or key == "\27" then
      close(state)
      return { decision = "deny" }
    elseif key == keys.edit and state.can_edit then
      return edit(state, co)
    end
    draw(state)
  end
end

return M
