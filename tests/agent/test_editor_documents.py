"""Unsaved editor buffers: read shows them (and says so), edit/write refuse to touch the file."""

from __future__ import annotations

from pathlib import Path

import pytest

from pi_lsp.agent.documents import EditorDocuments
from pi_lsp.agent.tools import ToolContext, ToolError, create_tools


def _ctx(tmp_path: Path, docs: EditorDocuments) -> ToolContext:
    return ToolContext(cwd=str(tmp_path), documents=docs)


@pytest.fixture
def opened(tmp_path: Path) -> tuple[Path, EditorDocuments]:
    path = tmp_path / "m.py"
    path.write_text("on disk\n")
    docs = EditorDocuments()
    docs.open(path.as_uri(), "on disk\n", owner="c1")
    return path, docs


async def test_clean_buffer_changes_nothing(tmp_path: Path, opened: tuple[Path, EditorDocuments]) -> None:
    path, docs = opened
    read, edit = create_tools(["read", "edit"])
    assert docs.unsaved_text(str(path)) is None
    assert (await read.execute("1", {"path": "m.py"}, _ctx(tmp_path, docs))).content[0]["text"] == "on disk\n"
    await edit.execute(
        "2", {"path": "m.py", "edits": [{"oldText": "disk", "newText": "DISK"}]}, _ctx(tmp_path, docs)
    )
    assert path.read_text() == "on DISK\n"


async def test_dirty_buffer_is_read_from_the_editor(
    tmp_path: Path, opened: tuple[Path, EditorDocuments]
) -> None:
    path, docs = opened
    docs.change(path.as_uri(), "typed\nin editor\n", owner="c1")
    read = create_tools(["read"])[0]
    result = await read.execute("1", {"path": str(path)}, _ctx(tmp_path, docs))
    text = result.content[0]["text"]
    assert text.startswith("typed\nin editor\n\n\n[This file has unsaved changes in the user's editor")
    limited = await read.execute("1", {"path": "m.py", "offset": 2, "limit": 1}, _ctx(tmp_path, docs))
    assert limited.content[0]["text"].startswith(
        "in editor\n\n[1 more lines in file. Use offset=3 to continue.]"
    )


@pytest.mark.parametrize(
    ("tool", "args"),
    [
        ("edit", {"path": "m.py", "edits": [{"oldText": "unsaved", "newText": "x"}]}),
        ("write", {"path": "m.py", "content": "replaced"}),
    ],
)
async def test_dirty_buffer_is_never_overwritten(
    tmp_path: Path, opened: tuple[Path, EditorDocuments], tool: str, args: dict[str, object]
) -> None:
    path, docs = opened
    docs.change(path.as_uri(), "unsaved work\n", owner="c1")
    with pytest.raises(ToolError, match="open in the user's editor with unsaved changes"):
        await create_tools([tool])[0].execute("1", dict(args), _ctx(tmp_path, docs))
    assert path.read_text() == "on disk\n"
    path.write_text("unsaved work\n")  # the user saves
    docs.save(path.as_uri(), owner="c1")
    await create_tools([tool])[0].execute("1", dict(args), _ctx(tmp_path, docs))
    assert path.read_text() != "unsaved work\n"


def test_close_and_owner_cleanup(tmp_path: Path) -> None:
    path = tmp_path / "x.txt"
    path.write_text("a")
    docs = EditorDocuments()
    docs.open(path.as_uri(), "b", owner="c1")
    docs.open(path.as_uri(), "a", owner="c2")
    assert docs.unsaved_text(str(path)) == "b"
    docs.close(path.as_uri(), owner="c1")
    assert docs.unsaved_text(str(path)) is None
    docs.open(path.as_uri(), "c", owner="c2")
    docs.close_owner("c2")
    assert docs.unsaved_text(str(path)) is None and docs.open_paths() == []


def test_new_unsaved_file_counts_and_other_schemes_are_ignored(tmp_path: Path) -> None:
    docs = EditorDocuments()
    missing = tmp_path / "new.txt"
    docs.open(missing.as_uri(), "", owner="c")
    assert docs.unsaved_text(str(missing)) == ""
    docs.open("untitled:Untitled-1", "scratch", owner="c")
    assert docs.open_paths() == [str(missing)]
