"""The session host: what every service shares, and nothing that belongs to one of them.

It holds the open sessions (:class:`Registry`), the worker threads that run session work, the
watcher that notices other processes' appends, and three listener lists that services register
on in :func:`pi_lsp.service.build.build_service` (never by reaching into each other):

* ``append_listeners``: after each ``pi/appendEntry`` (auto-compaction);
* ``sessions_changed_listeners``: a session was opened, attached or released (prompt roots);
* ``disconnect_listeners``: a client's connection is gone (forget per-client state).

**Threads.** Everything here runs on the event loop thread except ``fn`` in :meth:`run` and
:meth:`in_thread`, which run in a worker thread. Work on one session runs under that session's
lock, so requests on one session are serialised while big file reads never stall other sessions
or the connection. Cancellation is honoured until a write starts: a request still waiting for the
lock is cancelled with nothing written; once a write has started it completes and its real result
is reported.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any, TypeVar

from pi_lsp.service import entries as ops
from pi_lsp.service.errors import InvalidParams
from pi_lsp.service.notifications import send
from pi_lsp.service.registry import Client, OpenSession, Registry
from pi_lsp.service.watch import FileWatcher
from pi_lsp.service.workers import WorkerPool
from pi_lsp.session import SessionManager

log = logging.getLogger(__name__)
T = TypeVar("T")

# Called on the event loop after each pi/appendEntry with the client, the session and the result.
AppendListener = Callable[[Client, OpenSession, dict[str, Any]], None]
SessionsChangedListener = Callable[[], None]
DisconnectListener = Callable[[Client], None]


class SessionHost:
    """Open sessions, the threads that work on them, and how their changes are announced."""

    def __init__(self, *, workers: int = 4, watch_interval: float = 0.3) -> None:
        self.registry = Registry()
        self.executor = WorkerPool(workers, "pi-lsp-session")
        self.closing = False
        self.watcher = FileWatcher(self._external_change, watch_interval)
        self.append_listeners: list[AppendListener] = []
        self.sessions_changed_listeners: list[SessionsChangedListener] = []
        self.disconnect_listeners: list[DisconnectListener] = []
        self._pins: dict[str, int] = {}  # session id → runs keeping it open (see pin)

    # ------------------------------------------------------------------ clients

    def connect(self, client: Client) -> None:
        self.registry.clients.add(client)

    def disconnect(self, client: Client) -> None:
        """Drop a client's hold on its sessions (sessions nobody holds are closed)."""
        for session_id in list(client.open):
            self.release(client, session_id)
        self.registry.clients.discard(client)
        for listener in self.disconnect_listeners:
            _call_listener(listener, client)

    async def close(self) -> None:
        """Server exit (after the services closed): stop watching and the worker threads."""
        self.closing = True
        await self.watcher.close()
        # Running jobs get a few seconds; one stuck in blocking I/O does not keep the process alive.
        await asyncio.get_running_loop().run_in_executor(None, self.executor.shutdown)
        if self.executor.stuck:
            log.warning("exiting with %d session jobs still stuck in blocking I/O", self.executor.stuck)

    # ------------------------------------------------------------------ running work

    async def run(self, session: OpenSession, fn: Callable[[], T], *, writes: bool) -> T:
        """``fn()`` in a worker thread under the session's lock (see the module docstring).

        A cancelled read is answered at once and its worker slot freed; the session stays locked
        until the read really ends (nothing else may touch the session meanwhile). A write that
        started runs to its end and its real result is reported.
        """
        await session.lock.acquire()
        job = self.executor.submit(fn)
        future = asyncio.wrap_future(job)
        release_later = False
        try:
            while True:
                try:
                    result = await asyncio.shield(future)
                    break
                except asyncio.CancelledError:
                    if job.cancel() or (future.done() and future.cancelled()):
                        raise  # it had not started: nothing was done
                    if not writes or self.closing:  # at exit a stuck write is not waited for
                        self.executor.abandon(job)
                        future.add_done_callback(lambda _: session.lock.release())
                        release_later = True
                        raise
                    # a started write runs to its end; its real result is the answer
        finally:
            if not release_later:
                session.lock.release()
        return result

    async def in_thread(self, fn: Callable[[], T]) -> T:
        """``fn()`` in a worker thread, holding no session's lock (opening, listing, forking);
        cancelled, it is answered at once and the worker slot is freed."""
        job = self.executor.submit(fn)
        try:
            return await asyncio.shield(asyncio.wrap_future(job))
        except asyncio.CancelledError:
            self.executor.abandon(job)
            raise

    async def call(
        self, client: Client, session_id: str | None, op: Callable[..., ops.Outcome], *args: Any, writes: bool
    ) -> Any:
        """Resolve the addressed session, run one entries operation and announce its change."""
        session = self.registry.resolve(client, session_id)
        result, change = await self.run(session, lambda: op(session.manager, *args), writes=writes)
        if change is not None:
            self.emit(session, change)
        return result

    # ------------------------------------------------------------------ announcing changes

    def emit(self, session: OpenSession, change: ops.Change) -> None:
        """``pi/sessionChanged`` to every client holding the session.

        When the write behind ``change`` first had to put a deleted or emptied file back whole,
        a ``pi/sessionChanged`` with reason ``rewritten`` (no appended ids) comes first.
        """
        event = session.manager.take_file_event()
        if event is not None:
            leaf = session.manager.leaf_id
            rewritten: dict[str, Any] = {"sessionId": session.id, "leafId": leaf, "appendedIds": []}
            self.broadcast(session, "pi/sessionChanged", {**rewritten, "reason": event})
        params = {
            "sessionId": session.id,
            "leafId": session.manager.leaf_id,
            "appendedIds": change.appended_ids,
            "reason": change.reason,
        }
        self.broadcast(session, "pi/sessionChanged", params)
        if change.reason != "external" and session.manager.session_file is not None:
            self.watcher.touch(session.id)

    def broadcast(
        self, session: OpenSession, method: str, params: dict[str, Any], *, before_response: bool = False
    ) -> None:
        """A notification to every client holding ``session`` (timing: :mod:`.notifications`)."""
        for client in self.registry.holders(session.id):
            send(client, method, params, before_response=before_response)

    def appended(self, client: Client, session: OpenSession, result: dict[str, Any]) -> None:
        """Tell the append listeners about a ``pi/appendEntry`` that was answered with ``result``."""
        for listener in self.append_listeners:
            _call_listener(listener, client, session, result)

    def sessions_changed(self) -> None:
        for listener in self.sessions_changed_listeners:
            _call_listener(listener)

    async def _external_change(self, session_id: str) -> None:
        session = self.registry.get(session_id)
        if session is None:
            return
        new_ids = await self.run(session, session.manager.refresh, writes=True)
        if new_ids:
            self.emit(session, ops.Change("external", new_ids))

    # ------------------------------------------------------------------ holding sessions

    def register(self, client: Client, manager: SessionManager) -> OpenSession:
        """Make a freshly loaded session open, held by ``client`` and its active session."""
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
        self.sessions_changed()
        return session

    def attach(self, client: Client, session: OpenSession) -> None:
        """``client`` holds an already open session too (and it becomes its active one)."""
        self.registry.attach(client, session)
        self.sessions_changed()

    def release(self, client: Client, session_id: str) -> None:
        """``client`` no longer holds the session; nobody holding it (and no pin) closes it."""
        client.open.discard(session_id)
        self.sessions_changed()
        if client.active == session_id:
            client.active = None
        self._close_if_unheld(session_id)

    def pin(self, session: OpenSession) -> None:
        """Keep ``session`` open without a client (a run outliving its connection writes to it)."""
        self._pins[session.id] = self._pins.get(session.id, 0) + 1

    def unpin(self, session: OpenSession) -> None:
        """Undo one :meth:`pin`; a session nobody holds any more is closed now."""
        left = self._pins.get(session.id, 0) - 1
        if left > 0:
            self._pins[session.id] = left
            return
        self._pins.pop(session.id, None)
        self._close_if_unheld(session.id)

    def _close_if_unheld(self, session_id: str) -> None:
        if self.registry.holders(session_id) or session_id in self._pins:
            return
        session = self.registry.get(session_id)
        if session is not None:
            self.registry.remove(session)
            self.watcher.unwatch(session_id)


def _call_listener(listener: Callable[..., None], *args: Any) -> None:
    try:
        listener(*args)
    except Exception:
        log.exception("listener %s failed", getattr(listener, "__qualname__", listener))
