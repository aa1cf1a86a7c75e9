"""done_before_abort: the race of a piece of work against a run's abort, shared by the tools, the
model call and the approval round trip."""

from __future__ import annotations

import asyncio

import pytest

from pi_lsp.aborts import done_before_abort


def _watchers() -> list[asyncio.Task[object]]:
    """Tasks still waiting on an abort event (the helper's watcher must never outlive its call)."""
    current = asyncio.current_task()
    return [task for task in asyncio.all_tasks() if task is not current and "Event.wait" in repr(task)]


async def test_work_that_ends_first_wins() -> None:
    abort = asyncio.Event()
    work = asyncio.ensure_future(asyncio.sleep(0.01, "done"))
    assert await done_before_abort(work, abort) is True
    assert work.result() == "done"
    await asyncio.sleep(0)
    assert _watchers() == []


async def test_an_abort_first_leaves_the_work_to_the_caller() -> None:
    abort = asyncio.Event()
    work = asyncio.ensure_future(asyncio.sleep(30))
    asyncio.get_running_loop().call_later(0.01, abort.set)
    assert await done_before_abort(work, abort) is False
    assert not work.done()  # each caller ends its work its own way
    work.cancel()
    await asyncio.sleep(0)
    assert _watchers() == []


async def test_a_timeout_is_neither() -> None:
    work: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    assert await done_before_abort(work, asyncio.Event(), timeout=0.01) is False
    await asyncio.sleep(0)
    assert _watchers() == []


async def test_a_cancelled_wait_takes_its_watcher_with_it() -> None:
    work: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    waiting = asyncio.ensure_future(done_before_abort(work, asyncio.Event()))
    await asyncio.sleep(0.01)
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    await asyncio.sleep(0)
    assert _watchers() == [] and not work.done()
