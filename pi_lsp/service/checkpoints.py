"""Checkpoints of open sessions: snapshots at a run's checkpoints, restores, undo, changes.

The snapshot points are the run's (``service/runs.py`` calls :meth:`CheckpointService.capture`
before the prompt's user message, after every tool batch that may change files, after
``pi/bash``); each snapshot that differs from the branch's last one is linked into the tree by a
``pi-lsp/checkpoint`` custom entry and announced as ``pi/event`` ``checkpoint``. The git work runs
in worker threads outside the session lock (the store has its own lock); reading the tree and
appending run under the session lock. A failing checkpoint never fails a run: it is logged.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from pi_lsp.checkpoints import restore as restores
from pi_lsp.checkpoints.entries import checkpoint_entry, state_on_path
from pi_lsp.checkpoints.gc import note_session, prune_if_due
from pi_lsp.checkpoints.snapshot import Limits, Refused, capture
from pi_lsp.checkpoints.store import Change, StoreError, WorkspaceStore
from pi_lsp.secrets import redact
from pi_lsp.service import entries as ops
from pi_lsp.service.errors import EntryNotFound, FileError, InvalidParams, SessionBusy
from pi_lsp.service.host import SessionHost
from pi_lsp.service.registry import Client, OpenSession

log = logging.getLogger(__name__)
T = TypeVar("T")

PRUNE_CHECK = 600.0
"""Seconds between two looks (per workspace) at whether the store's daily automatic prune is due."""
REFUSAL_MEMORY = 600.0
"""Seconds a workspace refused for its size is not listed again (listing it is the slow part)."""
READ_ONLY_TOOLS = frozenset({"read", "grep", "find", "ls"})
"""Tools known not to change files: a batch of only these takes no snapshot."""
EmitFn = Callable[[dict[str, Any]], None]
BINARY = "Binary files differ\n"


def changes_files(tool_names: Sequence[str]) -> bool:
    """Whether a tool batch may have changed files (any tool not known to be read-only)."""
    return any(name not in READ_ONLY_TOOLS for name in tool_names)


class CheckpointService:
    """``pi/previewRestore``, ``pi/restoreFiles``, ``pi/undoRestore``, ``pi/getChanges``, restores
    on ``pi/navigate``/``pi/setLeaf``, and the snapshots of runs."""

    def __init__(self, host: SessionHost, root: Path | None = None) -> None:
        """``root``: the agent dir holding the stores (default: pi's, resolved at each use)."""
        self.host = host
        self.root = root
        self._stores: dict[tuple[str, str], WorkspaceStore] = {}
        self._told: set[str] = set()  # sessions told checkpoint_skipped
        self._refused: dict[str, tuple[float, Limits, str]] = {}  # workspace → (until, limits, why)
        self._linked: dict[str, set[str]] = {}  # workspace → snapshots this server linked
        self._prune_after: dict[str, float] = {}  # workspace → when to look again
        self._pruning: asyncio.Future[None] | None = None

    def store(self, cwd: str) -> WorkspaceStore:
        from pi_lsp.agent_dir import agent_dir

        root = self.root or agent_dir()
        key = (str(root), os.path.realpath(cwd))
        store = self._stores.get(key)
        if store is None:
            store = self._stores[key] = WorkspaceStore(cwd, root)
        return store

    # ------------------------------------------------------------------ snapshots

    async def capture(
        self, client: Client, session: OpenSession, emit: EmitFn, tool_names: Sequence[str] | None = None
    ) -> str | None:
        """Snapshot the session's workspace; when it differs from the branch's last snapshot, link it
        with a checkpoint entry at the leaf. The entry's id, or None (nothing changed, disabled,
        refused, or the store failed: a run goes on without the checkpoint). ``tool_names``: after a
        tool batch, the tools that ran (a batch of read-only tools takes no snapshot)."""
        settings = client.settings.checkpoints
        if not settings.enabled or (tool_names is not None and not changes_files(tool_names)):
            return None
        store = self.store(session.manager.cwd)
        refused = self._refused.get(store.cwd)
        if refused is not None and refused[1] == settings.limits and time.monotonic() < refused[0]:
            self._tell(session, emit, refused[2])  # not walked again at every batch
            return None
        skip = self._own_folders(session)
        try:
            tree = await self.host.in_thread(lambda: capture(store, settings.limits, skip))
        except Refused as error:
            self._refused[store.cwd] = (time.monotonic() + REFUSAL_MEMORY, settings.limits, str(error))
            self._tell(session, emit, str(error))
            return None
        except (StoreError, OSError) as error:
            log.warning("checkpoint of %s skipped: %s", session.manager.cwd, redact(str(error)))
            return None

        def link() -> tuple[str, list[Change]] | None:
            manager = session.manager
            previous = state_on_path(manager.branch_records())
            if previous == tree:
                return None
            changes = store.diff(previous, tree)
            entry_id = manager.append_entry(checkpoint_entry(tree, changes))
            if manager.session_file is not None:
                note_session(store, manager.session_file)  # gc keeps what this file names
            return entry_id, changes

        try:
            linked = await self.host.run(session, link, writes=True)
        except StoreError as error:
            log.warning("checkpoint of %s not linked: %s", session.manager.cwd, redact(str(error)))
            return None
        if linked is None:
            return None
        self._linked.setdefault(store.cwd, set()).add(tree)
        self._maybe_prune(store)
        entry_id, changes = linked
        self.host.emit(session, ops.Change("append", [entry_id]))
        files = checkpoint_entry(tree, changes)["data"]["files"]
        emit({"type": "checkpoint", "entryId": entry_id, "files": files})
        return entry_id

    def _maybe_prune(self, store: WorkspaceStore) -> None:
        """Start the automatic prune of the store in the background when it is due (once a day, at
        the first snapshot of a server's life and then every :data:`PRUNE_CHECK` seconds at most).
        Kept: what any session file references, and every snapshot this server linked (a new
        session's file is written only with its first reply)."""
        now = time.monotonic()
        if now < self._prune_after.get(store.cwd, 0.0):
            return
        self._prune_after[store.cwd] = now + PRUNE_CHECK
        from pi_lsp.agent_dir import sessions_root

        folders = [sessions_root(self.root)]
        live = set(self._linked.get(store.cwd, ()))

        async def prune() -> None:
            try:
                report = await self.host.in_thread(lambda: prune_if_due(store, folders, live))
            except (StoreError, OSError) as error:
                log.warning("automatic prune of %s failed: %s", store.cwd, redact(str(error)))
                return
            if report is not None:
                log.info("pruned the checkpoints of %s: %d → %d bytes", store.cwd, report.bytes_before,
                         report.bytes_after)  # fmt: skip

        self._pruning = asyncio.ensure_future(prune())  # kept: a task is weakly referenced

    def _own_folders(self, session: OpenSession) -> list[str]:
        """Folders a snapshot never holds: pi's agent dir (settings, this store) and the session's
        folder, wherever they are (inside the workspace, every entry would change a file)."""
        from pi_lsp.agent_dir import agent_dir

        manager = session.manager
        folders = [str(self.root or agent_dir())]
        if manager.session_dir:
            folders.append(manager.session_dir)
        if manager.session_file is not None:
            folders.append(os.path.dirname(manager.session_file))
        return folders

    def _tell(self, session: OpenSession, emit: EmitFn, reason: str) -> None:
        """``checkpoint_skipped``, once per session."""
        if session.id not in self._told:
            self._told.add(session.id)
            emit({"type": "checkpoint_skipped", "reason": reason})

    # ------------------------------------------------------------------ states of entries

    async def _states(self, session: OpenSession, *entry_ids: str | None) -> list[str | None]:
        """The state (snapshot) of each entry; None: no checkpoint on its path."""

        def read() -> list[str | None]:
            manager = session.manager
            for entry_id in entry_ids:
                if entry_id is not None and manager.get_record(entry_id) is None:
                    raise EntryNotFound(f"entry {entry_id} is not in the session", {"id": entry_id})
            return [
                state_on_path(manager.branch_records(entry_id)) if entry_id else None
                for entry_id in entry_ids
            ]

        return await self.host.run(session, read, writes=False)

    # ------------------------------------------------------------------ restores

    async def preview_restore(
        self, client: Client, session_id: str | None, target_id: str, paths: list[str] | None, diff: bool
    ) -> dict[str, Any]:
        session = self.host.registry.resolve(client, session_id)
        current, target = await self._states(session, session.manager.leaf_id, target_id)
        store = self.store(session.manager.cwd)
        if target is None:
            return {"targetId": target_id, "files": []}
        planned = await self._in_thread(lambda: restores.plan_restore(store, current, target, paths or ()))
        files = [item.to_wire() for item in planned]
        if diff:
            texts = await self._in_thread(lambda: _planned_diffs(store, planned))
            for file, text in zip(files, texts, strict=True):
                file["diff"] = text
        return {"targetId": target_id, "files": files}

    async def restore_files(
        self, client: Client, session_id: str | None, target_id: str, paths: list[str] | None, force: bool
    ) -> dict[str, Any]:
        session = self.host.registry.resolve(client, session_id)
        return await self._restore(session, session.manager.leaf_id, target_id, paths, force)

    async def _restore(
        self,
        session: OpenSession,
        from_id: str | None,
        target_id: str | None,
        paths: list[str] | None,
        force: bool,
    ) -> dict[str, Any]:
        _not_running(session)
        current, target = await self._states(session, from_id, target_id)
        if target is None:
            return {"restored": [], "conflicts": []}
        store = self.store(session.manager.cwd)
        with session.exclusive("restore"):

            def work() -> dict[str, Any]:
                planned = restores.plan_restore(store, current, target, paths or ())
                return restores.apply(store, planned, force)

            return await self._in_thread(work)

    async def undo_restore(self, client: Client, session_id: str | None, undo_id: str) -> dict[str, Any]:
        session = self.host.registry.resolve(client, session_id)
        _not_running(session)
        store = self.store(session.manager.cwd)
        with session.exclusive("restore"):

            def work() -> dict[str, Any]:
                try:
                    moves = restores.undo_moves(store, undo_id)
                except KeyError:
                    raise InvalidParams(
                        f"undoId {undo_id!r} names no restore of this session's workspace",
                        {"field": "undoId"},
                    ) from None
                planned = restores.plan(store.cwd, moves, restores.read_written(store))
                result = restores.apply(store, planned, force=False, record_undo=False)
                return {"restored": result["restored"], "conflicts": result["conflicts"]}

            return await self._in_thread(work)

    async def moving(
        self,
        client: Client,
        session_id: str | None,
        move: Callable[[], Awaitable[dict[str, Any]]],
        force: bool,
    ) -> dict[str, Any]:
        """``pi/navigate`` / ``pi/setLeaf`` with ``restoreFiles``: move the leaf as before, then restore
        the workspace from the old leaf's state to the new leaf's (``restored`` in the result)."""
        session = self.host.registry.resolve(client, session_id)
        _not_running(session)
        old_leaf = session.manager.leaf_id
        result = await move()
        result["restored"] = await self._restore(session, old_leaf, session.manager.leaf_id, None, force)
        return result

    # ------------------------------------------------------------------ changes

    async def get_changes(
        self,
        client: Client,
        session_id: str | None,
        from_id: str | None,
        to_id: str | None,
        paths: list[str] | None,
        diff: bool,
    ) -> dict[str, Any]:
        session = self.host.registry.resolve(client, session_id)
        if from_id is None or to_id is None:
            last_from, last_to = await self.host.run(session, lambda: _last_run(session), writes=False)
            from_id = from_id if from_id is not None else last_from
            to_id = to_id if to_id is not None else last_to
        before, after = await self._states(session, from_id, to_id)
        store = self.store(session.manager.cwd)
        changes = await self._in_thread(
            lambda: store.diff(before, after, paths or ()) if after or before else []
        )
        files: list[dict[str, Any]] = [{"path": change.path, "change": change.kind} for change in changes]
        if diff:
            texts = await self._in_thread(lambda: _change_diffs(store, changes))
            for file, text in zip(files, texts, strict=True):
                file["diff"] = text
        return {"fromId": from_id, "toId": to_id, "files": files}

    async def _in_thread(self, fn: Callable[[], T]) -> T:
        try:
            return await self.host.in_thread(fn)
        except StoreError as error:
            raise FileError(str(error), error.path, "checkpoints") from error


def _not_running(session: OpenSession) -> None:
    if session.busy is not None:
        raise SessionBusy(
            f"session {session.id} is busy: a {session.busy} is running; restore files when it has ended",
            {"busy": session.busy},
        )


def _last_run(session: OpenSession) -> tuple[str | None, str | None]:
    """The last run's first entry (its user message) and last entry (the leaf), on the branch."""
    path = session.manager.branch_records()
    leaf = path[-1].id if path else None
    for record in reversed(path):
        if record.type == "message" and record.role == "user":
            return record.id, leaf
    return (path[0].id if path else None), leaf


def _diff_text(path: str, before: bytes | None, after: bytes | None) -> str:
    try:
        old = before.decode("utf-8") if before is not None else None
        new = after.decode("utf-8") if after is not None else ""
    except UnicodeDecodeError:
        return BINARY
    if (old is not None and "\0" in old) or "\0" in new:
        return BINARY
    from pi_lsp.agent.tools.diff import unified_diff  # the tools' diff, loaded when a diff is asked

    return unified_diff(path, old, new)


def _change_diffs(store: WorkspaceStore, changes: Sequence[Change]) -> list[str]:
    oids = [state[1] for change in changes for state in (change.before, change.after) if state is not None]
    blobs = store.read_blobs(oids)
    return [
        _diff_text(
            change.path,
            blobs[change.before[1]] if change.before else None,
            blobs[change.after[1]] if change.after else None,
        )
        for change in changes
    ]


def _planned_diffs(store: WorkspaceStore, planned: Sequence[restores.Planned]) -> list[str]:
    blobs = store.read_blobs([item.target[1] for item in planned if item.target is not None])
    texts = []
    for item in planned:
        try:
            _state, current = restores.disk_file(store.cwd, item.path)
        except OSError:
            current = None
        texts.append(_diff_text(item.path, current, blobs[item.target[1]] if item.target else None))
    return texts
