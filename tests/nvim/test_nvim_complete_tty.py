"""Completion in the chat's prompt area as a user types it, in a Neovim on a pseudo-terminal on each
version: ``/`` at the start of a line pops up the plugin's built-ins, the project's prompt templates
and its skills (a template picked with ``<C-y>`` is sent and expanded by the server), and
``<C-x><C-o>`` completes ``@`` paths and ``#buffer`` (sent as the last file buffer's text, unsaved
changes included); a built-in picked and sent alone runs its command."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.agent.chat_support import Workspace
from tests.llm.fake_anthropic import Reply, Text, assistant_stream
from tests.nvim.headless import server_cmd
from tests.nvim.pty_driver import Answer, run_tty_with_model

SCRIPT = Path(__file__).with_name("complete_tty.lua")
FILES = {
    "notes.txt": "first note\nsecond note\n",
    "src/alpha.py": "A = 1\n",
    "src/beta.py": "B = 2\n",
    ".pi/prompts/review.md": "---\ndescription: Review the code\n---\nReview this carefully: $ARGUMENTS\n",
    ".pi/skills/demo/SKILL.md": "---\nname: demo\ndescription: A demo skill.\n---\nDo the demo.\n",
}
CTRL_X_O, CTRL_Y = b"\x18\x0f", b"\x19"
# The real server, answering no templates-and-skills lookup before 6 s after it started: a cold
# server's first pi/getCommands takes about 3 s (it builds the run service), longer than the popup
# once waited (3 s).
SLOW_COLD_LOOKUPS = """
import time
import pi_lsp.prompt.commands as commands
started, load = time.monotonic(), commands.load_slash_commands
def slow_when_cold(*args, **kwargs):
    time.sleep(max(0.0, started + 6 - time.monotonic()))
    return load(*args, **kwargs)
commands.load_slash_commands = slow_when_cold
from pi_lsp.cli import main
raise SystemExit(main())
"""


def _text(reply: str, message_id: str) -> Reply:
    return Reply(events=assistant_stream(Text(reply), message_id=message_id))


def _user_text(request_body: dict[str, Any]) -> str:
    content = request_body["messages"][-1]["content"]
    return content if isinstance(content, str) else "".join(b.get("text", "") for b in content)


async def test_completion_as_typed(tmp_path: Path, nvim: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PI_NVIM_TEST_SERVER_CMD", json.dumps([server_cmd()[0], "-c", SLOW_COLD_LOOKUPS]))
    answers = [
        Answer(b"i/", b"TEST: the chat is open"),  # `/` at the start of a line: the popup at once
        Answer(b"rev" + CTRL_Y + b" the parser\x1b\r", b"/skill:demo"),  # narrowed, picked, sent
        Answer(b"iread @src/" + CTRL_X_O, b"TEST: type a path"),  # two paths: the popup
        Answer(CTRL_Y + b" with #buf" + CTRL_X_O + b"\x1b\r", b"@src/beta.py"),  # the first; #buffer
        Answer(b"i/", b"TEST: type a built-in"),
        Answer(b"tr", b"/skill:demo"),  # narrowed to /tree (keys typed once the popup is drawn)
        Answer(CTRL_Y + b"\x1b\r", b":PiTree"),  # /tree picked and sent alone: :PiTree runs
    ]
    replies = [_text("Template answer.", "m_1"), _text("Path answer.", "m_2")]
    ws = Workspace(FILES)
    try:
        screens, seen, fake = await run_tty_with_model(nvim, SCRIPT, tmp_path, ws, replies, answers, 120)
        sent = [_user_text(r.body) for r in fake.requests]
    finally:
        ws.cleanup()

    # the popup after `/`, on a cold server slow to answer: built-ins, the template (with its
    # description) and the skill
    popup = screens.shown[1]
    for item in ("/compact", "/tree", "/review", "Review the code", "/skill:demo"):
        assert item in popup, (item, popup[-3000:])
    # the template picked was sent and expanded by the server
    assert sent[0] == "Review this carefully: the parser", sent
    # @ completed the path (both offered), #buffer the last file buffer's text with its path
    assert "@src/alpha.py" in screens.shown[3], screens.shown[3][-3000:]
    assert "noinsert" not in seen["completeopt"]  # the popup's option was put back
    assert sent[1].startswith("read @src/alpha.py with \n\n`notes.txt`:\n```"), json.dumps(sent[1])
    assert "first note\nsecond note" in sent[1], sent[1]
    # /tree sent alone ran :PiTree (the script waited for its window) and went to no model
    assert len(sent) == 2 and seen["prompt_after_builtin"] == ""
