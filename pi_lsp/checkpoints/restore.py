"""Restores: put files of the workspace in a snapshot's state, never losing what was there.

A restore is planned first (:func:`plan_restore`: which paths differ between the current leaf's
state and the target's, what each would do to the disk, which are conflicts), then written
(:func:`apply`): under the store's lock the current disk content of every file it touches is
saved into the store and an undo record written, then each file is written atomically (a temp
file renamed over it; a symlink made beside it and renamed), deletions first. ``written.json``
remembers what the server itself last wrote at each path, so a file it wrote is not a conflict.

A *conflict* is a file whose disk content is neither the current leaf's state nor what the
server last wrote there: someone changed it since. It is left alone unless forced; a folder or
special file where a file should go is always left alone.
"""

from __future__ import annotations

import contextlib
import os
import stat
import time
import uuid
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pi_lsp.atomic_file import replace_atomically
from pi_lsp.checkpoints.store import RESTORING, FileState, StoreError, WorkspaceStore, blob_id

WRITTEN = "written.json"
WRITERS = 8  # files written at once: creating a file is mostly waiting for the file system
SYMLINK = "120000"
EXECUTABLE = "100755"
OTHER: FileState = ("other", "")
"""A folder or special file on disk where the state has a file (or nothing)."""
FOLDER: FileState = ("folder", "")
"""A folder on disk where the target has a file, holding only files this restore deletes: gone
once the deletions are done (written first), so the file can take its place."""


@dataclass
class Planned:
    """One file a restore would change."""

    path: str
    change: str  # "create" | "modify" | "delete"
    conflict: bool
    disk: FileState
    target: FileState

    def to_wire(self) -> dict[str, Any]:
        return {"path": self.path, "change": self.change, "conflict": self.conflict}


def disk_file(cwd: str, path: str) -> tuple[FileState, bytes | None]:
    """The file at ``path`` as git would record it, with its bytes (a link's: its target)."""
    full = os.path.join(cwd, path)
    if not _folders_inside(cwd, path):
        return OTHER, None  # a link on the way out of the workspace: never written through
    try:
        info = os.lstat(full)
    except (FileNotFoundError, NotADirectoryError):
        return None, None
    if stat.S_ISLNK(info.st_mode):
        data = os.fsencode(os.readlink(full))
        return (SYMLINK, blob_id(data)), data
    if not stat.S_ISREG(info.st_mode):
        return OTHER, None
    with open(full, "rb") as handle:
        data = handle.read()
    mode = EXECUTABLE if info.st_mode & 0o100 else "100644"
    return (mode, blob_id(data)), data


def _state(value: Any) -> FileState:
    return (str(value[0]), str(value[1])) if isinstance(value, list) and len(value) == 2 else None


Written = dict[str, tuple[FileState, ...]]
"""Per path, the states the server itself may have left there (one, or two while a restore writes:
the old and the new, see :func:`_record_intent`)."""


def _states(value: Any) -> tuple[FileState, ...]:
    """``[mode, oid]`` or null: one state; a list of those: several."""
    if isinstance(value, list) and value and all(item is None or isinstance(item, list) for item in value):
        return tuple(_state(item) for item in value)
    return (_state(value),)


def read_written(store: WorkspaceStore) -> Written:
    raw = store.read_json(WRITTEN)
    return {path: _states(value) for path, value in raw.items()} if isinstance(raw, dict) else {}


def _write_written(store: WorkspaceStore, written: Written) -> None:
    wire = {
        path: _wire(states[0]) if len(states) == 1 else [_wire(state) for state in states]
        for path, states in written.items()
    }
    store.write_json(WRITTEN, wire)


def plan(cwd: str, moves: Sequence[tuple[str, FileState, FileState]], written: Written) -> list[Planned]:
    """For each (path, state the server expects there, state wanted), what writing it would do."""
    planned: list[Planned] = []
    for path, expected, target in moves:
        try:
            disk, _data = disk_file(cwd, path)
        except OSError:
            disk = OTHER
        if disk == target:
            continue
        change = "delete" if target is None else "create" if disk is None else "modify"
        known = disk == expected or disk in written.get(path, ())
        planned.append(Planned(path, change, disk == OTHER or not known, disk, target))
    _folders_that_empty(cwd, planned)
    return planned


def _folders_that_empty(cwd: str, planned: list[Planned]) -> None:
    """A folder where a file should go is no conflict when everything in it is deleted by the same
    restore (a file that became a folder, restored): it is marked :data:`FOLDER`."""
    deleted = {item.path for item in planned if item.target is None and not item.conflict}
    for item in planned:
        if item.disk != OTHER or item.target is None or not _is_folder(os.path.join(cwd, item.path)):
            continue
        inside: list[str] = []
        for folder, dirs, files in os.walk(os.path.join(cwd, item.path)):
            relative = os.path.relpath(folder, cwd)
            links = [name for name in dirs if os.path.islink(os.path.join(folder, name))]
            inside += [os.path.join(relative, name).replace(os.sep, "/") for name in files + links]
        if inside and all(path in deleted for path in inside):
            item.disk, item.conflict, item.change = FOLDER, False, "modify"


def _is_folder(path: str) -> bool:
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


def plan_restore(
    store: WorkspaceStore, current: str | None, target: str, paths: Sequence[str] = ()
) -> list[Planned]:
    """What restoring the workspace from the state ``current`` (None: none) to ``target`` does."""
    moves = [(change.path, change.before, change.after) for change in store.diff(current, target, paths)]
    return plan(store.cwd, moves, read_written(store))


def apply(
    store: WorkspaceStore, planned: Sequence[Planned], force: bool, record_undo: bool = True
) -> dict[str, Any]:
    """Write the planned files (conflicts only when forced); ``{restored, conflicts, undoId?}``."""
    with store.locked():
        written = read_written(store)
        chosen: list[tuple[Planned, bytes | None]] = []
        known_before: dict[str, FileState] = {}  # the disk states that were no conflict
        conflicts: list[str] = []
        undo: list[dict[str, Any]] = []
        for item in planned:
            try:
                disk, data = disk_file(store.cwd, item.path)
            except OSError:
                disk, data = OTHER, None
            if item.disk == FOLDER and disk == OTHER and _is_folder(os.path.join(store.cwd, item.path)):
                disk = FOLDER  # its files are among this restore's deletions, judged on their own
            moved = disk != item.disk  # changed since the plan: judge it again
            conflict = item.conflict or moved
            if disk == OTHER or (conflict and not force):
                conflicts.append(item.path)
                continue
            if disk == item.target:
                continue
            if data is not None:
                store.write_blob(data)  # what is overwritten is saved first
            before = None if disk == FOLDER else disk  # a folder's files have their own records
            undo.append({"path": item.path, "before": _wire(before), "after": _wire(item.target)})
            chosen.append((item, data))
            if not conflict and disk != FOLDER:
                known_before[item.path] = disk
        undo_id = uuid.uuid4().hex[:16]
        if record_undo and chosen:
            store.write_json(
                f"undo/{undo_id}.json", {"cwd": store.cwd, "created": time.time(), "files": undo}
            )
        blobs = store.read_blobs([item.target[1] for item, _ in chosen if item.target is not None])
        restored: list[dict[str, str]] = []
        deletions = [item for item, _data in chosen if item.target is None]
        writes = [item for item, _data in chosen if item.target is not None]
        if chosen:  # a kill from here on: each file is before or after, and both count as known
            _record_intent(store, written, [item for item, _data in chosen], known_before)
        try:
            outcomes = [_try_write(store.cwd, item, blobs) for item in deletions]  # first: a file may
            with ThreadPoolExecutor(WRITERS) as pool:  # take the place of a deleted folder
                outcomes += pool.map(lambda item: _try_write(store.cwd, item, blobs), writes)
            for item, done in zip(deletions + writes, outcomes, strict=True):
                if not done:
                    conflicts.append(item.path)
                    continue
                written[item.path] = (item.target,)
                restored.append({"path": item.path, "change": item.change})
            restored.sort(key=lambda file: file["path"])
            _write_written(store, written)
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(store.folder / RESTORING)
    result: dict[str, Any] = {"restored": restored, "conflicts": sorted(conflicts)}
    if record_undo:
        result["undoId"] = undo_id if chosen else None
    return result


def _record_intent(
    store: WorkspaceStore, written: Written, items: Sequence[Planned], known_before: dict[str, FileState]
) -> None:
    """Before the first file is written: the journal (the paths whose temp files a kill would leave,
    removed by the next locked operation) and ``written.json`` naming both the old state (when it
    was no conflict) and the target as the server's own, so a restore killed halfway leaves no false
    conflicts whichever state the leaf is in next (``pi/navigate`` moves it before restoring). A
    forced conflict's old state stays unknown: the hand edit is a conflict again (and is in the undo
    record)."""
    store.write_json(RESTORING, {"paths": [item.path for item in items]})
    intended = dict(written)
    for item in items:
        old = (known_before[item.path],) if item.path in known_before else ()
        intended[item.path] = (*old, item.target)
    _write_written(store, intended)


def undo_moves(store: WorkspaceStore, undo_id: str) -> list[tuple[str, FileState, FileState]]:
    """The (path, expected, wanted) moves that undo the restore ``undo_id``; KeyError if unknown."""
    if not undo_id or not all(c in "0123456789abcdef" for c in undo_id):
        raise KeyError(undo_id)
    record = store.read_json(f"undo/{undo_id}.json")
    if not isinstance(record, dict):
        raise KeyError(undo_id)
    return [(str(f["path"]), _state(f["after"]), _state(f["before"])) for f in record.get("files", [])]


def _try_write(cwd: str, item: Planned, blobs: dict[str, bytes]) -> bool:
    """Write one planned file; False when the disk refused (reported as a conflict, left as is)."""
    try:
        _write(cwd, item.path, item.target, blobs)
    except OSError:
        return False
    return True


def _wire(state: FileState) -> list[str] | None:
    return list(state) if state is not None else None


def _folders_inside(cwd: str, path: str) -> bool:
    """Whether the folders on the way to ``path`` are real folders of the workspace (or missing),
    not links: a file is never written or deleted through a link."""
    folder = cwd
    for part in Path(path).parts[:-1]:
        folder = os.path.join(folder, part)
        try:
            info = os.lstat(folder)
        except FileNotFoundError:
            return True  # made by the write, as a real folder
        if stat.S_ISLNK(info.st_mode):
            return False
        if not stat.S_ISDIR(info.st_mode):
            return True  # a file in the way: the write fails and the path is reported as a conflict
    return True


def _write(cwd: str, path: str, target: FileState, blobs: dict[str, bytes]) -> None:
    full = Path(cwd, path)
    if not _folders_inside(cwd, path):
        raise OSError(f"{path}: a link is on the way")
    if target is None:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(full)
        _remove_empty_parents(Path(cwd), full.parent)
        return
    mode, oid = target
    data = blobs.get(oid)
    if data is None:
        raise StoreError(str(full), f"object {oid} is missing from the store")
    full.parent.mkdir(parents=True, exist_ok=True)
    if mode == SYMLINK:
        temp = full.with_name(f".{full.name}.{uuid.uuid4().hex[:8]}.tmp")
        os.symlink(os.fsdecode(data), temp)
        try:
            os.replace(temp, full)
        except OSError:
            with contextlib.suppress(OSError):
                os.unlink(temp)
            raise
        return
    bits = 0o755 if mode == EXECUTABLE else 0o644
    with contextlib.suppress(OSError):
        info = os.lstat(full)
        if stat.S_ISREG(info.st_mode):  # keep the file's own permissions, with git's exec bit
            kept = stat.S_IMODE(info.st_mode)
            bits = kept | ((kept & 0o444) >> 2) if mode == EXECUTABLE else kept & ~0o111
    replace_atomically(full, data, mode=bits)


def _remove_empty_parents(root: Path, folder: Path) -> None:
    """Folders a deletion left empty go too (up to the workspace), as the snapshot had none."""
    while folder != root and root in folder.parents:
        try:
            folder.rmdir()
        except OSError:
            return
        folder = folder.parent
