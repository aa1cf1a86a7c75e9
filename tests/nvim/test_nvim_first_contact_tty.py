"""What a user meets first, in a real Neovim drawn on a pseudo-terminal (not headless), on each
Neovim version: an agent's edit reaches the open buffer on the *screen* (and a buffer with unsaved
changes keeps them, with the warning shown), and a follow-up queued by *typing* ``g<CR>`` during a
slow reply is drawn in the chat, kept after ``<C-c>``, and put back into the input by ``:PiQueue``.
The stock ``vim.ui`` functions are used throughout (nothing is replaced)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.agent.chat_support import MODEL, Workspace
from tests.llm.fake_anthropic import FakeAnthropic, Reply, Text, ToolUse, assistant_stream
from tests.nvim.pty_driver import Answer, run_tty
from tests.pi.pi_rpc import write_agent_dir

HERE = Path(__file__).parent
AGENT_LINE = "AGENT-EDITED-THIS"  # no cell in common with "line one": redrawn as one run of text
WARNING = "unsaved here: :w overwrites it"
MILLION = "claude-sonnet-4-6"


def _text(reply: str, message_id: str) -> Reply:
    return Reply(events=assistant_stream(Text(reply), message_id=message_id))


async def test_agent_edit_is_drawn_in_the_open_buffer(tmp_path: Path, nvim: str) -> None:
    edit = ToolUse(
        "toolu_E", "edit", {"path": "hello.txt", "edits": [{"oldText": "line one", "newText": AGENT_LINE}]}
    )
    write = ToolUse("toolu_W", "write", {"path": "other.txt", "content": "written by the agent\n"})
    replies = [Reply(events=assistant_stream(edit, write, message_id="m_e")), _text("Edited.", "m_d")]
    ws = Workspace({"hello.txt": "line one\nline two\n", "other.txt": "old\n"})
    try:
        async with FakeAnthropic(replies) as fake:
            write_agent_dir(ws.agent_dir, fake.url, ws.settings)
            # a 1M-context model: the statusline's window is the model's (issue 25: it read /200k)
            settings: dict[str, Any] = {"model": MILLION, "sessionDir": str(ws.sessions), "approval": "auto"}
            env = ws.server_env(fake.url)
            answers = [Answer(b"", WARNING.encode())]  # nothing to type: wait for the warning on screen
            screens, seen = await run_tty(
                nvim, HERE / "reload_tty.lua", tmp_path, ws.cwd, env, settings, answers, 90
            )
        on_disk = (ws.cwd / "other.txt").read_text()
    finally:
        ws.cleanup()

    drawn = screens.shown[0] + screens.final
    # the unmodified buffer was reloaded and redrawn: the agent's line is on the screen
    assert seen["hello"] == [AGENT_LINE, "line two"] and not seen["hello_modified"]
    assert AGENT_LINE in drawn, drawn[-3000:]
    # the buffer with unsaved changes kept them, and the warning was drawn (not only logged)
    assert seen["other"] == ["typed by the user"] and seen["other_modified"]
    assert on_disk == "written by the agent\n"
    assert "other.txt" in screens.shown[0]
    assert not [m for m in seen["messages"] if "hello.txt" in m], seen["messages"]
    assert seen["statusline"].endswith("/1M 0%"), seen["statusline"]


async def test_typed_follow_up_is_shown_and_taken_back(tmp_path: Path, nvim: str) -> None:
    slow = assistant_stream(
        Text("Partial reply, word by word, that is stopped first", chunks=40), message_id="m_slow"
    )
    replies = [Reply(events=slow, event_delay=0.5), _text("Extra turn.", "m_x")]
    ws = Workspace()
    try:
        async with FakeAnthropic(replies) as fake:
            write_agent_dir(ws.agent_dir, fake.url, ws.settings)
            settings: dict[str, Any] = {"model": MODEL, "sessionDir": str(ws.sessions)}
            env = ws.server_env(fake.url)
            answers = [
                Answer(b"g\r", b"TEST: the prompt is set"),  # g<CR> in the chat: queue as a follow-up
                Answer(b"\x03", b"queued (follow-up): later please"),  # drawn in the chat: <C-c> stops
                Answer(b":PiQueue\r", b"TEST: stopped"),  # the run stopped and the user was warned
            ]
            screens, seen = await run_tty(
                nvim, HERE / "queue_tty.lua", tmp_path, ws.cwd, env, settings, answers, 90
            )
            requests = len(fake.requests)
    finally:
        ws.cleanup()

    # typed g<CR> queued it and the chat drew it (answer 2 waited for it on the screen); after <C-c>
    # it is still shown, and the warning says it would go with the next prompt
    assert seen["after_stop"][0] == "queued (follow-up): later please", seen
    assert any(":PiQueue takes them back" in m for m in seen["messages"]), seen["messages"]
    assert not seen["running"]
    # :PiQueue put the follow-up back into the input, and said so on the screen
    assert seen["prompt"][-1] == "later please", seen["prompt"]
    assert "taken back into the prompt area" in screens.final, screens.final[-3000:]
    assert requests == 1  # the follow-up was never sent as a turn of its own
