"""``:PiCompact`` as a user types it, in a Neovim on a pseudo-terminal with the stock
``vim.ui.select`` on each version (issue 25: "no hit-enter prompt and a real preview"): the preview
(what is summarised, what is kept) is on the screen when the question is asked, and after the answer
the compaction ends with its one-line result and no "Press ENTER" prompt."""

from __future__ import annotations

from pathlib import Path

from tests.agent.chat_support import Workspace
from tests.llm.fake_anthropic import Reply, Text, assistant_stream
from tests.nvim.pty_driver import Answer, run_tty_with_model

SCRIPT = Path(__file__).with_name("compact_tty.lua")
HIT_ENTER = "Press ENTER"


def _text(reply: str, message_id: str) -> Reply:
    return Reply(events=assistant_stream(Text(reply), message_id=message_id))


async def test_compact_previews_and_ends_without_hit_enter(tmp_path: Path, nvim: str) -> None:
    answers = [
        Answer(b":PiCompact\r", b"TEST: two runs"),
        Answer(b"1\r", b"pi: compact?"),  # Compact
        Answer(b"", b"pi: compacted:"),  # the result drawn on the screen
    ]
    replies = [_text("First answer.", "m_1"), _text("Second answer.", "m_2")]
    ws = Workspace()
    try:
        screens, seen, _ = await run_tty_with_model(
            nvim, SCRIPT, tmp_path, ws, replies, answers, 120,
            summarizer="offline", compaction={"keepRecentTokens": 5},
        )  # fmt: skip
        compactions = [e for e in ws.entries() if e["type"] == "compaction"]
    finally:
        ws.cleanup()

    asked = screens.shown[1]
    for part in ("# Compaction: ", "## Summarised", "- user: hello there", "## Kept as it is"):
        assert part in asked, (part, asked[-3000:])
    assert len(compactions) == 1
    assert seen["preview_closed"] is True
    # never waiting for Enter: not while compacting, not after the result
    for screen in [*screens.shown[2:], screens.final]:
        assert HIT_ENTER not in screen, screen[-3000:]
    assert seen["mode"]["blocking"] is False and seen["mode"]["mode"] == "n", seen["mode"]
