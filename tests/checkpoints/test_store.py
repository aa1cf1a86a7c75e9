"""The checkpoint engine on real folders and the real ``git``: what a snapshot holds (nested
repositories, ignore rules, attributes, sizes, links, modes), restores and their undo, limits, and
two stores of one workspace working at once."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from pi_lsp.checkpoints import restore as restores
from pi_lsp.checkpoints.snapshot import Limits, TooBroad, TooManyFiles, capture
from pi_lsp.checkpoints.store import WorkspaceStore
from tests.checkpoints.support import file_tree, git, hash_dir


def tree_paths(store: WorkspaceStore, tree: str) -> set[str]:
    return {change.path for change in store.diff(None, tree)}


def restore(
    store: WorkspaceStore, current: str | None, target: str, force: bool = False
) -> dict[str, object]:
    return restores.apply(store, restores.plan_restore(store, current, target), force)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    cwd = tmp_path / "ws"
    cwd.mkdir()
    return cwd


def test_nested_repositories_are_captured_as_files_and_no_git_folder_is(
    workspace: Path, tmp_path: Path
) -> None:
    (workspace / "top.txt").write_text("top\n")
    git(workspace, "init", "-q")
    empty = workspace / "libs" / "empty"  # a repository without a commit: git add -A fails on it
    empty.mkdir(parents=True)
    git(empty, "init", "-q")
    (empty / "e.txt").write_text("e\n")
    committed = workspace / "committed"  # with a commit: git add -A would store a gitlink
    committed.mkdir()
    git(committed, "init", "-q")
    (committed / "c.txt").write_text("c\n")
    (committed / ".gitignore").write_text("*.tmp\n")
    (committed / "x.tmp").write_text("ignored by the nested repository\n")
    git(committed, "add", "-A")
    git(committed, "commit", "-qm", "c")
    (workspace / "worktree").mkdir()
    (workspace / "worktree" / ".git").write_text("gitdir: /nowhere\n")  # a worktree's or submodule's link
    (workspace / "worktree" / "w.txt").write_text("w\n")
    hashes = {path: hash_dir(path / ".git") for path in (workspace, empty, committed)}

    store = WorkspaceStore(str(workspace), tmp_path / "agent")
    tree = capture(store, Limits())
    assert tree_paths(store, tree) == {
        "top.txt", "libs/empty/e.txt", "committed/c.txt", "committed/.gitignore", "worktree/w.txt",
    }  # fmt: skip
    modes = store.git(["ls-tree", "-r", tree]).decode()
    assert "160000" not in modes  # no gitlinks
    (empty / "later.txt").write_text("later\n")
    (committed / "c.txt").write_text("changed\n")
    again = capture(store, Limits())
    assert {(c.path, c.kind) for c in store.diff(tree, again)} == {
        ("libs/empty/later.txt", "added"), ("committed/c.txt", "modified"),
    }  # fmt: skip
    assert {path: hash_dir(path / ".git") for path in hashes} == hashes
    assert not str(store.folder).startswith(str(workspace))


def test_bytes_are_kept_whatever_gitattributes_and_ignore_rules_say(workspace: Path, tmp_path: Path) -> None:
    git(workspace, "init", "-q")
    (workspace / ".gitattributes").write_text("* text=auto eol=lf\n*.txt filter=lfs\n")
    (workspace / ".git" / "info" / "exclude").write_text("secret.env\n")
    (workspace / ".gitignore").write_text("build/\n")
    (workspace / "crlf.txt").write_bytes(b"one\r\ntwo\r\n")
    (workspace / "secret.env").write_text("KEY=1\n")
    (workspace / "build").mkdir()
    (workspace / "build" / "out.o").write_bytes(b"\0")
    store = WorkspaceStore(str(workspace), tmp_path / "agent")
    first = capture(store, Limits())
    assert tree_paths(store, first) == {".gitattributes", ".gitignore", "crlf.txt"}
    (workspace / "crlf.txt").write_bytes(b"changed\n")
    second = capture(store, Limits())
    result = restore(store, second, first)
    assert result["restored"] == [{"path": "crlf.txt", "change": "modify"}]
    assert (workspace / "crlf.txt").read_bytes() == b"one\r\ntwo\r\n"


def test_links_modes_binary_and_large_files(workspace: Path, tmp_path: Path) -> None:
    (workspace / "bin.dat").write_bytes(bytes(range(256)))
    (workspace / "tool").write_text("#!/bin/sh\n")
    (workspace / "tool").chmod(0o700)
    os.symlink("bin.dat", workspace / "link")
    os.symlink("missing-target", workspace / "dangling")
    (workspace / "big.iso").write_bytes(b"x" * 2048)
    store = WorkspaceStore(str(workspace), tmp_path / "agent")
    limits = Limits(max_file_bytes=1024)
    first = capture(store, limits)
    assert tree_paths(store, first) == {"bin.dat", "tool", "link", "dangling"}
    before = file_tree(workspace)
    (workspace / "bin.dat").write_bytes(b"text now")
    (workspace / "tool").chmod(0o600)
    os.unlink(workspace / "link")
    (workspace / "link").write_text("a file where the link was")
    os.unlink(workspace / "dangling")
    (workspace / "big.iso").write_bytes(b"y" * 4096)
    (workspace / "small.txt").write_text("small")
    second = capture(store, limits)
    result = restore(store, second, first)
    assert result["conflicts"] == []
    after = file_tree(workspace)
    assert after["tool"] == ("file", b"#!/bin/sh\n", 0o700)  # its own bits back, exec included
    assert {k: v for k, v in after.items() if k not in ("big.iso", "tool")} == {
        k: v for k, v in before.items() if k not in ("big.iso", "tool")
    }
    assert after["big.iso"] == ("file", b"y" * 4096, 0o644)  # too large: never captured, never touched
    moves = restores.undo_moves(store, str(result["undoId"]))
    undo_plan = restores.plan(store.cwd, moves, restores.read_written(store))
    undone = restores.apply(store, undo_plan, False, record_undo=False)
    assert undone["conflicts"] == []
    assert (workspace / "link").read_text() == "a file where the link was"
    assert (workspace / "small.txt").read_text() == "small"
    assert (workspace / "bin.dat").read_bytes() == b"text now"


def test_too_many_files_is_refused_before_anything_is_stored(workspace: Path, tmp_path: Path) -> None:
    for number in range(5):
        (workspace / f"f{number}").write_text(str(number))
    store = WorkspaceStore(str(workspace), tmp_path / "agent")
    with pytest.raises(TooManyFiles):
        capture(store, Limits(max_files=4))
    assert not store.index.exists()
    capture(store, Limits(max_files=5))


def test_a_huge_tree_stops_the_listing_at_the_limit(workspace: Path, tmp_path: Path) -> None:
    """git is stopped once it has named more new files than the limit allows, not left to walk the
    whole tree (a session whose cwd is a home folder full of projects); changed files already held
    do not count as new."""
    for number in range(300):
        (workspace / f"f{number}").write_text(str(number))
    store = WorkspaceStore(str(workspace), tmp_path / "agent")
    with pytest.raises(TooManyFiles) as refused:
        capture(store, Limits(max_files=20))
    assert refused.value.count is None and "more than 20 files" in str(refused.value)
    capture(store, Limits(max_files=300))
    for number in range(300):
        (workspace / f"f{number}").write_text(f"changed {number}")
    capture(store, Limits(max_files=300))  # 300 changed, none new: within the limit


@pytest.mark.parametrize("where", ["root", "home"])
def test_the_root_or_the_home_folder_is_never_captured(
    where: str, workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A session file may name ``/`` or ``~`` as its cwd: a snapshot would walk the whole disk and
    a rewind could delete files anywhere; refused before git runs (no index is written)."""
    if where == "home":
        monkeypatch.setenv("HOME", str(workspace))
        cwd = str(workspace / "sub" / "..")
    else:
        cwd = "/"
    store = WorkspaceStore(cwd, tmp_path / "agent")
    with pytest.raises(TooBroad) as refused:
        capture(store, Limits())
    assert "checkpoints are off" in str(refused.value)
    assert not store.index.exists()


def test_a_folder_where_a_file_should_go_is_a_conflict_even_forced(workspace: Path, tmp_path: Path) -> None:
    (workspace / "a").write_text("file\n")
    store = WorkspaceStore(str(workspace), tmp_path / "agent")
    first = capture(store, Limits())
    (workspace / "a").unlink()
    second = capture(store, Limits())
    (workspace / "a").mkdir()
    (workspace / "a" / "inner").write_text("mine\n")
    result = restore(store, second, first, force=True)
    assert result["conflicts"] == ["a"] and result["restored"] == []
    assert (workspace / "a" / "inner").read_text() == "mine\n"


def test_two_stores_of_one_workspace_capture_at_once(workspace: Path, tmp_path: Path) -> None:
    for number in range(300):
        (workspace / f"f{number:03}.txt").write_text(f"{number}\n")
    stores = [WorkspaceStore(str(workspace), tmp_path / "agent") for _ in range(4)]
    trees: list[str] = []
    errors: list[BaseException] = []

    def work(store: WorkspaceStore) -> None:
        try:
            for _ in range(3):
                trees.append(capture(store, Limits()))
        except BaseException as error:  # reported below
            errors.append(error)

    threads = [threading.Thread(target=work, args=(store,)) for store in stores]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == [] and len(set(trees)) == 1
    assert len(tree_paths(stores[0], trees[0])) == 300
    stores[0].git(["fsck", "--no-progress"])


def test_a_restore_never_writes_through_a_link_out_of_the_workspace(workspace: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (workspace / "src").mkdir()
    (workspace / "src" / "main.py").write_text("print(1)\n")
    store = WorkspaceStore(str(workspace), tmp_path / "agent")
    first = capture(store, Limits())
    (workspace / "src" / "main.py").unlink()
    (workspace / "src").rmdir()
    second = capture(store, Limits())
    os.symlink(outside, workspace / "src")  # made after the last snapshot: e.g. by a tool's command
    result = restore(store, second, first, force=True)
    assert result["conflicts"] == ["src/main.py"] and result["restored"] == []
    assert list(outside.iterdir()) == []
    assert os.path.islink(workspace / "src")


def test_a_real_worktree_and_submodule_inside_the_workspace(workspace: Path, tmp_path: Path) -> None:
    """``git worktree add`` and ``git submodule add`` inside the workspace: their files are captured
    as files (no gitlink), their ``.git`` links are not, and no repository is written to."""
    library = tmp_path / "library"
    library.mkdir()
    git(library, "init", "-q")
    (library / "lib.py").write_text("LIB = 1\n")
    git(library, "add", "-A")
    git(library, "commit", "-qm", "lib")
    (workspace / "main.py").write_text("main\n")
    git(workspace, "init", "-q")
    git(workspace, "add", "-A")
    git(workspace, "commit", "-qm", "start")
    git(workspace, "-c", "protocol.file.allow=always", "submodule", "-q", "add", str(library), "vendor/lib")
    git(workspace, "commit", "-qm", "submodule")
    git(workspace, "worktree", "add", "-q", "trees/feature")
    (workspace / "trees" / "feature" / "feature.py").write_text("feature\n")
    hashes = {path: hash_dir(path / ".git") for path in (workspace, library)}

    store = WorkspaceStore(str(workspace), tmp_path / "agent")
    tree = capture(store, Limits())
    assert tree_paths(store, tree) == {
        "main.py", ".gitmodules", "vendor/lib/lib.py", "trees/feature/main.py",
        "trees/feature/.gitmodules", "trees/feature/feature.py",
    }  # fmt: skip
    assert "160000" not in store.git(["ls-tree", "-r", tree]).decode()
    (workspace / "vendor" / "lib" / "lib.py").write_text("LIB = 2\n")
    (workspace / "trees" / "feature" / "feature.py").unlink()
    again = capture(store, Limits())
    assert {(c.path, c.kind) for c in store.diff(tree, again)} == {
        ("vendor/lib/lib.py", "modified"), ("trees/feature/feature.py", "deleted"),
    }  # fmt: skip
    result = restore(store, again, tree)
    assert result["conflicts"] == [] and len(result["restored"]) == 2  # type: ignore[arg-type]
    assert (workspace / "trees" / "feature" / "feature.py").read_text() == "feature\n"
    assert {path: hash_dir(path / ".git") for path in hashes} == hashes
    assert git(workspace, "status", "--porcelain") == "?? trees/\n"  # the user's view: unchanged


def test_folders_skipped_later_leave_the_index_and_are_never_listed(workspace: Path, tmp_path: Path) -> None:
    """A store made before the session folder was skipped (or by a server with another sessionDir)
    drops that folder's files at the first snapshot that skips it; a workspace ``.gitignore`` that
    re-includes it changes nothing; names with ignore-rule characters are matched literally."""
    (workspace / "code.py").write_text("code\n")
    sessions = workspace / ".pi" / "se[s]sions #1"
    sessions.mkdir(parents=True)
    (sessions / "s.jsonl").write_text("{}\n")
    (workspace / ".pi" / "settings.json").write_text("{}\n")
    store = WorkspaceStore(str(workspace), tmp_path / "agent")
    before = capture(store, Limits())
    assert tree_paths(store, before) == {"code.py", ".pi/se[s]sions #1/s.jsonl", ".pi/settings.json"}
    (workspace / ".gitignore").write_text("!*\n")
    after = capture(store, Limits(), [str(sessions)])
    assert tree_paths(store, after) == {"code.py", ".pi/settings.json", ".gitignore"}
    (sessions / "s.jsonl").write_text("{}\n{}\n")
    (sessions / "other.jsonl").write_text("{}\n")
    assert capture(store, Limits(), [str(sessions)]) == after
    assert capture(store, Limits(), [str(tmp_path / "elsewhere"), str(workspace)]) != after  # nothing inside
