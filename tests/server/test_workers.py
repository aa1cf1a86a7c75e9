"""The session worker pool: a job its caller gave up on no longer holds a slot; exit never waits long."""

from __future__ import annotations

import threading
import time

import pytest

from pi_lsp.service.workers import WorkerPool


def test_abandoned_jobs_free_their_slots_and_shutdown_does_not_wait_for_them() -> None:
    pool = WorkerPool(2, "test-pool")
    release = threading.Event()
    stuck = [pool.submit(release.wait) for _ in range(2)]
    time.sleep(0.1)
    waiting = pool.submit(lambda: "ran")
    time.sleep(0.1)
    assert not waiting.done()  # the pool is full of stuck jobs
    for job in stuck:
        pool.abandon(job)
    assert waiting.result(timeout=5) == "ran"  # their slots went to the waiting work
    assert pool.stuck == 2
    started = time.monotonic()
    queued = [pool.submit(release.wait) for _ in range(3)]
    pool.shutdown(timeout=0.5)
    assert time.monotonic() - started < 3
    assert any(job.cancelled() for job in queued)
    with pytest.raises(RuntimeError):
        pool.submit(lambda: None)
    release.set()
    for job in stuck:
        assert job.result(timeout=5) is True  # abandoned jobs still end normally


def test_jobs_run_in_order_and_report_errors() -> None:
    pool = WorkerPool(1, "test-pool")
    seen: list[int] = []
    jobs = [pool.submit(seen.append, number) for number in range(20)]
    failing = pool.submit(lambda: 1 / 0)
    for job in jobs:
        job.result(timeout=5)
    assert seen == list(range(20))
    with pytest.raises(ZeroDivisionError):
        failing.result(timeout=5)
    pool.shutdown()


def test_work_submitted_together_gets_a_thread_each_while_slots_are_free() -> None:
    """Two jobs submitted before the one idle thread woke: the second must not wait behind the
    first (a long build, e.g. the warm-up's) while the pool may still start threads."""
    pool = WorkerPool(4, "test-pool")
    assert pool.submit(lambda: None).result(timeout=5) is None  # one thread, now idle
    time.sleep(0.1)
    release = threading.Event()
    with pool._cond:  # both land before the idle thread can take the first
        long = pool.submit(release.wait)
        short = pool.submit(lambda: "ran")
    try:
        assert short.result(timeout=5) == "ran"
    finally:
        release.set()
        assert long.result(timeout=5) is True
        pool.shutdown()
