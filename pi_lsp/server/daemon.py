"""A shared server's bookkeeping: the state file editors find it by, and exiting when idle.

An editor that wants one server for all its windows (the VS Code extension) starts
``pi-lsp --tcp 127.0.0.1:0 --state-file F --idle-exit S --reattach-grace G`` detached. The server
holds an exclusive lock on ``F.lock`` for its whole life, so a second one started at the same
moment exits with :data:`ALREADY_RUNNING` and the editor connects to the first. Once listening, it
writes ``F`` (atomically, mode 0600: it holds the token) with its pid, address, token and version,
and removes it when it exits. With no connection and no run for S seconds it exits by itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import json
import logging
import os
import signal
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from pi_lsp import __version__
from pi_lsp.atomic_file import replace_atomically

log = logging.getLogger(__name__)

ALREADY_RUNNING = 3
"""Exit status when another live server holds the state file's lock."""


class StateFileBusy(Exception):
    """Another server holds the lock; the message says which (never the token)."""


@dataclass
class StateFile:
    """``path`` and its lock; :meth:`acquire` first, :meth:`publish` once listening."""

    path: Path
    _lock_fd: int | None = None

    def acquire(self) -> None:
        """Take the lock for this process's life, or raise :class:`StateFileBusy`."""
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd = os.open(f"{self.path}.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            owner = self.read_pid()
            holder = f" (pid {owner})" if owner is not None else ""
            raise StateFileBusy(f"another pi-lsp serves {self.path}{holder}") from None
        self._lock_fd = fd

    def publish(self, scheme: str, address: str, token: str) -> None:
        """Write the file editors connect by (``{"tcp": "HOST:PORT", …}``); readable by this user only."""
        record = {"pid": os.getpid(), scheme: address, "token": token, "version": __version__}
        replace_atomically(self.path, json.dumps(record).encode(), fsync=True)  # made 0600

    def read_pid(self) -> int | None:
        try:
            pid = json.loads(self.path.read_text(encoding="utf-8")).get("pid")
        except (OSError, ValueError, AttributeError):
            return None
        return pid if isinstance(pid, int) else None

    def release(self) -> None:
        """At exit: remove the file if it is still this process's, then drop the lock."""
        if self._lock_fd is None:
            return
        if self.read_pid() == os.getpid():
            with contextlib.suppress(OSError):
                self.path.unlink()
        os.close(self._lock_fd)
        self._lock_fd = None


class Lifetime:
    """Counts a network server's connections and says when it should stop (idle, or a signal)."""

    def __init__(self, idle_exit: float | None, running: Callable[[], bool]) -> None:
        self.idle_exit = idle_exit  # None: serve until stopped
        self.running = running  # whether a run is in progress (it keeps the server alive)
        self.connections = 0
        self.stop = asyncio.Event()

    @contextlib.contextmanager
    def connection(self) -> Iterator[None]:
        self.connections += 1
        try:
            yield
        finally:
            self.connections -= 1

    async def watch_idle(self) -> None:
        """Set :attr:`stop` after ``idle_exit`` seconds without a connection or a run."""
        if self.idle_exit is None:
            return
        loop = asyncio.get_running_loop()
        tick = min(1.0, max(self.idle_exit / 4, 0.05))
        idle_since = loop.time()
        while not self.stop.is_set():
            await asyncio.sleep(tick)
            if self.connections or self.running():
                idle_since = loop.time()
            elif loop.time() - idle_since >= self.idle_exit:
                log.info("no connection and no run for %g s: exiting", self.idle_exit)
                self.stop.set()

    def stop_on_signals(self) -> None:
        """SIGTERM and SIGINT end the server cleanly (its state file removed, runs saved)."""
        loop = asyncio.get_running_loop()
        for number in (signal.SIGTERM, signal.SIGINT):
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.add_signal_handler(number, self.stop.set)
