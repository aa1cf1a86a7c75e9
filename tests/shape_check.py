"""Every test's real traffic checked against the protocol source (``pi_lsp/protocol``).

Installed once per test process by ``tests/conftest.py``: the two clients the tests talk to the
server with (pytest-lsp's ``LanguageClient`` through pygls, and ``RpcClient``) record every result
of a declared method, every declared notification (``pi/event`` included) and every
``pi/requestApproval`` that does not have its declared shape. Recording (instead of raising where
the message arrives, inside a reader task) never disturbs the traffic; the autouse fixture fails
the test at its end with the first problems found. So the whole server suite checks shapes.
"""

from __future__ import annotations

import asyncio
import functools
from concurrent.futures import Future
from typing import Any

from pygls.protocol.json_rpc import JsonRPCProtocol

from pi_lsp.client.rpc_client import RpcClient
from pi_lsp.protocol.check import notification_problem, result_problem

PROBLEMS: list[str] = []


def note(problem: str | None) -> None:
    if problem is not None:
        PROBLEMS.append(problem)


def take_problems() -> list[str]:
    found = list(PROBLEMS)
    PROBLEMS.clear()
    return found


class _CheckedQueue(asyncio.Queue[dict[str, Any]]):
    """``RpcClient.notifications``, checking each declared message as it is queued."""

    def put_nowait(self, item: dict[str, Any]) -> None:
        method = item.get("method")
        if isinstance(method, str):
            note(notification_problem(method, item.get("params")))
        super().put_nowait(item)


def install() -> None:
    """Wrap both clients (idempotent)."""
    if getattr(RpcClient, "_shapes_checked", False):
        return
    RpcClient._shapes_checked = True  # type: ignore[attr-defined]

    original_init = RpcClient.__init__
    original_request = RpcClient.request

    @functools.wraps(original_init)
    def init(self: RpcClient, *args: Any, **kwargs: Any) -> None:
        original_init(self, *args, **kwargs)
        self.notifications = _CheckedQueue()

    @functools.wraps(original_request)
    async def request(self: RpcClient, method: str, params: Any = None, **kwargs: Any) -> Any:
        result = await original_request(self, method, params, **kwargs)
        note(result_problem(method, result))
        return result

    RpcClient.__init__ = init  # type: ignore[method-assign]
    RpcClient.request = request  # type: ignore[method-assign]

    original_send = JsonRPCProtocol.send_request
    original_notification = JsonRPCProtocol._handle_notification
    original_handle_request = JsonRPCProtocol._handle_request

    def send_request(self: JsonRPCProtocol, method: str, *args: Any, **kwargs: Any) -> Future[Any]:
        future: Future[Any] = original_send(self, method, *args, **kwargs)

        def done(finished: Future[Any]) -> None:
            if not finished.cancelled() and finished.exception() is None:
                note(result_problem(method, finished.result()))

        future.add_done_callback(done)
        return future

    def handle_notification(self: JsonRPCProtocol, method_name: str, params: Any) -> None:
        note(notification_problem(method_name, params))
        original_notification(self, method_name, params)

    def handle_request(self: JsonRPCProtocol, msg_id: Any, method_name: str, params: Any) -> None:
        note(notification_problem(method_name, params))
        original_handle_request(self, msg_id, method_name, params)

    JsonRPCProtocol.send_request = send_request  # type: ignore[method-assign]
    JsonRPCProtocol._handle_notification = handle_notification  # type: ignore[method-assign]
    JsonRPCProtocol._handle_request = handle_request  # type: ignore[method-assign]
