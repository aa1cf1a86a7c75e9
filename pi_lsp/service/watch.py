"""Notice appends to open session files made by other processes (pi's CLI, a second editor).

A cheap ``stat`` poll (default every 0.3 s) compares the signature of each watched file;
when they change the owner is told, and it reads only what was appended
(``SessionManager.refresh()`` resumes from its last offset). Polling needs no dependency, works on
every file system (inotify does not on network mounts) and costs one ``stat`` per open file.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable

from pi_lsp.stat_poll import Signature, stat_signature

log = logging.getLogger(__name__)

OnChange = Callable[[str], Awaitable[None]]


class FileWatcher:
    """Polls the watched paths and calls ``on_change(key)`` (one call at a time per key)."""

    def __init__(self, on_change: OnChange, interval: float = 0.3) -> None:
        self.on_change = on_change
        self.interval = interval
        self._paths: dict[str, str] = {}
        self._signatures: dict[str, Signature | None] = {}
        self._running: set[str] = set()
        self._tasks: set[asyncio.Task[None]] = set()
        self._task: asyncio.Task[None] | None = None

    def watch(self, key: str, path: str) -> None:
        self._paths[key] = path
        self._signatures[key] = stat_signature(path)
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._run(), name="pi-lsp file watcher")

    def unwatch(self, key: str) -> None:
        self._paths.pop(key, None)
        self._signatures.pop(key, None)

    def touch(self, key: str) -> None:
        """Check ``key`` on the next poll even if its signature looks unchanged."""
        if key in self._signatures:
            self._signatures[key] = None

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    async def _run(self) -> None:
        while self._paths:
            await asyncio.sleep(self.interval)
            self.poll()

    def poll(self) -> None:
        for key, path in list(self._paths.items()):
            signature = stat_signature(path)
            if signature == self._signatures.get(key) or key in self._running:
                continue
            self._signatures[key] = signature
            self._running.add(key)
            self._tasks.add(asyncio.get_running_loop().create_task(self._notify(key)))

    async def _notify(self, key: str) -> None:
        try:
            await self.on_change(key)
        except Exception:
            log.exception("checking %s for external changes failed", self._paths.get(key, key))
        finally:
            self._running.discard(key)
            current = asyncio.current_task()
            if current is not None:
                self._tasks.discard(current)
