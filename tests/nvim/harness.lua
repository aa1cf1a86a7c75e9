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

--- Run `steps` from Neovim's main loop, as a user's Neovim is (typed keys run as commands between
--- them; inside vim.wait they would not): each step is { what, ready = fn (default: at once),
--- run = fn }; a timer runs a step's `run` once its `ready()` is true, then goes to the next one,
--- and finishes after the last (or records an error: a failing step, or `what` was not ready
--- within `ms`). A step tells the Python side it is done with H.say(text).
function H.steps(steps, ms)
  local index, since = 1, vim.loop.now()
  local timer = vim.loop.new_timer()
  local function stop(err)
    timer:stop()
    if err then
      H.out.error = err
    end
    H.finish()
  end
  timer:start(100, 100, vim.schedule_wrap(function()
    local step = steps[index]
    if not step then
      return stop()
    end
    local ok, ready = pcall(step.ready or function() return true end)
    if not ok then
      return stop(step.what .. ": " .. tostring(ready))
    elseif not ready then
      if vim.loop.now() - since > (ms or 45000) then
        stop("timed out waiting for " .. step.what .. "; buffer " .. vim.api.nvim_buf_get_name(0) .. ":\n" .. H.text())
      end
      return
    end
    local ran, err = pcall(step.run or function() end)
    if not ran then
      return stop(step.what .. ": " .. tostring(err))
    end
    index, since = index + 1, vim.loop.now()
  end))
end

--- Draw the whole screen again and put `text` on it (what the Python side waits for).
function H.say(text)
  vim.cmd("redraw!")
  vim.api.nvim_echo({ { text } }, false, {})
  vim.cmd("redraw")
end

return H
