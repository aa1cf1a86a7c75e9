"""When a notification goes out: the one rule, in one place.

**A notification caused by a client's request goes out after that request's response.** An editor
that sends ``pi/appendEntry`` sees the result first, then ``pi/sessionChanged``. The server marks
each request's task with :func:`handling`; :func:`send` holds a notification for that client until
the task is done (its response written).

Two exceptions, each explicit at its call site:

* ``before_response=True``: progress (``$/progress``) and ``pi/compactionStarted`` /
  ``pi/compactionEnded`` of a ``pi/compact`` describe the request while it runs, so they go out at
  once, in order with everything else on the event loop.
* Work started with :func:`spawn` runs outside any request (auto-compaction, the prompt watcher):
  what it sends goes out at once. :func:`after_response` starts such work once the current request
  has been answered.

Every service sends through :func:`send`; nothing else calls ``Client.notify`` (the connection's raw
sink, set by the server).
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
from collections.abc import Callable, Coroutine
from typing import Any

from pi_lsp.service.registry import Client

log = logging.getLogger(__name__)

_handling: contextvars.ContextVar[Client | None] = contextvars.ContextVar("pi_lsp_handling", default=None)


def handling(client: Client) -> None:
    """Mark the current task as handling a request of ``client`` (called by the server per request)."""
    _handling.set(client)


def send(client: Client, method: str, params: dict[str, Any], *, before_response: bool = False) -> None:
    """Send a notification to ``client`` under the rule above; a failing client is logged, not raised."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:  # no event loop (a service used synchronously): nothing to wait for
        _deliver(client, method, params)
        return
    if before_response:
        loop.call_soon(_deliver, client, method, params, context=contextvars.Context())
        return
    if _handling.get() is client:  # first: a run's stream (outside any request) skips the task lookup
        task = asyncio.current_task()
        if task is not None and not task.done():
            task.add_done_callback(lambda _task: _deliver(client, method, params))
            return
    _deliver(client, method, params)


def after_response(fn: Callable[[], None]) -> None:
    """Run ``fn`` once the current request has been answered (soon, outside a request)."""
    task = asyncio.current_task()
    if task is not None and not task.done():
        task.add_done_callback(lambda _task: fn())
    else:
        asyncio.get_running_loop().call_soon(fn)


def spawn(coroutine: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
    """Run ``coroutine`` in the background, outside any request: its notifications go out at once."""
    return asyncio.get_running_loop().create_task(coroutine, context=contextvars.Context())


def _deliver(client: Client, method: str, params: dict[str, Any]) -> None:
    try:
        client.notify(method, params)
    except Exception:
        log.exception("could not send %s to client %s", method, client.id)
