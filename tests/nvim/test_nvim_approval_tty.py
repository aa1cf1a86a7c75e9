"""An edit's approval with the *stock* ``vim.ui.select`` in a Neovim drawn on a real pseudo-terminal:
the stock picker calls ``inputlist()``, which blocks before Neovim redraws, so the diff split must be
drawn before the question is asked. The test reads the bytes Neovim writes to the terminal and checks
that the diff's text is on the screen when the question is, then answers it by typing ``1<CR>``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.agent.chat_support import MODEL, Workspace
from tests.llm.fake_anthropic import FakeAnthropic, Reply, Text, ToolUse, assistant_stream
from tests.nvim.pty_driver import Answer, run_tty
from tests.pi.pi_rpc import write_agent_dir

SCRIPT = Path(__file__).with_name("approval_tty.lua")
NEW_TEXT = "agent-wrote-this-line"


async def test_stock_select_shows_the_diff_before_asking(tmp_path: Path, nvim: str) -> None:
    edit = ToolUse(
        "toolu_E", "edit", {"path": "hello.txt", "edits": [{"oldText": "line one", "newText": NEW_TEXT}]}
    )
    replies = [
        Reply(events=assistant_stream(edit, message_id="m_e")),
        Reply(events=assistant_stream(Text("Edited."), message_id="m_d")),
    ]
    ws = Workspace({"hello.txt": "line one\n"})
    try:
        async with FakeAnthropic(replies) as fake:
            write_agent_dir(ws.agent_dir, fake.url, ws.settings)
            settings: dict[str, Any] = {"model": MODEL, "sessionDir": str(ws.sessions), "approval": "ask"}
            env = ws.server_env(fake.url)
            screens, _ = await run_tty(nvim, SCRIPT, tmp_path, ws.cwd, env, settings, [Answer(b"1\r")], 60)
        edited = (ws.cwd / "hello.txt").read_text()
    finally:
        ws.cleanup()

    text = screens.shown[0]
    assert "pi: allow edit" in text
    # the diff split was drawn before inputlist() blocked: its added line is on the screen
    assert "+" + NEW_TEXT in text, text[-3000:]
    assert edited == NEW_TEXT + "\n"  # "1<CR>" answered Allow and the edit was made
