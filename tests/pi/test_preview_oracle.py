"""Approval previews: computed before anything is written, and they show exactly what the call writes.

pi's TUI computes the same preview (``computeEditsDiff``) before running edit; its errors are
compared with ours. Our diff is a standard unified diff (for editors), checked against the file
the real call then writes.
"""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Any

import pytest

from pi_lsp.agent.tools import ToolContext, create_tools
from tests.pi.pi_tools import PiTools, make_tree, snapshot

pytestmark = pytest.mark.oracle

FILES = {
    "a.txt": "alpha\nbeta\ngamma\n",
    "crlf.txt": "\ufeffone\r\ntwo\r\n",
    "dup.txt": "x\nx\n",
    "fuzzy.txt": "say \u201chi\u201d  \n",
}
EDITS: list[tuple[str, dict[str, Any]]] = [
    ("change", {"path": "a.txt", "edits": [{"oldText": "beta", "newText": "BETA\nmore"}]}),
    ("bom and crlf", {"path": "crlf.txt", "edits": [{"oldText": "two", "newText": "2"}]}),
    ("fuzzy", {"path": "fuzzy.txt", "edits": [{"oldText": 'say "hi"', "newText": "said"}]}),
    ("ambiguous", {"path": "dup.txt", "edits": [{"oldText": "x", "newText": "y"}]}),
    ("not found", {"path": "a.txt", "edits": [{"oldText": "delta", "newText": "y"}]}),
    ("missing file", {"path": "none.txt", "edits": [{"oldText": "a", "newText": "b"}]}),
    (
        "overlap",
        {
            "path": "a.txt",
            "edits": [{"oldText": "alpha\nbeta", "newText": "1"}, {"oldText": "beta\ngamma", "newText": "2"}],
        },
    ),
]


def _unified(path: str, before: str, after: str) -> str:
    lines = difflib.unified_diff(
        before.splitlines(keepends=True), after.splitlines(keepends=True), path, path
    )
    return "".join(lines)


@pytest.mark.parametrize("args", [c[1] for c in EDITS], ids=[c[0] for c in EDITS])
async def test_edit_preview(pi_tools: PiTools, tmp_path: Path, args: dict[str, Any]) -> None:
    make_tree(tmp_path, FILES)
    before = snapshot(tmp_path)
    edit = create_tools(["edit"])[0]
    ctx = ToolContext(cwd=str(tmp_path))
    preview = await edit.preview(args, ctx)
    assert snapshot(tmp_path) == before  # nothing written
    absolute = str(tmp_path / args["path"])
    assert preview is not None and preview["path"] == absolute
    theirs = pi_tools.call("editPreview", cwd=str(tmp_path), path=args["path"], edits=args["edits"])
    if "error" in theirs:
        assert preview == {"path": absolute, "error": theirs["error"]}
        return
    old = Path(absolute).read_bytes().decode()
    await edit.execute("1", args, ctx)
    new = Path(absolute).read_bytes().decode()
    assert preview["diff"] == _unified(absolute, old, new)
    assert preview["newContent"] == new  # the whole file, as the call then wrote it
    hunks = preview["hunks"]  # the diff split into its hunks, after the ---/+++ lines
    assert [hunk["index"] for hunk in hunks] == list(range(len(hunks))) and hunks
    assert "".join(hunk["diff"] for hunk in hunks) == preview["diff"].split("\n", 2)[2]
    assert all(hunk["diff"].startswith(hunk["header"] + "\n") for hunk in hunks)


async def test_write_preview_new_and_existing(tmp_path: Path) -> None:
    write = create_tools(["write"])[0]
    ctx = ToolContext(cwd=str(tmp_path))
    created = await write.preview({"path": "n/new.txt", "content": "hi\nthere"}, ctx)
    path = str(tmp_path / "n" / "new.txt")
    hunk = "@@ -0,0 +1,2 @@\n+hi\n+there\n\\ No newline at end of file\n"
    assert created == {
        "path": path,
        "diff": f"--- /dev/null\n+++ {path}\n{hunk}",
        "hunks": [{"index": 0, "header": "@@ -0,0 +1,2 @@", "diff": hunk}],
        "newContent": "hi\nthere",
    }
    assert not (tmp_path / "n").exists()
    (tmp_path / "old.txt").write_text("a\nb\n")
    changed = await write.preview({"path": "old.txt", "content": "a\nc\n"}, ctx)
    assert changed is not None and changed["diff"].endswith("@@ -1,2 +1,2 @@\n a\n-b\n+c\n")


async def test_bash_preview_is_the_command(tmp_path: Path) -> None:
    bash = create_tools(["bash"])[0]
    assert await bash.preview({"command": "rm -rf build"}, ToolContext(cwd=str(tmp_path))) == {
        "command": "rm -rf build"
    }
    read = create_tools(["read"])[0]
    assert await read.preview({"path": "x"}, ToolContext(cwd=str(tmp_path))) is None
