"""Capturing a workspace into its store: the index is the stat cache, the tree id the snapshot.

One capture asks git for what changed since the last one (``ls-files -o -m``: untracked files and
tracked files whose stat changed, honouring ``.gitignore`` and ``info/exclude``), filters sizes
here, updates the index with exactly those paths and writes the tree. Nested repositories (a
folder holding ``.git``) are listed with their own pass and added as files, never as git's
"embedded repository" links; their ``.git`` is skipped like the workspace's own.

Folders of pi's and ours that may lie inside the workspace (the session folder, the agent dir with
this very store) are never captured: they change at every entry written, and restoring them would
rewrite the session under the server's feet. They are excluded like ignored paths.

The first capture of a workspace stores every file: with many new files git is asked to write them
into one pack (``core.bigFileThreshold=1`` makes ``update-index`` stream each blob into a single
bulk-checkin pack) rather than one loose object file each, which is most of the time on slow file
systems; later snapshots add few files and write them loose (one pack per snapshot would slow
every lookup until the next gc).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pi_lsp.atomic_file import replace_atomically
from pi_lsp.checkpoints.store import StoreError, WorkspaceStore

DEFAULT_MAX_FILE_BYTES = 10 * 1024 * 1024
DEFAULT_MAX_FILES = 50_000
NESTED_INDEX = "nested-index"  # never created: a nested repository is listed against an empty index
BULK_FILES = 256
"""From this many files to add, blobs go into one pack (see the module docstring)."""
SKIPPED_HEADER = b"\n# pi-lsp: pi's and the server's own folders inside the workspace\n"


@dataclass(frozen=True)
class Limits:
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES
    max_files: int = DEFAULT_MAX_FILES


class Refused(Exception):
    """The workspace is not captured; the message says why, in words for the user."""


class TooManyFiles(Refused):
    """The workspace holds more files than ``checkpoints.maxFiles``: it is not captured."""

    def __init__(self, count: int | None, limit: int) -> None:
        """``count``: the files found, or None when the listing was stopped past the limit."""
        found = f"{count} found" if count is not None else "the listing was stopped there"
        super().__init__(f"the workspace has more than {limit} files ({found}); checkpoints are off for it")
        self.count = count
        self.limit = limit


class TooBroad(Refused):
    """The workspace is the filesystem's root or the user's home folder (a session file can name
    either as its cwd): listing it would walk the whole disk, and a rewind there could delete files
    anywhere, so it is never captured."""

    def __init__(self, cwd: str) -> None:
        super().__init__(f"{cwd} is the filesystem root or your home folder; checkpoints are off for it")


def refuse_broad(cwd: str) -> None:
    """Raise :class:`TooBroad` for the root or the home folder (symlinks resolved)."""
    real = os.path.realpath(cwd)
    if os.path.dirname(real) == real or real == os.path.realpath(os.path.expanduser("~")):
        raise TooBroad(cwd)


def capture(store: WorkspaceStore, limits: Limits, skip: Sequence[str] = ()) -> str:
    """Snapshot the workspace now; the tree id. Takes the store's lock. ``skip``: folders never
    captured (the session folder, the agent dir); the store's own folder is always skipped."""
    if not os.path.isdir(store.cwd):
        raise StoreError(store.cwd, "the workspace folder does not exist")
    refuse_broad(store.cwd)
    skipped = skipped_folders(store, skip)
    with store.locked():
        if _write_exclude(store, skipped):
            _forget(store, skipped)
        # more listed than the limit plus the files already held means too many new ones: git is
        # stopped there rather than left to walk a huge tree to its end
        bound = limits.max_files + _index_count(store.index)
        listing = store.git_listing(["ls-files", "-z", "-t", "-o", "-m", "--exclude-standard"], bound)
        if listing is None:
            raise TooManyFiles(None, limits.max_files)
        untracked: list[str] = []
        changed: list[str] = []
        for item in listing.split(b"\0"):
            if not item:
                continue
            tag, path = item[:1], os.fsdecode(item[2:])
            if _under(path.rstrip("/"), skipped):
                continue  # a workspace rule may have re-included it ("!" in a .gitignore)
            if tag == b"?":
                if path.endswith("/"):
                    inner = _nested(store, path, limits)
                    untracked += [found for found in inner if not _under(found, skipped)]
                else:
                    untracked.append(path)
            elif not _under(path, skipped):
                changed.append(path)
        if len(untracked) > limits.max_files:
            raise TooManyFiles(len(untracked), limits.max_files)
        add, drop = _by_size(store.cwd, untracked + changed, limits.max_file_bytes)
        new_count = _index_count(store.index) + len(untracked)
        if new_count > limits.max_files:
            raise TooManyFiles(new_count, limits.max_files)
        if drop:  # first: a file that became a folder leaves before the folder's files come
            store.git(["update-index", "--force-remove", "-z", "--stdin"], stdin=_z(drop))
        if add:
            bulk = ["-c", "core.bigFileThreshold=1"] if len(add) >= BULK_FILES else []
            update = [*bulk, "update-index", "--add", "--remove", "--replace", "-z", "--stdin"]
            store.git(update, stdin=_z(add))
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
    """(paths to add or remove, paths to drop from the index: too large now, or a folder now, which
    ``update-index --remove`` refuses to process)."""
    add: list[str] = []
    drop: list[str] = []
    for path in paths:
        try:
            info = os.lstat(os.path.join(cwd, path))
        except OSError:
            add.append(path)  # gone: --remove takes it out
            continue
        if stat.S_ISDIR(info.st_mode) or (stat.S_ISREG(info.st_mode) and info.st_size > max_bytes):
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


def skipped_folders(store: WorkspaceStore, skip: Sequence[str]) -> list[str]:
    """The folders of ``skip`` (and the store's own root) that lie inside the workspace, relative
    to it, sorted; folders outside it (or the workspace itself) need nothing."""
    found: set[str] = set()
    for folder in [str(store.folder.parent), *skip]:
        relative = os.path.relpath(os.path.realpath(folder), store.cwd)
        if relative != "." and relative != ".." and not relative.startswith(".." + os.sep):
            found.add(relative.replace(os.sep, "/"))
    return sorted(found)


def _under(path: str, folders: Sequence[str]) -> bool:
    return any(path == folder or path.startswith(folder + "/") for folder in folders)


def _pattern(folder: str) -> bytes:
    """An ignore rule matching exactly the folder ``folder`` (relative to the workspace)."""
    escaped = "".join("\\" + char if char in "\\*?[]!# " else char for char in folder)
    return os.fsencode("/" + escaped + "/\n")


def _write_exclude(store: WorkspaceStore, skipped: Sequence[str]) -> bool:
    """The store's ``info/exclude``: the workspace repository's ``.git/info/exclude`` (applied as git
    would apply it; read only, the user's ``.git`` is never written) plus the skipped folders.
    Replaced atomically when it changes; whether the skipped folders changed."""
    source = Path(store.cwd) / ".git" / "info" / "exclude"
    target = store.git_dir / "info" / "exclude"
    try:
        wanted = source.read_bytes() if source.is_file() else b""
    except OSError:
        wanted = b""
    if skipped:
        wanted += SKIPPED_HEADER + b"".join(_pattern(folder) for folder in skipped)
    try:
        current = target.read_bytes() if target.exists() else b""
        if current == wanted:
            return False
        replace_atomically(target, wanted, mode=0o644)
    except OSError as error:
        raise StoreError(str(target), error.strerror or str(error)) from error
    old = current.partition(SKIPPED_HEADER)[2]
    return old != wanted.partition(SKIPPED_HEADER)[2]


def _forget(store: WorkspaceStore, skipped: Sequence[str]) -> None:
    """Take the skipped folders out of the index (a store made before they were skipped)."""
    if not skipped:
        return
    pathspecs = [f":(literal){folder}" for folder in skipped]
    held = store.git(["ls-files", "-z", "--cached", "--", *pathspecs])
    if held.strip(b"\0"):
        store.git(["update-index", "--force-remove", "-z", "--stdin"], stdin=held)


def _z(paths: list[str]) -> bytes:
    return b"".join(os.fsencode(path) + b"\0" for path in paths)
