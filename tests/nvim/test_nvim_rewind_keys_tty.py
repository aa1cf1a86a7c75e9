"""The rewind keys (issue 25), typed in a Neovim on a pseudo-terminal with the stock
``vim.ui.select`` on each version: ``<LocalLeader>r`` on a chat message and ``R`` on an entry of
``:PiTree`` show the preview (files to change, delete; a conflict) before the question, restore the
files on disk when answered, do nothing when cancelled, and leave a file changed by hand alone;
``?`` in ``:PiTree`` lists its keys."""

from __future__ import annotations

from pathlib import Path

from tests.agent.chat_support import Workspace
from tests.nvim.pty_driver import Answer, run_tty_with_model
from tests.nvim.rewind_scenario import two_branch_replies

SCRIPT = Path(__file__).with_name("rewind_keys_tty.lua")
CONFLICT_QUESTION = b"pi: restore 1 file(s) (1 conflict(s) left alone)?"


async def test_rewind_keys_in_chat_and_tree(tmp_path: Path, nvim: str) -> None:
    replies = two_branch_replies()
    answers = [
        Answer(b"\\r", b"TEST: on the first reply"),  # <LocalLeader>r on the message
        Answer(b"1\r", b"pi: restore 2 file(s)?"),  # Restore
        Answer(b"R", b"TEST: on the tree entry"),  # R in :PiTree
        Answer(b"2\r", CONFLICT_QUESTION),  # Cancel
        Answer(b"R", b"TEST: cancelled"),
        Answer(b"1\r", CONFLICT_QUESTION),  # Restore, the conflict left alone
        Answer(b"?", b"TEST: the tree's keys"),  # ? in :PiTree
    ]
    ws = Workspace({"file.txt": "v0\n"})
    try:
        screens, seen, _ = await run_tty_with_model(
            nvim, SCRIPT, tmp_path, ws, replies, answers, 120, approval="auto"
        )
    finally:
        ws.cleanup()

    assert seen["before"] == {"file": "B", "new": "new"}
    # <LocalLeader>r: the preview was drawn when the stock picker asked; Restore put the files back
    asked = screens.shown[1]
    assert "modify  file.txt" in asked and "delete  new.txt" in asked, asked[-3000:]
    assert seen["after_chat_rewind"] == {"file": "A", "new": None}
    assert seen["preview_closed"] is True
    assert seen["after_undo"] == {"file": "B", "new": "new"}
    # R in the tree: the file changed by hand is a conflict in the preview and the question
    asked = screens.shown[3]
    assert "modify  file.txt   CONFLICT" in asked and "delete  new.txt" in asked, asked[-3000:]
    assert seen["after_cancel"] == {"file": "hand", "new": "new"}  # Cancel changed nothing
    assert seen["after_tree_rewind"] == {"file": "hand", "new": None}  # the conflict left alone
    assert seen["choices"] == ["Restore", "Cancel", "Restore"]
    # ? in the tree lists its keys, R among them
    keys = "\n".join(seen["tree_keys"])
    for key, what in [
        ("R", "rewind the files to this entry"),
        ("<CR>", "navigate here"),
        ("f", "next tree filter"),
    ]:
        assert f"  {key:<12} {what}" in keys, keys
