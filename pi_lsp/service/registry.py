"""Open sessions and connected clients.

Sessions are shared by every client of this server process (one per editor over stdio, several
over TCP/WebSocket) and addressed by their session id; a file that is already open is never
opened twice. Each client has its own *active* session: the one it most recently created, opened
or addressed. All of this state is touched only on the event loop thread.

"Most recently" is in the order the requests arrived (:func:`request_arrived`), not the order
their handlers reach the registry: a request that first waits for something (the first
``pi/getSessionStats`` loads the run service) must not make its session active again after a
request that came later chose another.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import itertools
import os
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from pi_lsp.paths import resolve_client_path
from pi_lsp.service.errors import SessionBusy, SessionNotFound
from pi_lsp.service.settings import Settings
from pi_lsp.session import SessionManager

Notify = Callable[[str, dict[str, Any]], None]
Request = Callable[[str, dict[str, Any]], Awaitable[Any]]
_client_ids = itertools.count(1)
_arrivals = itertools.count(1)
_arrival: contextvars.ContextVar[int | None] = contextvars.ContextVar("pi_lsp_arrival", default=None)


def request_arrived() -> None:
    """Number the request the current task handles; called by the server as the first step of each
    request's task (tasks take their first step in the order they were made: the arrival order)."""
    _arrival.set(next(_arrivals))


def _no_notify(method: str, params: dict[str, Any]) -> None:
    """Default sink for clients that have no connection (tests, CLI)."""


@dataclass(eq=False)
class Client:
    """One connected editor: its settings, its active session and the sessions it holds open."""

    settings: Settings = field(default_factory=lambda: Settings(load=False))  # read at initialize
    notify: Notify = _no_notify  # the connection's raw sink: services use notifications.send
    workspace_root: str | None = None
    #: Every workspace folder (``initialize``, then ``workspace/didChangeWorkspaceFolders``): the
    #: boundary of the approval policy. Empty (an editor with a single file): everything is outside.
    workspace_folders: list[str] = field(default_factory=list)
    active: str | None = None
    active_since: int = 0  # the arrival number of the request that made ``active`` so (0: none)
    open: set[str] = field(default_factory=set)
    id: int = field(default_factory=lambda: next(_client_ids))
    request: Request | None = None  # a server → client request (pi/requestApproval); None: cannot
    approvals: bool = False  # declared capabilities.experimental.pi.approvals in initialize
    leaving: bool = False  # sent shutdown or lost its connection: its requests end, not by the user

    @property
    def default_cwd(self) -> str:
        """The first workspace folder, else the server's working directory."""
        return self.workspace_root or os.getcwd()

    def change_folders(self, added: list[str], removed: list[str]) -> None:
        """``workspace/didChangeWorkspaceFolders``."""
        kept = [folder for folder in self.workspace_folders if folder not in removed]
        self.workspace_folders = kept + [folder for folder in added if folder not in kept]

    def resolve_path(self, value: str) -> str:
        """A path param of this client's: URI, ``~`` or relative to the workspace, made absolute."""
        return resolve_client_path(value, self.default_cwd)


@dataclass(eq=False)
class OpenSession:
    """A loaded session plus what serialises work on it."""

    manager: SessionManager
    path_key: str | None = None
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    busy: str | None = None
    #: The reason (``manual``, ``threshold``, ``overflow``) of the compaction running now, if any.
    compacting: str | None = None

    @property
    def id(self) -> str:
        return self.manager.session_id

    def claim(self, what: str) -> None:
        """Mark a long operation (prompt, compaction, summary) as the session's one, or raise
        SessionBusy. The check and the mark are one step: call it before any ``await`` of the
        request, so that two requests arriving together cannot both pass the check."""
        if self.busy is not None:
            raise SessionBusy(
                f"session {self.id} is busy: a {self.busy} is already running", {"busy": self.busy}
            )
        self.busy = what

    def release(self, what: str) -> None:
        """End the operation :meth:`claim` marked (a no-op if another one holds the session now)."""
        if self.busy == what:
            self.busy = None

    @contextlib.contextmanager
    def exclusive(self, what: str) -> Iterator[None]:
        """:meth:`claim` for the duration of a ``with`` block."""
        self.claim(what)
        try:
            yield
        finally:
            self.release(what)


def path_key(path: str) -> str:
    """Identity of a session file: its real path (symlinks resolved)."""
    return os.path.realpath(path)


class Registry:
    """Session id → open session, plus file path → session id."""

    def __init__(self) -> None:
        self.sessions: dict[str, OpenSession] = {}
        self.by_path: dict[str, str] = {}
        self.clients: set[Client] = set()

    def get(self, session_id: str) -> OpenSession | None:
        return self.sessions.get(session_id)

    def find_path(self, path: str) -> OpenSession | None:
        session_id = self.by_path.get(path_key(path))
        return self.sessions.get(session_id) if session_id is not None else None

    def add(self, session: OpenSession) -> None:
        self.sessions[session.id] = session
        file = session.manager.session_file
        if file is not None and session.manager.persist:
            session.path_key = path_key(file)
            self.by_path[session.path_key] = session.id

    def remove(self, session: OpenSession) -> None:
        self.sessions.pop(session.id, None)
        if session.path_key is not None and self.by_path.get(session.path_key) == session.id:
            del self.by_path[session.path_key]

    def holders(self, session_id: str) -> list[Client]:
        return [client for client in self.clients if session_id in client.open]

    def attach(self, client: Client, session: OpenSession) -> None:
        """The client now holds the session and it becomes the client's active one, unless a
        request that arrived later already made another session active."""
        client.open.add(session.id)
        arrival = _arrival.get()
        if arrival is None:  # not a client's request (a run, the CLI): as of now
            client.active = session.id
        elif arrival >= client.active_since:
            client.active, client.active_since = session.id, arrival

    def resolve(self, client: Client, session_id: str | None) -> OpenSession:
        """The addressed session (which becomes active) or the client's active one."""
        if session_id is not None:
            session = self.sessions.get(session_id)
            if session is None:
                raise SessionNotFound(f"session {session_id} is not open", {"session": session_id})
            self.attach(client, session)
            return session
        if client.active is None or client.active not in self.sessions:
            client.active = None
            raise SessionNotFound("there is no active session: create or open one first")
        return self.sessions[client.active]
