"""Rewind and review in a Neovim on a pseudo-terminal with the stock ``vim.ui.select`` (contract v3
"Checkpoints"): two runs on two branches, :PiRewind to the first branch (its preview on the screen
when the question is asked, files restored, an open buffer reloaded), :PiUndoRestore, and
:PiChanges (quickfix list, a before/after diff tab, a file reverted)."""

from __future__ import annotations

from pathlib import Path

from tests.agent.chat_support import Workspace
from tests.nvim.pty_driver import Answer, run_tty_with_model
from tests.nvim.rewind_scenario import two_branch_replies

SCRIPT = Path(__file__).with_name("rewind_tty.lua")
ANSWERS = [  # "1<CR>": the first choice (Restore, Restore, Overwrite)
    Answer(b"1\r", b"pi: restore 2 file(s)?"),
    Answer(b"1\r", b"pi: restore 2 file(s), overwriting 1 changed since?"),
    Answer(b"1\r", b"pi: overwrite 1 file(s) changed since"),
]


async def test_rewind_undo_and_changes(tmp_path: Path, nvim: str) -> None:
    replies = two_branch_replies()
    ws = Workspace({"file.txt": "v0\n"})
    try:
        screens, seen, _ = await run_tty_with_model(
            nvim, SCRIPT, tmp_path, ws, replies, ANSWERS, 120, approval="auto"
        )
    finally:
        ws.cleanup()

    assert seen["before_rewind"] == {"a": "B", "new": "new"}
    # the preview was on the screen when the stock picker asked
    question = screens.shown[0]
    assert "pi: restore 2 file(s)?" in question, question[-3000:]
    assert "modify  file.txt" in question and "delete  new.txt" in question, question[-3000:]
    # "1<CR>": Restore; the first branch's files are back and the open buffer shows them
    assert sorted((f["path"], f["change"]) for f in seen["rewind"]["restored"]) == [
        ("file.txt", "modify"),
        ("new.txt", "delete"),
    ]
    assert seen["after_rewind"] == {"a": "A", "new": None, "buffer": ["A"]}
    assert seen["after_undo"] == {"a": "B", "new": "new"}
    # :PiChanges: the second run's files; <CR> a diff tab (before | after); X reverts the file
    assert sorted(c["file"].rsplit("/", 1)[-1] + ":" + c["text"] for c in seen["changes"]) == [
        "file.txt:modified",
        "new.txt:added",
    ]
    assert seen["qf_title"].startswith("pi changes: 2 file(s)")
    assert [(side["lines"], side["diff"]) for side in seen["diff_tab"]] == [(["A"], True), (["B"], True)]
    assert seen["after_revert"] == {"a": "A", "new": "new"}
    # :PiRewind! with file.txt changed by hand: shown as a conflict, overwritten after a second question
    assert "modify  file.txt   CONFLICT" in screens.shown[1], screens.shown[1][-3000:]
    assert "pi: overwrite 1 file(s) changed since" in screens.shown[2], screens.shown[2][-3000:]
    assert seen["after_forced"] == {"a": "A", "new": None}
