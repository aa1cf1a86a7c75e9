"""The session service: opening, creating, listing, forking and closing sessions; appends and contexts.

Sessions are held in the :class:`~pi_lsp.service.host.SessionHost` (registry, worker threads, the
session lock and its cancellation rule); this service decides what each Sessions method does.
The ContextUsage of ``pi/buildContext`` comes from a function handed in by the composition root
(the compaction service's), so this module does not know about compaction.
"""

from __future__ import annotations

import asyncio
import copy
import os
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from pi_lsp.service import entries as ops
from pi_lsp.service import wire
from pi_lsp.service.errors import InvalidParams, SessionNotFound
from pi_lsp.service.host import SessionHost
from pi_lsp.service.registry import Client, OpenSession, path_key
from pi_lsp.service.settings import Settings
from pi_lsp.session import SessionManager
from pi_lsp.session.errors import EntryNotFoundError
from pi_lsp.session.list_cache import SessionListCache
from pi_lsp.session.list_search import prepare_search, search_sessions
from pi_lsp.session.listing import SessionInfo, find_most_recent_session
from pi_lsp.session.view import ContextView

# The protocol's ContextUsage of a built context (runs under the session's lock).
ContextUsage = Callable[[SessionManager, ContextView, Settings], dict[str, Any]]
# Called before ``pi/closeSession`` releases an open session (the run service ends its run).
BeforeClose = Callable[[Client, OpenSession], Awaitable[None]]


class SessionService:
    """The Sessions, Entries and Context methods that need more than one entries operation."""

    def __init__(
        self,
        host: SessionHost,
        context_usage: ContextUsage | None = None,
        before_close: BeforeClose | None = None,
        listing: SessionListCache | None = None,
    ) -> None:
        self.host = host
        # pi/listSessions: re-reads only the session files that changed since the last listing
        self.listing = listing if listing is not None else SessionListCache()
        self.registry = host.registry
        self.context_usage = context_usage
        self.before_close = before_close  # ends a run on the session first (the run service's)
        self._open_locks: dict[str, asyncio.Lock] = {}
        self._background: set[asyncio.Future[None]] = set()  # search preparation after a listing

    async def append_entry(self, client: Client, session_id: str | None, entry: dict[str, Any]) -> Any:
        """``pi/appendEntry``, then the host's append listeners (auto-compaction checks)."""
        session = self.registry.resolve(client, session_id)
        result, change = await self.host.run(
            session, lambda: ops.append_entry(session.manager, entry), writes=True
        )
        if change is not None:
            self.host.emit(session, change)
        self.host.appended(client, session, result)
        return result

    # ------------------------------------------------------------------ registering sessions

    async def _open_path(self, client: Client, path: str, **options: Any) -> dict[str, Any]:
        """Open (or re-use) the session stored at ``path``; shared by open/continue/fork."""
        key = path_key(path)
        lock = self._open_locks.setdefault(key, asyncio.Lock())
        async with lock:
            existing = self.registry.find_path(path)
            if existing is not None:
                self.host.attach(client, existing)
                return wire.session_state(existing.manager)
            before = _inode(path)
            manager = await self.host.in_thread(lambda: SessionManager.open(path, **options))
            session = self.host.register(client, manager)
            self._open_locks.pop(key, None)
        if before is not None and _inode(path) != before:
            self.host.emit(session, ops.Change("migrate"))
        return wire.session_state(manager)

    # ------------------------------------------------------------------ the Sessions methods

    async def new_session(
        self,
        client: Client,
        *,
        cwd: str | None,
        session_dir: str | None,
        parent_session: str | None,
        session_id: str | None,
        persist: bool,
    ) -> dict[str, Any]:
        cwd = client.resolve_path(cwd or client.default_cwd)
        if session_id is not None and self.registry.get(session_id) is not None:
            raise InvalidParams(f"a session with id {session_id} is already open", {"session": session_id})

        def create() -> SessionManager:
            if persist:
                directory = client.settings.resolve_session_dir(cwd, session_dir)
                manager = SessionManager.create(cwd, directory)
            else:
                manager = SessionManager.in_memory(cwd)
            if session_id is not None or parent_session is not None:
                manager.new_session(id=session_id, parent_session=parent_session)
            return manager

        manager = await self.host.in_thread(create)
        self.host.register(client, manager)
        return wire.session_state(manager)

    async def open_session(self, client: Client, path: str) -> dict[str, Any]:
        path = client.resolve_path(path)
        return await self._open_path(client, path)

    async def continue_recent(self, client: Client, cwd: str | None) -> dict[str, Any]:
        cwd = client.resolve_path(cwd or client.default_cwd)

        def find() -> tuple[Path, Path | None]:
            directory = client.settings.resolve_session_dir(cwd)
            return directory, find_most_recent_session(directory)

        directory, recent = await self.host.in_thread(find)
        if recent is None:
            return await self.new_session(
                client,
                cwd=cwd,
                session_dir=str(directory),
                parent_session=None,
                session_id=None,
                persist=True,
            )
        return await self._open_path(client, str(recent), session_dir=directory, cwd_override=cwd)

    async def list_sessions(
        self, client: Client, *, cwd: str | None, all_projects: bool, query: str | None, limit: int | None
    ) -> dict[str, Any]:
        cwd = client.resolve_path(cwd or client.default_cwd)

        listed: list[SessionInfo] = []

        def scan() -> list[dict[str, Any]]:
            if all_projects:
                listed[:] = self.listing.list_all()
            else:
                listed[:] = self.listing.list_folder(client.settings.resolve_session_dir(cwd))
            infos = search_sessions(listed, query)
            if limit is not None:
                infos = infos[:limit]
            return [info.to_wire() for info in infos]

        sessions = await self.host.in_thread(scan)
        if not query:  # a picker opened: a search as you type is likely to follow
            task = asyncio.ensure_future(self.host.in_thread(lambda: prepare_search(listed)))
            self._background.add(task)
            task.add_done_callback(self._forget)
        return {"sessions": sessions}

    def _forget(self, task: asyncio.Future[None]) -> None:
        self._background.discard(task)
        if not task.cancelled():
            task.exception()  # retrieved: a preparation cut short by shutdown is not an error

    async def fork_session(self, client: Client, source_path: str, cwd: str | None) -> dict[str, Any]:
        source = client.resolve_path(source_path)
        target_cwd = client.resolve_path(cwd or client.default_cwd)

        def fork() -> SessionManager:
            directory = client.settings.resolve_session_dir(target_cwd)
            return SessionManager.fork_from(source, target_cwd, directory)

        manager = await self.host.in_thread(fork)
        self.host.register(client, manager)
        return wire.session_state(manager)

    async def branch_to_new_session(
        self, client: Client, session_id: str | None, entry_id: str
    ) -> dict[str, Any]:
        session = self.registry.resolve(client, session_id)
        manager = await self.host.run(session, lambda: _branched_copy(session.manager, entry_id), writes=True)
        self.host.register(client, manager)
        return wire.session_state(manager)

    async def get_state(self, client: Client, session_id: str | None) -> dict[str, Any]:
        session = self.registry.resolve(client, session_id)
        return await self.host.run(session, lambda: wire.session_state(session.manager), writes=False)

    async def close_session(self, client: Client, session_id: str | None) -> dict[str, Any]:
        target = session_id if session_id is not None else client.active
        if target is None:
            raise SessionNotFound("there is no active session to close")
        session = self.registry.get(target)
        if session is None and target not in client.open:
            raise SessionNotFound(f"session {target} is not open", {"session": target})
        if session is not None and self.before_close is not None:
            await self.before_close(client, session)
        if session is not None:
            async with session.lock:  # let work already running on it finish first
                self.host.release(client, target)
        else:
            self.host.release(client, target)
        return {}

    # ------------------------------------------------------------------ context

    async def build_context(self, client: Client, session_id: str | None, leaf_id: Any) -> dict[str, Any]:
        session = self.registry.resolve(client, session_id)
        usage = self.context_usage
        settings = client.settings

        def build() -> dict[str, Any]:
            result: dict[str, Any] = ops.build_context(session.manager, leaf_id)[0]
            if usage is not None:  # the ContextUsage of this context (from the compaction service)
                result["usage"] = usage(session.manager, session.manager.context_view(leaf_id), settings)
            return result

        return await self.host.run(session, build, writes=False)


def _inode(path: str) -> int | None:
    try:
        return os.stat(path).st_ino
    except OSError:
        return None


def _branched_copy(source: SessionManager, entry_id: str) -> SessionManager:
    """pi's ``createBranchedSession`` on a copy, so the source session stays open unchanged."""
    if source.get_record(entry_id) is None:
        raise EntryNotFoundError(entry_id)
    directory = Path(source.session_dir) if source.session_dir else None
    clone = SessionManager(source.cwd, directory, persist=source.persist, leaf_store=source.leaf_store)
    clone.header = dict(source.header)
    clone.session_file = source.session_file
    for record in source.index.records:
        clone.index.add(copy.copy(record))
    clone.leaf_id = source.leaf_id
    clone.create_branched_session(entry_id)
    return clone
