"""``$/progress`` for a request that came with a ``workDoneToken``."""

from __future__ import annotations

from typing import Any

from pi_lsp.service.notifications import send
from pi_lsp.service.registry import Client


class Progress:
    """``$/progress`` for a request that came with a ``workDoneToken`` (silent without one)."""

    def __init__(self, client: Client | None = None, token: int | str | None = None) -> None:
        self.client = client
        self.token = token
        self.started = False
        self.ended = False

    def _value(self, value: dict[str, Any]) -> None:
        if self.client is not None and self.token is not None and not self.ended:
            # Progress describes the request while it runs: it goes out before the response.
            send(self.client, "$/progress", {"token": self.token, "value": value}, before_response=True)

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
