"""Which file edit/write change, with real symlinks: the approval check, the preview, the editor
guard and the write all name one real file, and a path swapped for a symlink after the check is
never written through (the server-level tests are in ``test_approval_paths.py``)."""

from __future__ import annotations

import asyncio
import contextlib
import os
from pathlib import Path

import pytest

from pi_lsp.agent.approvals import check_call
from pi_lsp.agent.documents import EditorDocuments
from pi_lsp.agent.tools import ToolContext, ToolError, create_tools
from pi_lsp.agent.tools.files import write_file
from pi_lsp.agent.tools.nofollow import SymlinkInPath, open_folder
from pi_lsp.agent.tools.targets import (
    ABSENT,
    CheckedTarget,
    CheckedTargets,
    content_digest,
    file_target,
)
from pi_lsp.server.initialize import workspace_folders
from pi_lsp.service.registry import Client


@pytest.fixture
def world(tmp_path: Path) -> tuple[Path, Path]:
    """``ws`` (the workspace) and ``out`` (a folder beside it); ``ws/link`` → ``out/deep/dir``,
    ``ws/link `` (trailing space) → the same; ``ws/evil`` → ``out/bashrc``."""
    root = Path(os.path.realpath(tmp_path))
    ws, out = root / "ws", root / "out"
    (out / "deep" / "dir").mkdir(parents=True)
    ws.mkdir()
    (out / "bashrc").write_text("# the user's shell\n")
    os.symlink(out / "deep" / "dir", ws / "link")
    os.symlink(out / "deep" / "dir", ws / "link ")
    os.symlink(out / "bashrc", ws / "evil")
    return ws, out


@pytest.mark.parametrize(
    "path",
    [
        "WS/link/../escape.txt",  # the reported case
        "@WS/link/../escape.txt",  # pi drops one leading @
        "~/link/../escape.txt",  # ~ is the workspace here (HOME)
        "WS/link\u00a0/../escape.txt",  # a Unicode space pi turns into a plain one
    ],
)
def test_a_path_through_a_symlink_and_dotdot_is_judged_where_the_kernel_writes(
    world: tuple[Path, Path], path: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws, out = world
    monkeypatch.setenv("HOME", str(ws))
    check = check_call("write", {"path": path.replace("WS", str(ws))}, str(ws), [str(ws)])
    assert check.target is not None and check.target.real == str(out / "deep" / "escape.txt")
    assert check.outside and check.needs_approval("acceptEdits", "write")
    assert check.preview_fields()["path"] == str(out / "deep" / "escape.txt")


def test_relative_dotdot_is_lexical_as_in_pi_and_judged_so(world: tuple[Path, Path]) -> None:
    """pi resolves a relative path with ``path.resolve`` (``link/..`` folds away): that is the file
    written, and it is inside."""
    ws, _out = world
    check = check_call("edit", {"path": "link/../here.txt"}, str(ws), [str(ws)])
    assert check.target is not None and check.target.real == str(ws / "here.txt") and not check.outside


def test_a_symlinked_file_counts_where_its_target_is(world: tuple[Path, Path]) -> None:
    ws, out = world
    check = check_call("edit", {"path": "evil"}, str(ws), [str(ws)])
    assert check.target is not None and check.target.real == str(out / "bashrc") and check.outside
    assert check.preview_fields()["requestedPath"] == str(ws / "evil")


def test_the_boundary_is_the_workspace_folders_never_the_session_cwd(world: tuple[Path, Path]) -> None:
    ws, out = world
    inside = {"path": str(ws / "a.txt")}
    from_root = check_call("write", inside, "/", [str(ws)])  # a session file saying cwd: "/"
    assert not from_root.outside and from_root.cwd_outside
    assert from_root.needs_approval("acceptEdits", "write")
    assert from_root.preview_fields()["cwdOutsideWorkspace"] is True
    assert check_call("write", {"path": str(out / "x")}, "/", [str(ws)]).outside
    no_folders = check_call("write", {"path": "a.txt"}, str(ws), [])  # an editor with a single file
    assert no_folders.outside and no_folders.cwd_outside
    assert not check_call("write", inside, str(ws), [str(ws)]).needs_approval("acceptEdits", "write")
    assert not check_call("bash", {"command": "ls"}, str(ws), [str(ws)]).cwd_outside


def test_every_workspace_folder_counts_and_folder_changes_follow() -> None:
    params = {"workspaceFolders": [{"uri": "file:///a", "name": "a"}, {"uri": "file:///b%20c", "name": "b"}]}
    assert workspace_folders(params) == ["/a", "/b c"]
    assert workspace_folders({"rootUri": "file:///r"}) == ["/r"]
    assert workspace_folders({"rootPath": "/p"}) == ["/p"]
    assert workspace_folders({"workspaceFolders": None, "rootUri": None}) == []
    client = Client(workspace_folders=["/a", "/b"])
    client.change_folders(added=["/c"], removed=["/a"])
    assert client.workspace_folders == ["/b", "/c"]


async def test_the_preview_shows_the_real_file(world: tuple[Path, Path]) -> None:
    ws, out = world
    write, edit = create_tools(["write", "edit"])
    ctx = ToolContext(cwd=str(ws))
    requested = str(ws / "link" / ".." / "escape.txt")
    preview = await write.preview({"path": requested, "content": "x\n"}, ctx)
    real = str(out / "deep" / "escape.txt")
    assert preview is not None and preview["path"] == real and preview["requestedPath"] == requested
    assert f"+++ {real}" in preview["diff"]
    edited = await edit.preview({"path": "evil", "edits": [{"oldText": "shell", "newText": "x"}]}, ctx)
    assert edited is not None and edited["path"] == str(out / "bashrc")
    assert f"--- {out / 'bashrc'}" in edited["diff"]


async def test_the_editor_guard_looks_at_the_file_really_written(world: tuple[Path, Path]) -> None:
    """An unsaved buffer of ``out/deep/notes.txt`` protects it from a write spelled
    ``ws/link/../notes.txt`` (the guard used to look at ``ws/notes.txt``, the lexical folding)."""
    ws, out = world
    real = out / "deep" / "notes.txt"
    real.write_text("saved\n")
    docs = EditorDocuments()
    docs.open(real.as_uri(), "saved\nand typed, not saved yet\n", owner="c1")
    write = create_tools(["write"])[0]
    with pytest.raises(ToolError, match="unsaved changes"):
        await write.execute(
            "1", {"path": str(ws / "link" / ".." / "notes.txt"), "content": "model\n"},
            ToolContext(cwd=str(ws), documents=docs),
        )  # fmt: skip
    assert real.read_text() == "saved\n"
    assert docs.unsaved_text(str(ws / "link" / ".." / "notes.txt")) is not None


def _checked(ctx: ToolContext, call_id: str, path: str, cwd: Path, content: bytes | None = None) -> None:
    assert ctx.checked is not None
    digest = content_digest(content) if content is not None else None
    ctx.checked.record(call_id, CheckedTarget(file_target(path, str(cwd)), digest))


async def test_a_folder_swapped_for_a_symlink_after_the_check_is_not_written_through(
    world: tuple[Path, Path],
) -> None:
    ws, out = world
    (ws / "sub").mkdir()
    ctx = ToolContext(cwd=str(ws), checked=CheckedTargets())
    write, edit = create_tools(["write", "edit"])
    _checked(ctx, "w", "sub/new/deeper.txt", ws)
    (ws / "sub").rmdir()
    os.symlink(out, ws / "sub")  # while the approval dialog was open
    with pytest.raises(ToolError, match="was not modified: it now resolves to"):
        await write.execute("w", {"path": "sub/new/deeper.txt", "content": "x"}, ctx)
    assert sorted(p.name for p in out.iterdir()) == ["bashrc", "deep"]  # no folder made there either

    (ws / "mine.txt").write_text("one\n")
    _checked(ctx, "e", "mine.txt", ws)
    (ws / "mine.txt").unlink()
    os.symlink(out / "bashrc", ws / "mine.txt")
    with pytest.raises(ToolError, match="was not modified"):
        await edit.execute("e", {"path": "mine.txt", "edits": [{"oldText": "shell", "newText": "x"}]}, ctx)
    assert (out / "bashrc").read_text() == "# the user's shell\n"


def test_the_write_itself_never_follows_a_symlink_in_the_checked_path(world: tuple[Path, Path]) -> None:
    """The last line of defence: the target decided earlier is written through folders opened one
    by one, so a swap between that decision and the write fails instead of being followed."""
    ws, out = world
    (ws / "sub").mkdir()
    target = file_target("sub/a/b.txt", str(ws))
    (ws / "sub").rmdir()
    os.symlink(out, ws / "sub")
    with pytest.raises(ToolError, match=r"sub is a symbolic link where the checked path"):
        write_file(target, b"x")
    assert not (out / "a").exists()
    (ws / "sub").unlink()
    (ws / "sub").mkdir()
    (ws / "sub" / "f.txt").write_text("mine")
    final = file_target("sub/f.txt", str(ws))
    (ws / "sub" / "f.txt").unlink()
    os.symlink(out / "bashrc", ws / "sub" / "f.txt")
    with pytest.raises(ToolError, match="symbolic link"):
        write_file(final, b"x", approved=content_digest(b"mine"))
    assert (out / "bashrc").read_text() == "# the user's shell\n"
    with pytest.raises(SymlinkInPath):
        os.close(open_folder(str(ws / "link")))


async def test_a_file_changed_after_its_approval_is_not_overwritten(tmp_path: Path) -> None:
    (tmp_path / "w.txt").write_text("shown\n")
    (tmp_path / "e.txt").write_text("alpha\n")
    ctx = ToolContext(cwd=str(tmp_path), checked=CheckedTargets())
    write, edit = create_tools(["write", "edit"])
    _checked(ctx, "1", "w.txt", tmp_path, b"shown\n")
    _checked(ctx, "2", "e.txt", tmp_path, b"alpha\n")
    (tmp_path / "w.txt").write_text("saved by the user\n")
    (tmp_path / "e.txt").write_text("alpha\nsaved by the user\n")
    with pytest.raises(ToolError, match="changed on disk after the user was shown this write"):
        await write.execute("1", {"path": "w.txt", "content": "model\n"}, ctx)
    with pytest.raises(ToolError, match="changed on disk after the user was shown this edit"):
        await edit.execute("2", {"path": "e.txt", "edits": [{"oldText": "alpha", "newText": "A"}]}, ctx)
    assert (tmp_path / "w.txt").read_text() == "saved by the user\n"
    assert (tmp_path / "e.txt").read_text() == "alpha\nsaved by the user\n"
    # a file approved as new that someone created meanwhile is not overwritten either
    ctx.checked.record("3", CheckedTarget(file_target("n.txt", str(tmp_path)), ABSENT))
    (tmp_path / "n.txt").write_text("theirs")
    with pytest.raises(ToolError, match="changed on disk"):
        await write.execute("3", {"path": "n.txt", "content": "model"}, ctx)
    # unchanged: written as approved
    ctx.checked.record("4", CheckedTarget(file_target("n.txt", str(tmp_path)), content_digest(b"theirs")))
    await write.execute("4", {"path": "n.txt", "content": "model"}, ctx)
    assert (tmp_path / "n.txt").read_text() == "model"


async def test_a_fifo_or_device_behind_a_path_is_never_read(world: tuple[Path, Path]) -> None:
    """A symlink to a FIFO (or ``/dev/zero``) would block, or fill memory, while the approval
    preview read it; the preview treats it as no file, and edit refuses it."""
    ws, out = world
    fifo = out / "pipe"
    os.mkfifo(fifo)
    os.symlink(fifo, ws / "pipe")
    write, edit = create_tools(["write", "edit"])
    ctx = ToolContext(cwd=str(ws))
    try:
        preview = await asyncio.wait_for(write.preview({"path": "pipe", "content": "x"}, ctx), 10)
        assert preview is not None and preview["path"] == str(fifo) and "--- /dev/null" in preview["diff"]
        args = {"path": "pipe", "edits": [{"oldText": "a", "newText": "b"}]}
        planned = await asyncio.wait_for(edit.preview(args, ctx), 10)
        assert planned is not None and "not a regular file" in planned["error"]
        with pytest.raises(ToolError, match="not a regular file"):
            await asyncio.wait_for(edit.execute("1", args, ctx), 10)
    finally:  # a reader still blocked in open (the code before the fix) is let go
        with contextlib.suppress(OSError):
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
