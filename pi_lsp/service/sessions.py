"""The session service: opening, creating and closing sessions, and running work on them.

Every operation on one session runs under that session's lock in a worker thread, so requests on
one session are serialised while big file reads never stall other sessions or the connection.
Cancellation is honoured until a write starts: a request still waiting for the lock is cancelled
with nothing written; once a write has started it completes and its real result is reported.
"""

from __future__ import annotations

import asyncio
import copy
import logging
import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

from pi_lsp.agent.documents import EditorDocuments
from pi_lsp.service import entries as ops
from pi_lsp.service import wire
from pi_lsp.service.errors import InvalidParams, SessionNotFound
from pi_lsp.service.registry import Client, OpenSession, Registry, path_key
from pi_lsp.service.settings import Settings
from pi_lsp.service.watch import FileWatcher
from pi_lsp.session import SessionManager
from pi_lsp.session.view import ContextView

log = logging.getLogger(__name__)
T = TypeVar("T")

# Filled in by the compaction wiring: returns the protocol's ContextUsage for a built context.
ContextUsageHook = Callable[[SessionManager, ContextView, Settings], dict[str, Any]]
# Called (on the event loop) after each pi/appendEntry with the client, the session and the result.
AppendListener = Callable[[Client, OpenSession, dict[str, Any]], None]


class PiService:
    """Everything the server's handlers call; one instance per server process."""

    def __init__(self, *, workers: int = 4, watch_interval: float = 0.3) -> None:
        self.registry = Registry()
        self.executor = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="pi-lsp-session")
        self.watcher = FileWatcher(self._external_change, watch_interval)
        self.context_usage: ContextUsageHook | None = None
        self.append_listeners: list[AppendListener] = []
        self._open_locks: dict[str, asyncio.Lock] = {}
        from pi_lsp.service.compaction import CompactionService

        self.compaction = CompactionService(self)  # installs context_usage and an append listener
        from pi_lsp.service.prompt import PromptService

        self.prompt = PromptService(self)  # system prompt: watching, diagnostics, hover
        self.documents = EditorDocuments()  # editors' open buffers, for the agent's tools
        from pi_lsp.service.runs import RunService

        self.runs = RunService(self, self.compaction, self._system_prompt_text)  # agent runs (pi/prompt)

    async def _system_prompt_text(self, client: Client, cwd: str, tools: list[str]) -> str:
        result = await self.prompt.get_system_prompt(
            client, cwd, tools=tools, custom_prompt=None, append_prompt=None
        )
        return str(result["text"])

    # ------------------------------------------------------------------ clients

    def connect(self, client: Client) -> None:
        self.registry.clients.add(client)

    async def disconnect(self, client: Client) -> None:
        """Drop a client's hold on its sessions (sessions nobody holds are closed)."""
        for session_id in list(client.open):
            self._release(client, session_id)
        self.registry.clients.discard(client)
        self.prompt.disconnect(client)
        self.documents.close_owner(str(client.id))

    def editor_document(self, client: Client, event: str, uri: str, text: str | None = None) -> None:
        """An editor opened, changed, saved or closed ``uri`` (``text``: its whole current text)."""
        owner = str(client.id)
        if event == "close":
            self.documents.close(uri, owner)
        elif event == "save":
            self.documents.save(uri, text, owner)
        elif text is not None:
            self.documents.change(uri, text, owner)

    async def close(self) -> None:
        await self.runs.aclose()
        await self.compaction.aclose()
        await self.prompt.aclose()
        await self.watcher.close()
        self.executor.shutdown(wait=True)

    # ------------------------------------------------------------------ running work

    async def run(self, session: OpenSession, fn: Callable[[], T], *, writes: bool) -> T:
        """``fn()`` in a worker thread under the session's lock (see the module docstring)."""
        async with session.lock:
            future = asyncio.get_running_loop().run_in_executor(self.executor, fn)
            cancelled = False
            while True:
                try:
                    result = await asyncio.shield(future)
                    break
                except asyncio.CancelledError:
                    if future.done() and future.cancelled():
                        raise
                    cancelled = True
            if cancelled and not writes:
                raise asyncio.CancelledError
            return result

    async def call(
        self, client: Client, session_id: str | None, op: Callable[..., ops.Outcome], *args: Any, writes: bool
    ) -> Any:
        """Resolve the addressed session, run one entries operation and announce its change."""
        session = self.registry.resolve(client, session_id)
        result, change = await self.run(session, lambda: op(session.manager, *args), writes=writes)
        if change is not None:
            self.emit(session, change)
        return result

    async def append_entry(self, client: Client, session_id: str | None, entry: dict[str, Any]) -> Any:
        """``pi/appendEntry``, then the append listeners (auto-compaction checks)."""
        session = self.registry.resolve(client, session_id)
        result, change = await self.run(
            session, lambda: ops.append_entry(session.manager, entry), writes=True
        )
        if change is not None:
            self.emit(session, change)
        for listener in self.append_listeners:
            try:
                listener(client, session, result)
            except Exception:
                log.exception("append listener failed")
        return result

    def emit(self, session: OpenSession, change: ops.Change) -> None:
        """``pi/sessionChanged`` to every client holding the session."""
        params = {
            "sessionId": session.id,
            "leafId": session.manager.leaf_id,
            "appendedIds": change.appended_ids,
            "reason": change.reason,
        }
        for client in self.registry.holders(session.id):
            try:
                client.notify("pi/sessionChanged", params)
            except Exception:
                log.exception("could not notify client %s", client.id)
        if change.reason != "external" and session.manager.session_file is not None:
            self.watcher.touch(session.id)

    async def _external_change(self, session_id: str) -> None:
        session = self.registry.get(session_id)
        if session is None:
            return
        new_ids = await self.run(session, session.manager.refresh, writes=True)
        if new_ids:
            self.emit(session, ops.Change("external", new_ids))

    # ------------------------------------------------------------------ registering sessions

    def _register(self, client: Client, manager: SessionManager) -> OpenSession:
        existing = self.registry.get(manager.session_id)
        if existing is not None and existing.manager is not manager:
            raise InvalidParams(
                f"another session with id {manager.session_id} is already open"
                f" ({existing.manager.session_file or 'in memory'}); close it first",
                {"session": manager.session_id},
            )
        session = OpenSession(manager)
        self.registry.add(session)
        self.registry.attach(client, session)
        if manager.persist and manager.session_file is not None:
            self.watcher.watch(session.id, manager.session_file)
        self.prompt.sessions_changed()  # a session's cwd is watched for prompt changes
        return session

    def _release(self, client: Client, session_id: str) -> None:
        client.open.discard(session_id)
        self.prompt.sessions_changed()
        if client.active == session_id:
            client.active = None
        if self.registry.holders(session_id):
            return
        session = self.registry.get(session_id)
        if session is not None:
            self.registry.remove(session)
            self.watcher.unwatch(session_id)

    async def _open_path(self, client: Client, path: str, **options: Any) -> dict[str, Any]:
        """Open (or re-use) the session stored at ``path``; shared by open/continue/fork."""
        key = path_key(path)
        lock = self._open_locks.setdefault(key, asyncio.Lock())
        async with lock:
            existing = self.registry.find_path(path)
            if existing is not None:
                self.registry.attach(client, existing)
                self.prompt.sessions_changed()
                return wire.session_state(existing.manager)
            before = _inode(path)
            loop = asyncio.get_running_loop()
            manager = await loop.run_in_executor(self.executor, lambda: SessionManager.open(path, **options))
            session = self._register(client, manager)
            self._open_locks.pop(key, None)
        if before is not None and _inode(path) != before:
            self.emit(session, ops.Change("migrate"))
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

        manager = await asyncio.get_running_loop().run_in_executor(self.executor, create)
        self._register(client, manager)
        return wire.session_state(manager)

    async def open_session(self, client: Client, path: str) -> dict[str, Any]:
        path = client.resolve_path(path)
        return await self._open_path(client, path)

    async def continue_recent(self, client: Client, cwd: str | None) -> dict[str, Any]:
        cwd = client.resolve_path(cwd or client.default_cwd)

        def find() -> tuple[Path, Path | None]:
            from pi_lsp.session.listing import find_most_recent_session

            directory = client.settings.resolve_session_dir(cwd)
            return directory, find_most_recent_session(directory)

        directory, recent = await asyncio.get_running_loop().run_in_executor(self.executor, find)
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

        def scan() -> list[dict[str, Any]]:
            from pi_lsp.session.listing import list_all_sessions, list_sessions, search_sessions

            if all_projects:
                infos = list_all_sessions()
            else:
                infos = list_sessions(cwd, client.settings.resolve_session_dir(cwd))
            infos = search_sessions(infos, query)
            if limit is not None:
                infos = infos[:limit]
            return [info.to_wire() for info in infos]

        return {"sessions": await asyncio.get_running_loop().run_in_executor(self.executor, scan)}

    async def fork_session(self, client: Client, source_path: str, cwd: str | None) -> dict[str, Any]:
        source = client.resolve_path(source_path)
        target_cwd = client.resolve_path(cwd or client.default_cwd)

        def fork() -> SessionManager:
            directory = client.settings.resolve_session_dir(target_cwd)
            return SessionManager.fork_from(source, target_cwd, directory)

        manager = await asyncio.get_running_loop().run_in_executor(self.executor, fork)
        self._register(client, manager)
        return wire.session_state(manager)

    async def branch_to_new_session(
        self, client: Client, session_id: str | None, entry_id: str
    ) -> dict[str, Any]:
        session = self.registry.resolve(client, session_id)
        manager = await self.run(session, lambda: _branched_copy(session.manager, entry_id), writes=True)
        self._register(client, manager)
        return wire.session_state(manager)

    async def get_state(self, client: Client, session_id: str | None) -> dict[str, Any]:
        session = self.registry.resolve(client, session_id)
        return await self.run(session, lambda: wire.session_state(session.manager), writes=False)

    async def close_session(self, client: Client, session_id: str | None) -> dict[str, Any]:
        target = session_id if session_id is not None else client.active
        if target is None:
            raise SessionNotFound("there is no active session to close")
        session = self.registry.get(target)
        if session is None and target not in client.open:
            raise SessionNotFound(f"session {target} is not open", {"session": target})
        if session is not None:
            async with session.lock:  # let work already running on it finish first
                self._release(client, target)
        else:
            self._release(client, target)
        return {}

    # ------------------------------------------------------------------ context

    async def build_context(self, client: Client, session_id: str | None, leaf_id: Any) -> dict[str, Any]:
        session = self.registry.resolve(client, session_id)
        hook = self.context_usage
        settings = client.settings

        def build() -> dict[str, Any]:
            result: dict[str, Any] = ops.build_context(session.manager, leaf_id)[0]
            if hook is not None:  # compaction wiring: the ContextUsage of this context
                result["usage"] = hook(session.manager, session.manager.context_view(leaf_id), settings)
            return result

        return await self.run(session, build, writes=False)


def _inode(path: str) -> int | None:
    try:
        return os.stat(path).st_ino
    except OSError:
        return None


def _branched_copy(source: SessionManager, entry_id: str) -> SessionManager:
    """pi's ``createBranchedSession`` on a copy, so the source session stays open unchanged."""
    from pi_lsp.session.errors import EntryNotFoundError

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
