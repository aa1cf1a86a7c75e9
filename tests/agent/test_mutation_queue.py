"""edit/write on one file are serialised by real path, in order; other files are not held up."""

from __future__ import annotations

import asyncio
import errno
import os
from pathlib import Path

import pytest

from pi_lsp import atomic_file
from pi_lsp.agent.tools import ToolContext, create_tools
from pi_lsp.agent.tools.base import ToolError
from pi_lsp.agent.tools.files import held_folder, replace_held
from pi_lsp.agent.tools.mutation_queue import file_mutation, pending_files
from pi_lsp.agent.tools.targets import FileTarget


async def test_parallel_edits_of_one_file_all_land(tmp_path: Path) -> None:
    target = tmp_path / "f.txt"
    target.write_text("".join(f"line {i}\n" for i in range(50)))
    os.symlink(target, tmp_path / "link.txt")
    edit = create_tools(["edit"])[0]
    ctx = ToolContext(cwd=str(tmp_path))
    calls = [
        edit.execute(
            str(i),
            {
                "path": "link.txt" if i % 2 else "f.txt",
                "edits": [{"oldText": f"line {i}\n", "newText": f"LINE {i}\n"}],
            },
            ctx,
        )
        for i in range(50)
    ]
    results = await asyncio.gather(*calls)
    assert all(r.content[0]["text"].startswith("Successfully replaced 1 block(s)") for r in results)
    assert target.read_text() == "".join(f"LINE {i}\n" for i in range(50))
    assert (tmp_path / "link.txt").is_symlink()
    assert pending_files() == 0


async def test_writes_to_one_file_apply_in_call_order(tmp_path: Path) -> None:
    write = create_tools(["write"])[0]
    ctx = ToolContext(cwd=str(tmp_path))
    await asyncio.gather(
        *(write.execute(str(i), {"path": "w.txt", "content": f"v{i}"}, ctx) for i in range(20))
    )
    assert (tmp_path / "w.txt").read_text() == "v19"


async def test_a_busy_file_does_not_hold_up_another(tmp_path: Path) -> None:
    write = create_tools(["write"])[0]
    ctx = ToolContext(cwd=str(tmp_path))
    async with file_mutation(str(tmp_path / "a.txt")):
        blocked = asyncio.ensure_future(write.execute("1", {"path": "a.txt", "content": "A"}, ctx))
        await write.execute("2", {"path": "b.txt", "content": "B"}, ctx)
        assert (tmp_path / "b.txt").read_text() == "B"
        await asyncio.sleep(0.05)
        assert not blocked.done() and not (tmp_path / "a.txt").exists()
    await blocked
    assert (tmp_path / "a.txt").read_text() == "A"
    assert pending_files() == 0


async def test_write_keeps_mode_and_symlink(tmp_path: Path) -> None:
    target = tmp_path / "script.sh"
    target.write_text("old")
    target.chmod(0o751)
    os.symlink("script.sh", tmp_path / "alias")
    write = create_tools(["write"])[0]
    await write.execute("1", {"path": "alias", "content": "new"}, ToolContext(cwd=str(tmp_path)))
    assert (tmp_path / "alias").is_symlink() and target.read_text() == "new"
    assert target.stat().st_mode & 0o777 == 0o751
    assert sorted(p.name for p in tmp_path.iterdir()) == ["alias", "script.sh"]


def _replace(path: Path, data: bytes) -> None:
    target = FileTarget(str(path), str(path))
    with held_folder(target, create=False) as folder_fd:
        replace_held(folder_fd, target, data)


def test_replace_file_words_failures_as_node_does(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No temp file can be made (the folder is missing): node's ``open`` failure; the write itself
    fails (disk full): a ``write`` failure, and no temp file is left behind."""
    missing = tmp_path / "gone" / "a.txt"
    with pytest.raises(ToolError) as opened:
        _replace(missing, b"x")
    assert str(opened.value) == f"ENOENT: no such file or directory, open '{missing}'"

    target = tmp_path / "a.txt"
    target.write_text("old")

    def disk_full(*_args: object, **_kwargs: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(atomic_file.os, "replace", disk_full)
    with pytest.raises(ToolError) as wrote:
        _replace(target, b"new")
    assert str(wrote.value) == f"ENOSPC: no space left on device, write '{target}'"
    assert target.read_text() == "old" and [p.name for p in tmp_path.iterdir()] == ["a.txt"]
