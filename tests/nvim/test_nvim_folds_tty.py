"""The chat's folds after each redraw, in a Neovim on a pseudo-terminal (issue 25: folds "come back
inconsistent after a redraw"): thinking, a bash result's output and an edit's diff are closed folds
after the run, and stay so (each fold closed, covering its whole block) after a streamed reply,
edit-and-resend typed with ``<LocalLeader>e`` and a navigation typed in ``:PiTree``; after those
two the chat's window shows the transcript's end on its last row, not scrolled past it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.agent.chat_support import Workspace
from tests.llm.fake_anthropic import Reply, Text, Thinking, ToolUse, assistant_stream
from tests.nvim.pty_driver import Answer, run_tty_with_model

SCRIPT = Path(__file__).with_name("folds_tty.lua")
FIRST_RUN = ["┆ thinking", "┆ output", "┆ diff"]


def _text(reply: str, message_id: str) -> Reply:
    return Reply(events=assistant_stream(Text(reply, chunks=6), message_id=message_id), event_delay=0.05)


async def test_folds_stay_closed_after_redraws(tmp_path: Path, nvim: str) -> None:
    tools = assistant_stream(
        Thinking("Plan:\nlist, then edit."),
        ToolUse("toolu_B", "bash", {"command": "printf 'one\\ntwo\\nthree\\n'"}),
        ToolUse("toolu_E", "edit", {"path": "data.txt", "edits": [{"oldText": "beta", "newText": "BETA"}]}),
        message_id="m_1",
    )
    replies = [
        Reply(events=tools),
        _text("Done one.", "m_2"),
        _text("Second answer.", "m_3"),
        _text("Resent answer.", "m_4"),
    ]
    ws = Workspace({"data.txt": "alpha\nbeta\ngamma\n"})
    answers = [
        Answer(b"zo", b"TEST: on the diff"),  # the user opens the diff to read it
        Answer(b"isecond\x1b\r", b"TEST: type the second message"),  # typed in the prompt area, sent
        Answer(b"\\e", b"TEST: on the second message"),  # <LocalLeader>e: edit and resend
        Answer(b"A edited\x1b\r", b"TEST: edit the message"),
        Answer(b"\r", b"TEST: on the tree entry"),  # <CR> in :PiTree: navigate there
    ]
    try:
        screens, seen, fake = await run_tty_with_model(
            nvim, SCRIPT, tmp_path, ws, replies, answers, 120, approval="auto"
        )
        last_messages = [r.body["messages"][-1] for r in fake.requests]
    finally:
        ws.cleanup()

    def titles(folds: list[dict[str, Any]]) -> list[str]:
        assert all(f["closed"] and f["whole"] for f in folds), folds
        return [f["title"] for f in folds]

    assert titles(seen["first"]) == FIRST_RUN
    # the accepted edit's diff (pi's numbered diff, its columns kept), folded under the result line
    assert seen["diff"] == ["┆ diff", "┆  1 alpha", "┆ -2 beta", "┆ +2 BETA", "┆  3 gamma"], seen["diff"]
    # drawn closed on the screen: one line per fold
    assert "lines: ┆ diff" in screens.shown[0], screens.shown[0][-3000:]
    # a streamed reply redraws nothing above it: the diff the user opened stays open, the rest closed
    assert [(f["title"], f["closed"]) for f in seen["opened"]] == [
        ("┆ thinking", True),
        ("┆ output", True),
        ("┆ diff", False),
    ]
    assert [(f["title"], f["closed"]) for f in seen["streamed"]] == [
        ("┆ thinking", True),
        ("┆ output", True),
        ("┆ diff", False),
    ]
    # a redraw of the whole chat: every fold closed again, each covering its whole block
    assert titles(seen["resend_navigated"]) == FIRST_RUN
    assert titles(seen["resent"]) == FIRST_RUN
    assert titles(seen["tree_navigated"]) == FIRST_RUN
    # the short window (12 rows, the winbar one of them on 0.8+) shows the transcript's end on its last
    # row: not scrolled past the end
    for view in (seen["resend_view"], seen["tree_view"]):
        assert view["height"] >= 11 and view["top"] > 1 and view["row"] == view["height"], view
    assert "second edited" in json.dumps(last_messages), last_messages
