"""How the prompt watcher learns about file changes: inotify-style events or stat polling.

Both backends report raw paths to a sink from their own thread; relevance filtering and debouncing
happen in :mod:`pi_lsp.prompt.watch`. ``WatchdogBackend`` uses the ``watchdog`` package (a
dependency: inotify on Linux, FSEvents on macOS, ReadDirectoryChangesW on Windows). ``PollingBackend`` needs
nothing: it stats the planned paths every ``interval`` seconds, which suits machines without
inotify and keeps working where watch limits are exhausted.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from pi_lsp.prompt.inotify import FlatWatches, flat_watches_available
from pi_lsp.prompt.walk_limits import WalkBudget, walk_dirs
from pi_lsp.prompt.watch_plan import WatchPlan, iter_tree_files
from pi_lsp.stat_poll import Snapshot, changed_paths, snapshot

__all__ = ["Applied", "Backend", "PollingBackend", "Sink", "Targets", "WatchdogBackend"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Applied:
    """Directories (with their recursive flag) that got a watch in one ``apply``.

    ``replaced`` are watches re-created because their directory was deleted and made again:
    whatever is in them now was never seen. ``added`` are first watches (new plan entries).
    """

    added: list[tuple[str, bool]] = field(default_factory=list)
    replaced: list[tuple[str, bool]] = field(default_factory=list)


Targets = set[tuple[str, bool]]
"""Directories to watch, each with whether recursively (:meth:`WatchPlan.watch_dirs`)."""

Sink = Callable[[Sequence[str], "bool | None", str], None]
"""``sink(paths, is_dir, event_type)``; ``event_type`` is created/modified/deleted/moved/changed."""


class Backend(Protocol):
    """A change source the watcher drives."""

    name: str

    def start(self) -> None: ...

    def stop(self) -> None: ...

    def apply(self, plans: Sequence[WatchPlan], targets: Targets, *, check_stale: bool = True) -> Applied:
        """Watch what ``plans`` need (``targets``: their watch directories, already computed);
        says which directories got a new native watch. ``check_stale`` (a ``stat`` per watch)
        looks for watched directories deleted and made again; adding roots can skip it."""
        ...


_FLAT = "flat"
"""Stands for a watch on the shared inotify descriptor in ``WatchdogBackend._watches``."""


class WatchdogBackend:
    """Native file events through ``watchdog``; one observer, watches diffed on every apply.

    On Linux the flat (non-recursive) watches, one per root and ancestor folder, are all on one
    inotify descriptor read by one thread (:mod:`~pi_lsp.prompt.inotify`) instead of a
    ``watchdog`` emitter thread each; recursive ones (skill trees) stay with ``watchdog``.
    """

    name = "watchdog"

    def __init__(self, sink: Sink) -> None:
        # Imported when a watcher is made: the prompt package loads without them (first requests).
        from watchdog import events
        from watchdog.observers import Observer

        class _Handler:
            """Duck-typed watchdog handler: the observer only calls ``dispatch(event)``."""

            def dispatch(self, event: Any) -> None:
                kind = str(event.event_type)
                # Reads (ours included) must not look like changes; a directory "modified" event
                # only repeats what the event for the file inside it says.
                if kind in ("opened", "closed_no_write") or (event.is_directory and kind == "modified"):
                    return
                paths = [os.fsdecode(event.src_path)]
                if kind == "moved" and event.dest_path:
                    paths.append(os.fsdecode(event.dest_path))
                sink(paths, bool(event.is_directory), kind)

        self._handler = _Handler()
        # Only the events that can mean a change: without a filter inotify also reports every
        # open and read-only close, so each rebuild (which reads every skill and context file)
        # would flood the observer thread with events it then ignores.
        self._event_filter: list[Any] = [
            getattr(events, name)
            for name in (
                "FileCreatedEvent",
                "DirCreatedEvent",
                "FileModifiedEvent",
                "FileDeletedEvent",
                "DirDeletedEvent",
                "FileMovedEvent",
                "DirMovedEvent",
                "FileClosedEvent",
            )
            if hasattr(events, name)
        ]
        self._observer_class: Any = Observer
        self._observer: Any = self._observer_class()
        self._watches: dict[tuple[str, bool], tuple[Any, tuple[int, int] | None]] = {}
        self._failed: set[tuple[str, bool]] = set()
        self._lock = threading.Lock()
        self._flat = FlatWatches(sink) if flat_watches_available() else None

    def start(self) -> None:
        with self._lock:
            if self._observer.ident is not None:  # a stopped observer thread cannot be restarted
                self._observer = self._observer_class()
                self._watches.clear()
            self._observer.start()
            if self._flat is not None:
                self._flat.start()

    def stop(self) -> None:
        self._observer.stop()
        self._observer.join(timeout=5)
        if self._flat is not None:
            self._flat.stop()

    def _lost(self, key: tuple[str, bool], watch: Any, live: set[Any]) -> bool:
        if watch is _FLAT:
            return self._flat is not None and self._flat.stale(key[0])
        return watch not in live

    def _unwatch(self, key: tuple[str, bool], watch: Any) -> None:
        if watch is _FLAT:
            if self._flat is not None:
                self._flat.remove(key[0])
            return
        with contextlib.suppress(KeyError, OSError):
            self._observer.unschedule(watch)

    def _watch(self, path: str, recursive: bool) -> Any:
        if not recursive and self._flat is not None:
            self._flat.add(path)
            return _FLAT
        return self._observer.schedule(
            self._handler, path, recursive=recursive, event_filter=self._event_filter
        )

    def apply(self, plans: Sequence[WatchPlan], targets: Targets, *, check_stale: bool = True) -> Applied:
        recursive = {path for path, rec in targets if rec}
        wanted = {(path, rec) for path, rec in targets if rec or path not in recursive}
        applied = Applied()
        with self._lock:
            stale: set[tuple[str, bool]] = set()
            if check_stale:
                # A watched directory that was deleted (and maybe re-created under the same path,
                # even the same inode number) has lost its native watch: watchdog stops that emitter.
                live = {e.watch for e in self._observer.emitters if e.should_keep_running()}
                stale = {
                    key
                    for key, (watch, identity) in self._watches.items()
                    if self._lost(key, watch, live) or _identity(key[0]) != identity
                }
                self._failed.clear()  # retried now and then, not on every root added
            for key in (set(self._watches) - wanted) | stale:
                watch, _ = self._watches.pop(key)
                self._unwatch(key, watch)
            for key in sorted(wanted - set(self._watches) - self._failed):
                path, rec = key
                identity = _identity(path)
                if rec and not _walkable(path):
                    log.warning("%s holds too many folders: only its top folder is watched", path)
                    rec = False
                try:
                    watch = self._watch(path, rec)
                except OSError as error:
                    log.warning("cannot watch %s: %s", path, error)
                    self._failed.add(key)
                    continue
                self._watches[key] = (watch, identity)
                (applied.replaced if key in stale else applied.added).append(key)
        return applied


def _walkable(tree: str) -> bool:
    """Whether a recursive native watch of ``tree`` stays within the skill walk's limits (a
    skills folder linked to ``/`` would otherwise put a watch on every folder of the disk).
    Symlinked folders are not counted: watchdog does not follow them either."""
    budget = WalkBudget()
    for _ in walk_dirs(tree, budget, follow_symlinks=False):
        pass
    return budget.exceeded is None


def _identity(path: str) -> tuple[int, int] | None:
    try:
        result = os.stat(path)
    except OSError:
        return None
    return (result.st_dev, result.st_ino)


def _planned_files(plans: Iterable[WatchPlan]) -> Iterable[str]:
    for plan in plans:
        yield from plan.files
        for tree in plan.trees:
            yield from (path for path in iter_tree_files(tree) if plan.relevant(path, False))


def _snapshot(plans: Iterable[WatchPlan]) -> Snapshot:
    return snapshot(_planned_files(plans))


class PollingBackend:
    """Stat-based polling: compares snapshots of every planned path each ``interval`` seconds."""

    name = "poll"

    def __init__(self, sink: Sink, interval: float = 0.1) -> None:
        self._sink = sink
        self._interval = interval
        self._plans: tuple[WatchPlan, ...] = ()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._added_baseline: Snapshot | None = None

    def start(self) -> None:
        # The baseline is taken before start() returns: a change made right after it (on a loaded
        # machine, before the thread first runs) is then a change, not part of the baseline.
        self._stop.clear()
        with self._lock:
            plans = self._plans
        baseline = _snapshot(plans)
        self._thread = threading.Thread(
            target=self._run, args=(plans, baseline), name="pi-prompt-poll", daemon=True
        )
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def apply(self, plans: Sequence[WatchPlan], targets: Targets, *, check_stale: bool = True) -> Applied:
        # Running, the files the new plans cover get their baseline now, as start()'s do: left to
        # the next poll, a change made in between would be taken for the baseline and never heard.
        baseline = _snapshot(plans) if self._thread is not None else None
        with self._lock:
            self._plans = tuple(plans)
            if baseline is not None:
                self._added_baseline = {**(self._added_baseline or {}), **baseline}
        return Applied()

    def _run(self, plans: tuple[WatchPlan, ...], previous: Snapshot) -> None:
        while not self._stop.wait(self._interval):
            with self._lock:
                current_plans = self._plans
                added, self._added_baseline = self._added_baseline, None
            if added is not None:  # what was already watched keeps its own (older) baseline
                previous, plans = {**added, **previous}, current_plans
            try:
                current = _snapshot(current_plans)
            except Exception:  # pragma: no cover - a poll must never kill the thread
                log.exception("prompt watcher poll failed")
                continue
            changed = changed_paths(previous, current)
            # Paths that only became covered because the plan grew are a new baseline, not a change.
            changed = [p for p in changed if any(plan.relevant(p, False) for plan in plans)]
            previous, plans = current, current_plans
            if changed:
                self._sink(changed, False, "changed")
