"""Reviewing an edit before it is written (contract v3), in a Neovim on a pseudo-terminal with the
stock ``vim.ui.select``: "Review hunks / edit" opens the file now and the proposed file side by side;
rejecting the second hunk writes only the first (the answer names the accepted hunks), and, where the
approval handler runs in a coroutine (0.9+), the proposed buffer can be edited and ``:w`` allows that
text."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.agent.chat_support import Workspace
from tests.llm.fake_anthropic import Reply, Text, ToolUse, assistant_stream
from tests.nvim.binaries import _version_of
from tests.nvim.pty_driver import Answer, run_tty_with_model

SCRIPT = Path(__file__).with_name("review_tty.lua")
ORIGINAL = "".join(f"line {n}\n" for n in range(1, 13))
EDITS = [
    {"oldText": "line 2\n", "newText": "line TWO\n"},
    {"oldText": "line 11\n", "newText": "line ELEVEN\n"},
]


async def _review(tmp_path: Path, nvim: str, answers: list[Answer]) -> tuple[Any, str, list[Any]]:
    edit = ToolUse("toolu_E", "edit", {"path": "data.txt", "edits": EDITS})
    replies = [
        Reply(events=assistant_stream(edit, message_id="m_e")),
        Reply(events=assistant_stream(Text("Edited."), message_id="m_d")),
    ]
    ws = Workspace({"data.txt": ORIGINAL})
    try:
        screens, _, _ = await run_tty_with_model(
            nvim, SCRIPT, tmp_path, ws, replies, answers, 90, approval="ask"
        )
        written = (ws.cwd / "data.txt").read_text()
        results = [
            e["message"]
            for e in ws.entries()
            if e["type"] == "message" and e["message"]["role"] == "toolResult"
        ]
    finally:
        ws.cleanup()
    return screens, written, results


async def test_rejecting_a_hunk_writes_the_others(tmp_path: Path, nvim: str) -> None:
    answers = [Answer(b"4\r"), Answer(b"nry", wanted=b"hunk 1/2 accepted")]
    screens, written, results = await _review(tmp_path, nvim, answers)
    assert "4: Review hunks / edit" in screens.shown[0]
    assert "line TWO" in screens.shown[1] and "line ELEVEN" in screens.shown[1]  # both sides drawn
    # the keys drawn over the file now (winbar; statusline on 0.7), the hunk over the proposed file
    assert "n/p move a/r accept/reject y allow d deny" in screens.shown[1], screens.shown[1][-3000:]
    assert "hunk 1/2 accepted" in screens.shown[1]
    assert written == ORIGINAL.replace("line 2\n", "line TWO\n")
    text = results[0]["content"][0]["text"]
    assert not results[0]["isError"] and "hunk 1 rejected" in text, text


async def test_editing_the_proposed_text(tmp_path: Path, nvim: str) -> None:
    if _version_of(nvim) == "0.7":  # the handler is not a coroutine there: no edit, hunks only
        answers = [Answer(b"4\r"), Answer(b"ey", wanted=b"hunk 1/2 accepted")]
        screens, written, _ = await _review(tmp_path, nvim, answers)
        assert "e edit,:w" not in screens.shown[1]
        assert written == ORIGINAL.replace("line 2\n", "line TWO\n").replace("line 11\n", "line ELEVEN\n")
        return
    keys = b"e" + b"ggA mine\x1b:w\r"
    answers = [Answer(b"4\r"), Answer(keys, wanted=b"hunk 1/2 accepted")]
    screens, written, results = await _review(tmp_path, nvim, answers)
    assert "e edit,:w" in screens.shown[1]
    expected = ORIGINAL.replace("line 1\n", "line 1 mine\n", 1)
    expected = expected.replace("line 2\n", "line TWO\n").replace("line 11\n", "line ELEVEN\n")
    assert written == expected
    assert "The user modified this edit" in results[0]["content"][0]["text"]
