"""Loading what a first prompt needs while the user is still typing it.

A fresh server answers its first session requests in ~140 ms because the agent, its tools and the
Anthropic SDK load on first use (docs/benchmarks.md, "Start-up"). The SDK alone is ~1.3 s of CPU
to import (hundreds of pydantic models), and a user's first prompt used to wait that long before
its request went out. pi pays the same cost before its first prompt too, at its own start.

So once a server has been quiet for the seconds ``PI_LSP_WARM_UP`` gives (``on``:
:data:`QUIET_SECONDS`) after its start-up, the run service is built and the SDK imported, in a
worker thread, as the first prompt would have. While messages keep coming it waits; a prompt that
arrives during the warm-up waits for the same build (:meth:`PiService.build_off_loop`, and the
import lock for the SDK) rather than doing it again.

It is on by default; ``PI_LSP_WARM_UP=off`` (or ``0``) turns it off. For a while it was off
unless asked for: with it on, test servers that had warmed up left a request unanswered (a
``pi/getBranch``; under a stress run, a ``pi/buildContext``) while every thread of the process
was idle, and the client's next request (``shutdown``) went unanswered too. Two fixes since
match that: services build under their own locks, and the worker pool starts a thread for a job
submitted before the woken one ran (both in 16ac50d); and the stdio server's output is written
whole (:mod:`pi_lsp.full_writes`: a raw stdout under ``PYTHONUNBUFFERED`` dropped the rest of a
big answer whose write a stop interrupted, which tears the stream exactly so: that answer and
every later one are lost while all threads idle). Since then the whole suite and 26 stress runs
with the warm-up on everywhere have passed (docs/benchmarks.md), where before both failed.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Awaitable, Callable, Mapping
from typing import Final

log = logging.getLogger(__name__)

QUIET_SECONDS: Final = 0.5
"""How long no message may arrive before the warm-up starts: past the start-up's burst of requests
(an editor's come within ~0.2 s), well within the time it takes to type a first prompt."""
ENV: Final = "PI_LSP_WARM_UP"


def quiet_seconds(environ: Mapping[str, str] = os.environ) -> float | None:
    """The quiet ``PI_LSP_WARM_UP`` asks for: None (off) for ``0``, ``off``, ``false``, ``no``, a
    negative number or NaN; its seconds for a positive number; else (unset, ``on``, ``true``,
    ``yes``, unreadable) :data:`QUIET_SECONDS`."""
    value = environ.get(ENV, "").strip().lower()
    if value in ("off", "false", "no"):
        return None
    try:
        seconds = float(value)
    except ValueError:
        return QUIET_SECONDS
    if seconds != seconds or seconds <= 0:  # NaN, zero, negative: off
        return None
    return seconds


class WarmUp:
    """Runs ``warm`` once, on the event loop, when :meth:`touch` has not been called for ``quiet``
    seconds (None: never, see :func:`quiet_seconds`); the first :meth:`touch` (a connection's
    start) starts the wait."""

    def __init__(self, warm: Callable[[], Awaitable[None]], quiet: float | None) -> None:
        self._warm = warm
        self._quiet = quiet
        self._last = 0.0
        self._task: asyncio.Task[None] | None = None
        self.done = False

    def touch(self) -> None:
        """A message arrived (or a connection started): wait ``quiet`` seconds more. Event loop only."""
        if self._quiet is None or self.done:
            return
        loop = asyncio.get_running_loop()
        self._last = loop.time()
        if self._task is None:
            self._task = loop.create_task(self._when_quiet(), name="pi-lsp warm-up")

    async def _when_quiet(self) -> None:
        loop = asyncio.get_running_loop()
        quiet = self._quiet or 0.0
        while (left := self._last + quiet - loop.time()) > 0:
            await asyncio.sleep(left)
        started = loop.time()
        try:
            await self._warm()
        except Exception:  # the first prompt builds what is missing and reports what fails
            log.warning("the warm-up failed; the first prompt will load what it needs", exc_info=True)
        else:
            log.debug("warmed up for the first prompt in %.0f ms", (loop.time() - started) * 1000)
        finally:
            self.done = True

    async def aclose(self) -> None:
        """Server exit: stop waiting (a build already under way finishes in its worker)."""
        self.done = True
        task, self._task = self._task, None
        if task is not None and not task.done():
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
