"""The worker threads that run session work: a fixed number at a time, never holding the server.

A plain ``ThreadPoolExecutor`` has two ways to hold the server for good: a job stuck in blocking
I/O (a hung file system, a lock another process never releases) keeps its thread, so four such
jobs fill the pool; and interpreter exit joins every worker, so the process never exits. Here:

* :meth:`WorkerPool.abandon` — the caller gave up on a running job (its request was cancelled):
  the job's thread stops counting against the limit and another thread takes the waiting work.
  The abandoned thread ends when its job does. At most ``MAX_THREADS`` threads exist in all, so a
  flood of stuck jobs is bounded too (then new work waits, as in a full pool).
* Threads are daemon threads and :meth:`WorkerPool.shutdown` waits for running jobs only up to a
  timeout, so the process always exits.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import Executor, Future
from typing import Any, TypeVar

T = TypeVar("T")
MAX_THREADS = 32


class WorkerPool(Executor):
    """``workers`` jobs at a time, in submission order, on daemon threads (see the module docstring)."""

    def __init__(self, workers: int, name: str) -> None:
        self._limit = workers
        self._name = name
        self._cond = threading.Condition()
        self._jobs: deque[tuple[Future[Any], Callable[[], Any]]] = deque()
        self._counted = 0  # threads counted against the limit
        self._idle = 0
        self._threads: set[threading.Thread] = set()
        self._running: dict[Future[Any], threading.Thread] = {}
        self._abandoned: set[threading.Thread] = set()
        self._closed = False

    def submit(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> Future[T]:
        future: Future[T] = Future()
        with self._cond:
            if self._closed:
                raise RuntimeError("the worker pool is shut down")
            self._jobs.append((future, lambda: fn(*args, **kwargs)))
            self._wake()
        return future

    def abandon(self, future: Future[Any]) -> None:
        """The caller no longer waits for ``future``: if it is running, free its slot."""
        with self._cond:
            thread = self._running.get(future)
            if thread is None or thread in self._abandoned or len(self._threads) >= MAX_THREADS:
                return
            self._abandoned.add(thread)
            self._counted -= 1
            if self._jobs:
                self._wake()

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False, timeout: float = 5.0) -> None:
        """No new work; queued work is cancelled; running jobs get up to ``timeout`` seconds
        (``wait``) and are then left to end on their own (daemon threads do not hold exit)."""
        with self._cond:
            self._closed = True
            while self._jobs:
                self._jobs.popleft()[0].cancel()
            self._cond.notify_all()
            threads = list(self._threads)
        if not wait:
            return
        deadline = time.monotonic() + timeout
        for thread in threads:
            thread.join(max(0.0, deadline - time.monotonic()))

    @property
    def stuck(self) -> int:
        """Jobs still running after their callers gave up (for logs and tests)."""
        with self._cond:
            return len(self._abandoned)

    # ------------------------------------------------------------------ threads

    def _wake(self) -> None:
        """Hand the next job to an idle thread or a new one (called holding the condition).

        ``_idle`` still counts a thread woken for an earlier job until it runs: with fewer idle
        threads than queued jobs a new thread starts (while the limit allows), else a second job
        submitted before the woken thread ran would wait behind the first job's whole run."""
        if self._idle >= len(self._jobs):
            self._cond.notify()
        elif self._counted < self._limit and len(self._threads) < MAX_THREADS:
            self._counted += 1
            name = f"{self._name}-{len(self._threads)}"
            thread = threading.Thread(target=self._work, name=name, daemon=True)
            self._threads.add(thread)
            thread.start()
        elif self._idle > 0:
            self._cond.notify()

    def _work(self) -> None:
        me = threading.current_thread()
        while True:
            with self._cond:
                while not self._jobs and not self._closed:
                    self._idle += 1
                    self._cond.wait()
                    self._idle -= 1
                if not self._jobs:
                    self._threads.discard(me)
                    self._counted -= 1
                    return
                future, job = self._jobs.popleft()
                if not future.set_running_or_notify_cancel():
                    continue
                self._running[future] = me
            try:
                future.set_result(job())
            except BaseException as error:
                future.set_exception(error)
            with self._cond:
                del self._running[future]
                if me in self._abandoned:  # its slot went to another thread meanwhile
                    self._abandoned.discard(me)
                    self._threads.discard(me)
                    return
