"""Serving before pygls is loaded: a stdio editor's first session requests, answered at start-up.

pygls and lsprotocol take 0.3–0.5 s to import (most of it lsprotocol's type module: about a
thousand attrs classes), and an editor asks for its sessions right after ``initialize``. Instead
of making it wait, this phase answers the requests in :data:`EARLY_METHODS` with the same handlers
and the same error mapping, while pygls is imported once nothing else is waiting; then the
connection is handed to pygls.

Order is kept: the first message this phase does not answer itself (any LSP message but
``initialized``, any other method, anything malformed, the end of input) is held for pygls with
every message after it, and pygls receives them in arrival order. ``initialized`` is held without
holding back the requests after it: it only starts the system prompt's watching, which no session
request depends on. A ``$/cancelRequest`` for a request answered here cancels it here (-32800, as
under pygls), whatever is held; any other goes to pygls in its place.
Nothing here imports pygls or lsprotocol.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import orjson

from pi_lsp.framing import frame_pieces, write_pieces
from pi_lsp.secrets import redact
from pi_lsp.server.context import Context
from pi_lsp.server.handlers import METHODS
from pi_lsp.server.params import Params
from pi_lsp.server.replies import encode, error_payload, outcome_payload
from pi_lsp.service.errors import INTERNAL_ERROR
from pi_lsp.service.notifications import handling
from pi_lsp.service.registry import request_arrived

log = logging.getLogger(__name__)

EARLY_METHODS = frozenset(
    {
        "pi/listSessions",
        "pi/continueRecent",
        "pi/openSession",
        "pi/newSession",
        "pi/getSessionState",
        "pi/getTree",
        "pi/getBranch",
        "pi/getEntry",
        "pi/buildContext",
    }
)
"""Session requests an editor sends first; none needs pygls, the agent or the prompt service."""

_PASSED_OVER = "initialized"  # held for pygls, but later requests may still be answered here


class EarlyPhase:
    """One stdio connection before pygls: answers early requests, holds everything else."""

    def __init__(self, ctx: Context, writer: Any) -> None:
        self.ctx = ctx
        self._writer = writer  # ``write(bytes)``, and perhaps ``write_pieces`` (see framing)
        self.held: list[bytes | None] = []
        self.blocked = False  # a held message that later ones must not overtake
        self.pending: set[asyncio.Task[Any]] = set()
        self._by_id: dict[Any, asyncio.Task[Any]] = {}

    @property
    def idle(self) -> bool:
        return not self.pending

    def offer(self, body: bytes | None) -> None:
        """Answer ``body`` now if it is an early request; else hold it (None: end of input)."""
        message = _parse(body) if body is not None and (self._by_id or not self.blocked) else None
        if self._cancelled_here(message):
            return
        call = _early_call(message) if not self.blocked else None
        if call is not None:
            self._start(*call)
            return
        self.held.append(body)
        passed_over = message is not None and "id" not in message and message.get("method") == _PASSED_OVER
        if not passed_over:
            self.blocked = True

    def _cancelled_here(self, message: dict[str, Any] | None) -> bool:
        """Whether ``message`` is a ``$/cancelRequest`` of a request running here (now cancelled)."""
        if message is None or "id" in message or message.get("method") != "$/cancelRequest":
            return False
        params = message.get("params")
        target = params.get("id") if isinstance(params, dict) else None
        known = isinstance(target, str | int) and not isinstance(target, bool)
        task = self._by_id.get(target) if known else None
        if task is None:
            return False
        task.cancel()
        return True

    def notify(self, method: str, params: Any) -> None:
        """The client's notification sink until pygls takes over."""
        self._send({"jsonrpc": "2.0", "method": method, "params": params})

    def _start(self, msg_id: Any, method: str, params: Any) -> None:
        handler, ctx = METHODS[method], self.ctx

        async def call() -> Any:
            handling(ctx.client)  # its notifications wait for the response, as under pygls
            request_arrived()
            return await handler(ctx, Params(params))

        task = asyncio.get_running_loop().create_task(call())
        self.pending.add(task)
        self._by_id[msg_id] = task
        task.add_done_callback(lambda done: self._finish(msg_id, done))  # before any notification's

    def _finish(self, msg_id: Any, task: asyncio.Task[Any]) -> None:
        self.pending.discard(task)
        if self._by_id.get(msg_id) is task:
            del self._by_id[msg_id]
        payload = outcome_payload(msg_id, task)
        if not self._send(payload):
            message = redact("internal error: the result could not be encoded")
            self._send(error_payload(msg_id, INTERNAL_ERROR, message))

    def _send(self, payload: Any) -> bool:
        """Write one message; False when it could not be encoded."""
        try:
            body = encode(payload)
        except Exception:
            log.exception("could not encode a message")
            return False
        try:
            write_pieces(self._writer, frame_pieces(body))
        except (BrokenPipeError, ConnectionResetError):
            log.debug("the client has gone; a message was not delivered")
        return True


def _parse(body: bytes) -> dict[str, Any] | None:
    try:
        message = orjson.loads(body)
    except orjson.JSONDecodeError:
        return None  # pygls' reader is more tolerant, and answers what it cannot read
    if not isinstance(message, dict) or isinstance(message.get("id"), float):
        return None  # an id beyond 64 bits, read by orjson as a float: pygls' reader reads it exactly
    return message if message.get("jsonrpc") == "2.0" else None


def _early_call(message: dict[str, Any] | None) -> tuple[Any, str, Any] | None:
    """(id, method, params) of a well-formed request of :data:`EARLY_METHODS`, else None."""
    if message is None:
        return None
    msg_id, method = message.get("id"), message.get("method")
    if isinstance(msg_id, bool) or not isinstance(msg_id, str | int) or method not in EARLY_METHODS:
        return None
    return msg_id, method, message.get("params")
