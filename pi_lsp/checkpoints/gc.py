"""``pi-lsp checkpoints gc``: prune the snapshots no session references, and report the sizes.

A snapshot is kept while a session file holds a checkpoint entry naming it; so are the files an
undo record saved. The session files looked at are those under the given folders (pi's sessions
folder by default) and every file that ever linked a checkpoint into the store (``sessions.txt``,
written at each link), so sessions kept in a custom ``sessionDir`` are never missed. What is kept
is named by one tree object (``refs/pi-lsp/keep``); ``git gc`` then packs it and drops the rest
that is older than the grace period (a snapshot being linked right now is never lost).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from pi_lsp.checkpoints.entries import snapshots_in_line
from pi_lsp.checkpoints.store import StoreError, WorkspaceStore, checkpoints_root
from pi_lsp.full_writes import write_all

KEEP_REF = "refs/pi-lsp/keep"
SESSIONS_LIST = "sessions.txt"
DEFAULT_GRACE = "1.hour.ago"
PRUNED = "pruned"
"""The file whose time says when the store was last pruned automatically."""
PRUNE_EVERY = 24 * 3600.0


@dataclass
class StoreReport:
    workspace: str
    folder: str
    snapshots: int  # referenced by sessions (kept)
    undo_records: int
    bytes_before: int
    bytes_after: int

    def to_wire(self) -> dict[str, object]:
        return asdict(self)


def note_session(store: WorkspaceStore, session_file: str) -> None:
    """Remember that ``session_file`` links snapshots of this store (one appended line)."""
    line = os.fsencode(os.path.abspath(session_file)) + b"\n"
    path = store.folder / SESSIONS_LIST
    try:
        if path.exists() and line in path.read_bytes().splitlines(keepends=True):
            return
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            write_all(fd, line)
        finally:
            os.close(fd)
    except OSError as error:
        raise StoreError(str(path), error.strerror or str(error)) from error


def referenced_snapshots(files: Iterable[Path]) -> set[str]:
    """Every snapshot a checkpoint entry of these session files names."""
    found: set[str] = set()
    for path in files:
        try:
            with open(path, "rb") as handle:
                for line in handle:
                    snapshot = snapshots_in_line(line)
                    if snapshot is not None:
                        found.add(snapshot)
        except OSError:
            continue  # gone or unreadable: it references nothing we can see
    return found


def _session_files(folders: Sequence[Path], stores: Sequence[WorkspaceStore]) -> set[Path]:
    files = {path for folder in folders if folder.is_dir() for path in folder.rglob("*.jsonl")}
    for store in stores:
        try:
            listed = (store.folder / SESSIONS_LIST).read_bytes().splitlines()
        except OSError:
            continue
        files.update(Path(os.fsdecode(line)) for line in listed if line)
    return files


def stores_under(base: Path | None = None) -> list[WorkspaceStore]:
    root = checkpoints_root(base)
    stores = []
    for folder in sorted(root.iterdir()) if root.is_dir() else []:
        try:
            workspace = (folder / "workspace").read_text(encoding="utf-8", errors="surrogateescape").strip()
        except OSError:
            continue
        store = WorkspaceStore(workspace, base)
        if store.folder == folder:
            stores.append(store)
    return stores


def size_of(folder: Path) -> int:
    total = 0
    for parent, _dirs, files in os.walk(folder):
        for name in files:
            try:
                total += os.lstat(os.path.join(parent, name)).st_blocks * 512
            except OSError:
                continue
    return total


def collect(
    base: Path | None, session_folders: Sequence[Path], *, dry_run: bool = False, grace: str = DEFAULT_GRACE
) -> list[StoreReport]:
    """Prune every store under ``base`` (the agent dir); one report per store."""
    stores = stores_under(base)
    referenced = referenced_snapshots(_session_files(session_folders, stores))
    return [prune_store(store, referenced, dry_run=dry_run, grace=grace) for store in stores]


def prune_store(
    store: WorkspaceStore, referenced: set[str], *, dry_run: bool = False, grace: str = DEFAULT_GRACE
) -> StoreReport:
    """Keep what ``referenced`` names and the undo records' files, drop the rest older than
    ``grace``. (git counts the index, ours by ``GIT_INDEX_FILE``, as a root too: the files the next
    snapshot reuses unchanged stay.)"""
    with store.locked():
        before = size_of(store.folder)
        kept = _existing(store, referenced)
        undo = _undo_blobs(store)
        if not dry_run:
            _keep(store, kept, _existing(store, undo))
            store.git(["gc", "--quiet", f"--prune={grace}"])
        after = size_of(store.folder)
    return StoreReport(
        store.cwd, str(store.folder), len(kept), len(list(store.folder.glob("undo/*.json"))), before, after
    )


def prune_if_due(
    store: WorkspaceStore,
    session_folders: Sequence[Path],
    live: Iterable[str],
    *,
    every: float = PRUNE_EVERY,
    grace: str = DEFAULT_GRACE,
) -> StoreReport | None:
    """The automatic prune: at most once per ``every`` seconds per store (``pruned``'s time, shared
    by every server on the workspace; a new store's period starts at its first look), keeping what
    the session files reference plus ``live`` (what this server linked, whether or not its session
    file is written yet)."""
    stamp = store.folder / PRUNED
    try:
        if time.time() - stamp.stat().st_mtime < every:
            return None
    except FileNotFoundError:
        try:  # a new store: its period starts now (nothing to prune yet)
            store.folder.mkdir(parents=True, exist_ok=True)
            stamp.touch()
        except OSError as error:
            raise StoreError(str(stamp), error.strerror or str(error)) from error
        return None
    except OSError as error:
        raise StoreError(str(stamp), error.strerror or str(error)) from error
    try:
        stamp.touch()  # first: two servers do not both start one
    except OSError as error:
        raise StoreError(str(stamp), error.strerror or str(error)) from error
    referenced = referenced_snapshots(_session_files(session_folders, [store])) | set(live)
    return prune_store(store, referenced, grace=grace)


def _existing(store: WorkspaceStore, oids: Iterable[str]) -> list[str]:
    wanted = sorted(set(oids))
    if not wanted:
        return []
    out = store.git(["cat-file", "--batch-check"], stdin="".join(f"{oid}\n" for oid in wanted).encode())
    return [line.split()[0].decode() for line in out.splitlines() if not line.endswith(b" missing")]


def _undo_blobs(store: WorkspaceStore) -> set[str]:
    blobs: set[str] = set()
    for path in store.folder.glob("undo/*.json"):
        try:
            record = json.loads(path.read_bytes())
        except (OSError, ValueError):
            continue
        for file in record.get("files", []) if isinstance(record, dict) else []:
            for side in ("before", "after"):
                state = file.get(side) if isinstance(file, dict) else None
                if isinstance(state, list) and len(state) == 2:
                    blobs.add(str(state[1]))
    return blobs


def _keep(store: WorkspaceStore, trees: Sequence[str], blobs: Sequence[str]) -> None:
    """Point ``refs/pi-lsp/keep`` at one tree naming everything kept (or drop it: nothing is)."""
    lines = [f"040000 tree {oid}\tt{oid}\n" for oid in trees] + [
        f"100644 blob {oid}\tb{oid}\n" for oid in blobs
    ]
    if not lines:
        store.git(["update-ref", "-d", KEEP_REF])
        return
    keep = store.git(["mktree", "--missing"], stdin="".join(lines).encode()).decode().strip()
    store.git(["update-ref", KEEP_REF, keep])
