"""``$/progress`` and notifications that must go out before the current request's response."""

from __future__ import annotations

import asyncio
import contextvars
import logging
from typing import Any

from pi_lsp.service.registry import Client

log = logging.getLogger(__name__)


def notify_now(client: Client, method: str, params: dict[str, Any]) -> None:
    """Send a notification right away, even from inside a request handler.

    The connection's notifier holds notifications caused by a request until its response is out;
    progress and compaction events belong *before* the response, so they are sent from a fresh
    context (scheduled in order with everything else on the loop).
    """
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        client.notify(method, params)
        return
    loop.call_soon(_send, client, method, params, context=contextvars.Context())


def _send(client: Client, method: str, params: dict[str, Any]) -> None:
    try:
        client.notify(method, params)
    except Exception:
        log.exception("could not send %s to client %s", method, client.id)


class Progress:
    """``$/progress`` for a request that came with a ``workDoneToken`` (silent without one)."""

    def __init__(self, client: Client | None = None, token: int | str | None = None) -> None:
        self.client = client
        self.token = token
        self.started = False
        self.ended = False

    def _value(self, value: dict[str, Any]) -> None:
        if self.client is not None and self.token is not None and not self.ended:
            notify_now(self.client, "$/progress", {"token": self.token, "value": value})

    def begin(self, title: str, message: str | None = None) -> None:
        value: dict[str, Any] = {"kind": "begin", "title": title, "cancellable": True}
        if message:
            value["message"] = message
        self._value(value)
        self.started = True

    def report(self, message: str, percentage: int | None = None) -> None:
        value: dict[str, Any] = {"kind": "report", "message": message}
        if percentage is not None:
            value["percentage"] = percentage
        self._value(value)

    def end(self, message: str | None = None) -> None:
        value: dict[str, Any] = {"kind": "end"}
        if message:
            value["message"] = message
        self._value(value)
        self.ended = True
