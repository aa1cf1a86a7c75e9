"""Capturing a workspace into its store: the index is the stat cache, the tree id the snapshot.

One capture asks git for what changed since the last one (``ls-files -o -m``: untracked files and
tracked files whose stat changed, honouring ``.gitignore`` and ``info/exclude``), filters sizes
here, updates the index with exactly those paths and writes the tree. Nested repositories (a
folder holding ``.git``) are listed with their own pass and added as files, never as git's
"embedded repository" links; their ``.git`` is skipped like the workspace's own.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

from pi_lsp.checkpoints.store import StoreError, WorkspaceStore

DEFAULT_MAX_FILE_BYTES = 10 * 1024 * 1024
DEFAULT_MAX_FILES = 50_000
NESTED_INDEX = "nested-index"  # never created: a nested repository is listed against an empty index


@dataclass(frozen=True)
class Limits:
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES
    max_files: int = DEFAULT_MAX_FILES


class TooManyFiles(Exception):
    """The workspace holds more files than ``checkpoints.maxFiles``: it is not captured."""

    def __init__(self, count: int, limit: int) -> None:
        super().__init__(
            f"the workspace has more than {limit} files ({count} found); checkpoints are off for it"
        )
        self.count = count
        self.limit = limit


def capture(store: WorkspaceStore, limits: Limits) -> str:
    """Snapshot the workspace now; the tree id. Takes the store's lock."""
    if not os.path.isdir(store.cwd):
        raise StoreError(store.cwd, "the workspace folder does not exist")
    with store.locked():
        _copy_exclude(store)
        listing = store.git(["ls-files", "-z", "-t", "-o", "-m", "--exclude-standard"])
        untracked: list[str] = []
        changed: list[str] = []
        for item in listing.split(b"\0"):
            if not item:
                continue
            tag, path = item[:1], os.fsdecode(item[2:])
            if tag == b"?":
                if path.endswith("/"):
                    untracked += _nested(store, path, limits)
                else:
                    untracked.append(path)
            else:
                changed.append(path)
        if len(untracked) > limits.max_files:
            raise TooManyFiles(len(untracked), limits.max_files)
        add, drop = _by_size(store.cwd, untracked + changed, limits.max_file_bytes)
        new_count = _index_count(store.index) + len(untracked)
        if new_count > limits.max_files:
            raise TooManyFiles(new_count, limits.max_files)
        if add:
            store.git(["update-index", "--add", "--remove", "--replace", "-z", "--stdin"], stdin=_z(add))
        if drop:
            store.git(["update-index", "--force-remove", "-z", "--stdin"], stdin=_z(drop))
        return store.git(["write-tree"]).decode().strip()


def _nested(store: WorkspaceStore, folder: str, limits: Limits) -> list[str]:
    """The files of a nested repository ``folder`` (relative, ending in ``/``), by its own rules."""
    root = os.path.join(store.cwd, folder)
    if not os.path.lexists(os.path.join(root, ".git")):
        return []  # git lists an untracked folder only when it is a repository; be safe
    empty = store.folder / NESTED_INDEX
    listing = store.git(["ls-files", "-z", "-o", "--exclude-standard"], work_tree=root, index=empty)
    paths: list[str] = []
    for item in listing.split(b"\0"):
        if not item:
            continue
        path = os.fsdecode(item)
        if path.endswith("/"):
            paths += _nested(store, folder + path, limits)
        else:
            paths.append(folder + path)
        if len(paths) > limits.max_files:
            break
    return paths


def _by_size(cwd: str, paths: list[str], max_bytes: int) -> tuple[list[str], list[str]]:
    """(paths to add or remove, paths to drop from the index because they are too large now)."""
    add: list[str] = []
    drop: list[str] = []
    for path in paths:
        try:
            info = os.lstat(os.path.join(cwd, path))
        except OSError:
            add.append(path)  # gone: --remove takes it out
            continue
        if stat.S_ISREG(info.st_mode) and info.st_size > max_bytes:
            drop.append(path)
        else:
            add.append(path)
    return add, drop


def _index_count(index: Path) -> int:
    """Entries in the index, from its header (no process)."""
    try:
        with open(index, "rb") as handle:
            header = handle.read(12)
    except FileNotFoundError:
        return 0
    except OSError as error:
        raise StoreError(str(index), error.strerror or str(error)) from error
    return int.from_bytes(header[8:12], "big") if len(header) == 12 else 0


def _copy_exclude(store: WorkspaceStore) -> None:
    """The workspace repository's ``.git/info/exclude`` applies as git would apply it: copied into
    the store's own ``info/exclude`` (read only; the user's ``.git`` is never written)."""
    source = Path(store.cwd) / ".git" / "info" / "exclude"
    target = store.git_dir / "info" / "exclude"
    try:
        wanted = source.read_bytes() if source.is_file() else b""
    except OSError:
        wanted = b""
    try:
        current = target.read_bytes() if target.exists() else b""
        if current != wanted:
            target.write_bytes(wanted)
    except OSError as error:
        raise StoreError(str(target), error.strerror or str(error)) from error


def _z(paths: list[str]) -> bytes:
    return b"".join(os.fsencode(path) + b"\0" for path in paths)
