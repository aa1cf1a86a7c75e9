"""Waiting for a piece of work or a run's abort, whichever comes first.

The agent's tools, the model call and the approval round trip all race their work against the
run's abort event; each then ends the work its own way (cancel it, kill a process, answer deny).
"""

from __future__ import annotations

import asyncio
from typing import Any


async def done_before_abort(
    work: asyncio.Future[Any], abort: asyncio.Event, timeout: float | None = None
) -> bool:
    """Wait until ``work`` is done, ``abort`` is set or ``timeout`` seconds pass; True when ``work``
    is done. ``work`` itself is left running otherwise (and if this wait is cancelled); the watch
    on ``abort`` never outlives the call."""
    aborting = asyncio.ensure_future(abort.wait())
    try:
        await asyncio.wait({work, aborting}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
    finally:
        aborting.cancel()
    return work.done()
