"""Server-side watcher for everything the system prompt is built from.

Works without client file watchers (e.g. Neovim 0.7): it watches every context-file candidate
from the filesystem root to each workspace cwd, the agent dir (even outside the workspace),
``<cwd>/.pi``, every skill root recursively and both settings files. Events arrive from a backend
thread (``watchdog``'s native events, or stat polling when asked for) or from the client through
:meth:`PromptWatcher.notify_paths`; both feed one debouncer, so a burst of changes - an editor's
write-rename-chmod, ``git checkout``, or the same change reported by client and server - yields
one ``on_change(cwd, changed_paths)`` call per affected cwd.

Threading: the debouncer runs on its own daemon thread. Without ``loop``, ``on_change`` is called
on that thread and must hop to the server's event loop itself (``loop.call_soon_threadsafe``).
With ``loop`` (the pygls server's asyncio loop), the watcher does that hop: ``on_change`` runs on
the loop, and a coroutine it returns is scheduled as a task.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
import os
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Literal
from urllib.parse import unquote, urlparse

from pi_lsp.agent_dir import agent_dir as default_agent_dir
from pi_lsp.prompt.watch_backends import (
    Applied,
    Backend,
    PollingBackend,
    WatchdogBackend,
)
from pi_lsp.prompt.watch_plan import WatchPlan, dir_checker, plan_watch

__all__ = ["ChangeCallback", "PromptWatcher"]

log = logging.getLogger(__name__)

ChangeCallback = Callable[[str, list[str]], Any]
"""``on_change(cwd, changed_paths)``; may return an awaitable when a loop is given."""

BackendChoice = Literal["auto", "watchdog", "poll"]


def _to_path(value: str) -> str:
    if value.startswith("file:"):
        return os.path.normpath(unquote(urlparse(value).path))
    return os.path.normpath(os.path.abspath(value))


def _log_files() -> set[str]:
    """The files this process logs to: never watched, so that a log inside a watched folder (a
    debug log in a skills folder) cannot turn each line it writes into a change and a rebuild,
    which logs more lines."""
    paths: set[str] = set()
    for handler in logging.getLogger().handlers:
        if isinstance(handler, logging.FileHandler):
            paths.add(os.path.normpath(handler.baseFilename))
            paths.add(os.path.realpath(handler.baseFilename))
    return paths


class PromptWatcher:
    """Debounced change notifications for the prompt inputs of one or more workspace cwds.

    ``debounce`` is the quiet time that ends a burst (default 100 ms; the polling backend adds one
    ``poll_interval``); ``max_delay`` caps how long a continuous stream of changes can postpone
    the callback. ``backend`` picks ``watchdog`` (native events; ``auto`` is the same) or
    ``poll`` (stat polling, for tests and file systems without native events). Changes to ``ignored`` paths
    and to the files the process logs to are never reported.
    """

    def __init__(
        self,
        on_change: ChangeCallback,
        *,
        agent_dir: str | os.PathLike[str] | None = None,
        home: str | None = None,
        debounce: float = 0.1,
        max_delay: float = 1.0,
        backend: BackendChoice = "auto",
        poll_interval: float = 0.05,
        loop: asyncio.AbstractEventLoop | None = None,
        ignored: Iterable[str] = (),
    ) -> None:
        self._on_change = on_change
        self._agent_dir = os.fspath(agent_dir) if agent_dir is not None else str(default_agent_dir())
        self._home = home
        self._debounce = debounce
        self._max_delay = max(max_delay, debounce)
        self._loop = loop
        self._plans: dict[str, WatchPlan] = {}
        self._targets: dict[str, set[tuple[str, bool]]] = {}
        self._ignored = {os.path.normpath(p) for p in ignored} | _log_files()
        self.plans_made = 0
        """How many root plans were made (each reads settings and stats the candidates)."""
        self._lock = threading.Condition()
        self._pending: dict[str, set[str]] = {}
        self._new_dirs: list[str] = []
        self._tasks: set[asyncio.Future[Any]] = set()
        self._first_event = 0.0
        self._last_event = 0.0
        self._running = False
        self._targets_stale = False  # set when stopped: directories may have come or gone since
        self._worker: threading.Thread | None = None
        use_watchdog = backend != "poll"
        self._backend: Backend
        if use_watchdog:
            self._backend = WatchdogBackend(self._from_backend)
        else:
            self._backend = PollingBackend(self._from_backend, poll_interval)
            # One burst can span two polls; a quiet poll, not just quiet time, ends it.
            self._debounce = debounce + poll_interval
            self._max_delay = max(self._max_delay, self._debounce)

    # -- configuration ------------------------------------------------------------------------

    @property
    def backend_name(self) -> str:
        """``"watchdog"`` or ``"poll"``."""
        return self._backend.name

    def roots(self) -> list[str]:
        """The cwds being watched."""
        with self._lock:
            return list(self._plans)

    def roots_covering(self, path: str) -> set[str]:
        """The roots whose prompt a file at ``path`` can be part of."""
        path = os.path.normpath(path)
        with self._lock:
            return {cwd for cwd, plan in self._plans.items() if plan.relevant(path, False)}

    def add_root(self, cwd: str) -> None:
        """Start watching the prompt inputs of ``cwd`` (a workspace folder or session cwd)."""
        self.update_roots([cwd])

    def remove_root(self, cwd: str) -> None:
        """Stop watching ``cwd``; pending changes for it are dropped."""
        self.update_roots([], [cwd])

    def update_roots(self, added: Sequence[str], removed: Sequence[str] = ()) -> None:
        """Add and remove several roots with one backend update.

        Only the added roots are planned (their settings read, their watch directories found);
        the other roots' watch directories are reused, so adding one root costs the same whether
        ten or a thousand are watched (the whole set is re-examined after file changes instead).
        """
        plans = {
            cwd: plan_watch(cwd, self._agent_dir, home=self._home) for cwd in map(os.path.abspath, added)
        }
        isdir = dir_checker()
        targets = {cwd: plan.watch_dirs(isdir) for cwd, plan in plans.items()}
        with self._lock:
            for cwd in map(os.path.abspath, removed):
                self._plans.pop(cwd, None)
                self._targets.pop(cwd, None)
                self._pending.pop(cwd, None)
            self._plans.update(plans)
            self._targets.update(targets)
            self.plans_made += len(plans)
        self._apply(recompute=False)

    def refresh(self, roots: Iterable[str] | None = None) -> None:
        """Re-plan ``roots`` (default: every root): settings may name new skill paths, directories
        may have appeared. After a burst only the roots it touched are re-planned: a change that
        can alter a root's plan (its settings files, a folder on the way to one of its inputs) is
        relevant to that root, so a save in one of a thousand roots re-plans one."""
        with self._lock:
            wanted = list(self._plans) if roots is None else [r for r in roots if r in self._plans]
        plans = {cwd: plan_watch(cwd, self._agent_dir, home=self._home) for cwd in wanted}
        with self._lock:
            self.plans_made += len(plans)
            for cwd, plan in plans.items():
                if cwd in self._plans:
                    self._plans[cwd] = plan
        self._report_existing(self._apply(roots=None if roots is None else set(plans)).replaced)

    def _report_existing(self, directories: Sequence[tuple[str, bool]]) -> None:
        """Report the inputs inside directories whose earlier contents we could not have seen."""
        with self._lock:
            plans = list(self._plans.values())
        found = [
            p
            for directory, rec in directories
            for plan in plans
            for p in plan.existing_inputs(directory, rec)
        ]
        if found:
            self._ingest(found, False)

    def _apply(self, *, recompute: bool = True, roots: set[str] | None = None) -> Applied:
        """Bring the backend in line with the plans; ``recompute`` finds the watch directories of
        ``roots`` (default: every plan's) again (after file changes: directories may have appeared
        or gone)."""
        with self._lock:
            plans = dict(self._plans)
            running = self._running
        if not running:
            return Applied()
        if recompute:
            isdir = dir_checker()
            fresh = {
                cwd: plan.watch_dirs(isdir) for cwd, plan in plans.items() if roots is None or cwd in roots
            }
            with self._lock:
                self._targets.update({cwd: t for cwd, t in fresh.items() if cwd in self._plans})
                if roots is None:
                    self._targets_stale = False
        with self._lock:
            targets: set[tuple[str, bool]] = set().union(*self._targets.values())
        return self._backend.apply(list(plans.values()), targets, check_stale=recompute)

    # -- lifecycle ----------------------------------------------------------------------------

    def start(self) -> None:
        """Start the backend and the debounce thread (idempotent)."""
        with self._lock:
            if self._running:
                return
            self._running = True
        self._backend.start()
        # Roots added before the first start had their watch directories found just now (by
        # update_roots): finding them again would double the cost of a thousand roots at once.
        self._apply(recompute=self._targets_stale)
        self._worker = threading.Thread(target=self._run, name="pi-prompt-watch", daemon=True)
        self._worker.start()

    def stop(self) -> None:
        """Stop watching; no callback is made after this returns."""
        with self._lock:
            if not self._running:
                return
            self._running = False
            self._targets_stale = True
            self._pending.clear()
            self._lock.notify_all()
        self._backend.stop()
        if self._worker is not None and self._worker is not threading.current_thread():
            self._worker.join(timeout=5)
        self._worker = None

    def __enter__(self) -> PromptWatcher:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- events -------------------------------------------------------------------------------

    def notify_paths(self, paths: Iterable[str]) -> None:
        """Feed changes reported by the client (``workspace/didChangeWatchedFiles``; paths or URIs)."""
        self._ingest([_to_path(p) for p in paths], None)

    def _from_backend(self, paths: Sequence[str], is_dir: bool | None, kind: str) -> None:
        normalized = [os.path.normpath(p) for p in paths]
        if is_dir and kind in ("created", "moved"):
            with self._lock:
                if any(plan.structural(d) for plan in self._plans.values() for d in normalized):
                    self._new_dirs.extend(normalized)
                    self._lock.notify_all()
        self._ingest(normalized, is_dir)

    def _catch_up(self) -> None:
        """A directory on the way to a watched location appeared: watch it now (on the worker
        thread, never the backend's), and report inputs written into it before the watch existed."""
        watched: list[tuple[str, bool]] = []
        for _ in range(16):  # deeper directories may appear while we add watches: repeat until stable
            applied = self._apply()
            if not applied.added and not applied.replaced:
                break
            watched.extend([*applied.added, *applied.replaced])
        self._report_existing(watched)

    def _ingest(self, paths: Sequence[str], is_dir: bool | None) -> None:
        now = time.monotonic()
        if self._ignored:
            paths = [p for p in paths if p not in self._ignored]
        with self._lock:
            if not self._running:
                return
            touched = False
            for cwd, plan in self._plans.items():
                relevant = [p for p in paths if plan.relevant(p, is_dir)]
                if relevant:
                    if not self._pending:
                        self._first_event = now
                    self._pending.setdefault(cwd, set()).update(relevant)
                    touched = True
            if touched:
                self._last_event = now
                self._lock.notify_all()

    # -- debounce and dispatch ----------------------------------------------------------------

    def _run(self) -> None:
        while True:
            with self._lock:
                while self._running and not self._new_dirs:
                    if not self._pending:
                        self._lock.wait()
                        continue
                    due = min(self._last_event + self._debounce, self._first_event + self._max_delay)
                    remaining = due - time.monotonic()
                    if remaining <= 0:
                        break
                    self._lock.wait(remaining)
                if not self._running:
                    return
                catch_up, self._new_dirs = bool(self._new_dirs), []
                batch: dict[str, set[str]] = {}
                if not catch_up:
                    batch, self._pending = self._pending, {}
            if catch_up:
                self._catch_up()
                continue
            for cwd, changed in batch.items():
                self._dispatch(cwd, sorted(changed))
            try:
                self.refresh(batch)
            except Exception:  # pragma: no cover - re-planning must not kill the thread
                log.exception("prompt watcher re-plan failed")

    def _dispatch(self, cwd: str, changed: list[str]) -> None:
        if self._loop is not None:
            with contextlib.suppress(RuntimeError):  # a closed loop: the server is shutting down
                self._loop.call_soon_threadsafe(self._invoke, cwd, changed)
            return
        self._invoke(cwd, changed)

    def _invoke(self, cwd: str, changed: list[str]) -> None:
        try:
            result = self._on_change(cwd, changed)
            if inspect.isawaitable(result):
                task = asyncio.ensure_future(result)
                self._tasks.add(task)
                task.add_done_callback(self._tasks.discard)
        except Exception:
            log.exception("prompt change callback failed for %s", cwd)
