-- Every :Pi... command in one table: name -> { run = function(args), opts = nvim_create_user_command's
-- options }. The work is done by the modules named in each entry; this file only wires them up.
local M = {}

local function pi()
  return require("pi")
end

local function ui()
  return require("pi.ui")
end

local function commands()
  return require("pi.commands")
end

local function chat()
  return require("pi.chat")
end

---@class pi.UserCommand
---@field run fun(args: table) the command's body (args as nvim_create_user_command passes them)
---@field opts table nvim_create_user_command's options (desc, nargs, complete, bang, range)

---@type table<string, pi.UserCommand>
M.commands = {
  PiNew = {
    run = function()
      pi().new_session({}, ui().report("new session"))
    end,
    opts = { desc = "pi: new session" },
  },
  PiContinue = {
    run = function()
      pi().continue_recent({}, ui().report("session"))
    end,
    opts = { desc = "pi: continue the most recent session" },
  },
  PiOpen = {
    run = function(a)
      commands().open(a.args, ui().report("opened"))
    end,
    opts = { nargs = 1, complete = "file", desc = "pi: open a session file (asks before creating one)" },
  },
  PiSessions = {
    run = function(a)
      ui().pick_session(a.args)
    end,
    opts = { nargs = "?", desc = "pi: pick a session" },
  },
  PiTree = {
    run = function()
      ui().open_tree()
    end,
    opts = { desc = "pi: session tree" },
  },
  PiContext = {
    run = function()
      ui().open_context()
    end,
    opts = { desc = "pi: context of the current branch" },
  },
  PiLabel = {
    run = function(a)
      ui().label(a.args)
    end,
    opts = { nargs = "?", desc = "pi: label the entry under the cursor (tree) or the leaf" },
  },
  PiName = {
    run = function(a)
      pi().set_session_name({ name = a.args }, function(err)
        if err then
          pi().notify("pi: name: " .. pi().format_error(err), vim.log.levels.ERROR)
        end
      end)
    end,
    opts = { nargs = "?", desc = "pi: name the session (empty clears)" },
  },
  PiChat = {
    run = function(a)
      local text = a.args
      if a.range > 0 then -- :'<,'>PiChat [question]: the lines go with their path and numbers
        local block = require("pi.chat_complete").block(vim.api.nvim_get_current_buf(), a.line1, a.line2)
        text = text ~= "" and (text .. "\n\n" .. block) or block
      end
      chat().open(text)
    end,
    opts = {
      nargs = "?",
      range = true,
      desc = "pi: chat with the active session (sends the text given, and the range)",
    },
  },
  PiStop = {
    run = function()
      chat().stop(0)
    end,
    opts = { desc = "pi: stop the running prompt" },
  },
  PiQueue = {
    run = function()
      chat().take_queue()
    end,
    opts = { desc = "pi: take the queued messages back into the chat's prompt area" },
  },
  PiFollowUp = {
    run = function(a)
      local session = pi().state.session
      local buf = session and chat().buffer(session.sessionId)
      if not buf then
        return pi().notify("pi: follow-up: open the chat first (:PiChat)", vim.log.levels.WARN)
      end
      chat().send(buf, a.args ~= "" and a.args or nil, "followUp")
    end,
    opts = { nargs = "?", desc = "pi: send, queued as a follow-up while a run is active" },
  },
  PiRewind = {
    run = function(a)
      require("pi.rewind").rewind(a.args ~= "" and a.args or nil, a.bang)
    end,
    opts = {
      nargs = "?",
      bang = true,
      desc = "pi: restore the files to an entry's state (under the cursor, else the leaf); ! overwrites conflicts",
    },
  },
  PiUndoRestore = {
    run = function()
      require("pi.rewind").undo()
    end,
    opts = { desc = "pi: put back what the last :PiRewind changed" },
  },
  PiChanges = {
    run = function()
      require("pi.changes").open()
    end,
    opts = { desc = "pi: the files the last run changed, as a quickfix list (<CR> diff, X revert)" },
  },
  PiCompact = {
    run = function(a)
      commands().compact(a.args)
    end,
    opts = { nargs = "?", desc = "pi: compact the session (shows what is summarised first)" },
  },
  PiSystemPrompt = {
    run = function()
      commands().system_prompt()
    end,
    opts = { desc = "pi: the system prompt, its sources and token counts" },
  },
  PiModel = {
    run = function()
      commands().model()
    end,
    opts = { desc = "pi: pick the model and thinking level" },
  },
  PiFork = {
    run = function()
      commands().fork()
    end,
    opts = { desc = "pi: copy the session (every branch) to a new session" },
  },
  PiBranch = {
    run = function(a)
      commands().branch(a.args)
    end,
    opts = { nargs = "?", desc = "pi: new session from the entry under the cursor (else the leaf)" },
  },
}

--- Create every command of M.commands.
function M.create()
  for name, command in pairs(M.commands) do
    vim.api.nvim_create_user_command(name, command.run, command.opts)
  end
end

return M
