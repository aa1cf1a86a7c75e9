"""Newline-delimited JSON-RPC 2.0, the framing of the Agent Client Protocol over stdio.

One message per line, UTF-8 JSON, no headers. Every request runs in its own task (a long
``session/prompt`` never holds up ``session/cancel`` or another session's requests); answers and
notifications leave through one :class:`~pi_lsp.outbox.BoundedOutbox`, so a client that stops
reading makes the connection end instead of the process buffering without bound.

Bad input is answered and the connection goes on: a line that is not JSON gets a parse error
(``-32700``, id null), a line that is JSON but no JSON-RPC message an invalid request (``-32600``), an
unknown method ``-32601``, a line longer than :data:`MAX_LINE_BYTES` a parse error while the rest
of that line is skipped.
"""

from __future__ import annotations

import asyncio
import contextvars
import itertools
import logging
from collections.abc import Awaitable, Callable
from typing import Any

import orjson

from pi_lsp.outbox import BoundedOutbox
from pi_lsp.protocol.enums import ERROR_CODES
from pi_lsp.secrets import redact
from pi_lsp.service.errors import INTERNAL_ERROR, PiError, from_exception

log = logging.getLogger(__name__)

PARSE_ERROR = ERROR_CODES["ParseError"]
INVALID_REQUEST = ERROR_CODES["InvalidRequest"]
METHOD_NOT_FOUND = ERROR_CODES["MethodNotFound"]
MAX_LINE_BYTES = 64 * 1024 * 1024
"""The longest message accepted (a prompt with a few images); a longer line is refused, skipped."""
READ_CHUNK = 256 * 1024

Handler = Callable[[Any], Awaitable[Any]]
NotificationHandler = Callable[[Any], None]


class RemoteError(Exception):
    """The client answered one of our requests with a JSON-RPC error."""

    def __init__(self, code: Any, message: str) -> None:
        super().__init__(message)
        self.code = code


class Connection:
    """One JSON-RPC peer: dispatches its requests and notifications, sends ours, matches answers."""

    def __init__(
        self,
        send: Callable[[bytes], Awaitable[None]],
        *,
        requests: dict[str, Handler],
        notifications: dict[str, NotificationHandler],
        on_lost: Callable[[], None] = lambda: None,
        write_now: Callable[[bytes], bool] | None = None,
        on_message: Callable[[], None] = lambda: None,
    ) -> None:
        self.requests = requests
        self._on_message = on_message  # each line received (the server's warm-up waits for quiet)
        self.notifications = notifications
        self.outbox = BoundedOutbox(send, self._lost, name="ACP client", write_now=write_now)
        self._on_lost = on_lost
        self._pending: dict[int, asyncio.Future[Any]] = {}
        self._ids = itertools.count(1)
        self._tasks: set[asyncio.Task[None]] = set()
        self.closed = asyncio.Event()

    # ------------------------------------------------------------------ sending

    def _write(self, message: dict[str, Any]) -> None:
        self.outbox.write(orjson.dumps(message) + b"\n")

    def notify(self, method: str, params: dict[str, Any]) -> None:
        self._write({"jsonrpc": "2.0", "method": method, "params": params})

    async def request(self, method: str, params: dict[str, Any]) -> Any:
        """Send a request and wait for its answer (RemoteError for an error answer)."""
        if self.closed.is_set():
            raise ConnectionError("the ACP client is gone")
        request_id = next(self._ids)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        try:
            self._write({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
            return await future
        finally:
            self._pending.pop(request_id, None)

    def _answer(self, request_id: Any, result: Any) -> None:
        self._write({"jsonrpc": "2.0", "id": request_id, "result": result})

    def _error(self, request_id: Any, code: int, message: str, data: Any = None) -> None:
        error: dict[str, Any] = {"code": code, "message": message}
        if data is not None:
            error["data"] = data
        self._write({"jsonrpc": "2.0", "id": request_id, "error": error})

    # ------------------------------------------------------------------ receiving

    async def serve(self, reader: asyncio.StreamReader) -> None:
        """Read lines until end of input (or the connection is lost), then end every pending request."""
        buffer = bytearray()
        skipping = False  # inside a line over the limit: drop until its newline
        closed = asyncio.ensure_future(self.closed.wait())
        try:
            while not self.closed.is_set():
                reading = asyncio.ensure_future(reader.read(READ_CHUNK))
                await asyncio.wait({reading, closed}, return_when=asyncio.FIRST_COMPLETED)
                if not reading.done():  # lost (a client that stopped reading): stop listening too
                    reading.cancel()
                    break
                chunk = reading.result()
                if not chunk:
                    break
                start = 0
                while (newline := chunk.find(b"\n", start)) >= 0:
                    piece = chunk[start:newline]
                    start = newline + 1
                    if skipping:
                        skipping = False
                        buffer.clear()
                        continue
                    buffer += piece
                    self.receive(bytes(buffer))
                    buffer.clear()
                if skipping:
                    continue
                buffer += chunk[start:]
                if len(buffer) > MAX_LINE_BYTES:
                    buffer.clear()
                    skipping = True
                    self._error(
                        None, PARSE_ERROR, f"a message is longer than {MAX_LINE_BYTES} bytes; skipped"
                    )
            if buffer.strip() and not skipping:
                self.receive(bytes(buffer))
        finally:
            closed.cancel()
            self._lost()

    def receive(self, line: bytes) -> None:
        """Act on one line: a request, a notification or an answer to one of ours."""
        if not line.strip():
            return
        self._on_message()
        try:
            message = orjson.loads(line)
        except orjson.JSONDecodeError as error:
            self._error(None, PARSE_ERROR, f"parse error: the line is not JSON ({error.args[0][:80]})")
            return
        if isinstance(message, list):  # batches are not part of ACP
            self._error(None, INVALID_REQUEST, "batches are not supported: send one message per line")
            return
        if not isinstance(message, dict):
            self._error(None, INVALID_REQUEST, "invalid request: a message must be a JSON object")
            return
        method = message.get("method")
        has_id = "id" in message
        request_id = message.get("id")
        if has_id and not _valid_id(request_id):
            self._error(None, INVALID_REQUEST, "invalid request: id must be a string, an integer or null")
            return
        if method is None and has_id:
            self._take_answer(request_id, message)
            return
        if not isinstance(method, str):
            self._error(
                request_id if has_id else None, INVALID_REQUEST, "invalid request: method must be a string"
            )
            return
        params = message.get("params")
        if not has_id:
            self._notification(method, params)
            return
        handler = self.requests.get(method)
        if handler is None:
            self._error(request_id, METHOD_NOT_FOUND, f"method not found: {method}")
            return
        task = asyncio.get_running_loop().create_task(
            self._run(handler, request_id, method, params), context=contextvars.Context()
        )
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _notification(self, method: str, params: Any) -> None:
        handler = self.notifications.get(method)
        if handler is None:
            log.debug("ignoring the notification %s", method)
            return
        try:
            handler(params)
        except PiError as error:
            log.info("notification %s refused: %s", method, error.message)
        except Exception:
            log.exception("notification %s failed", method)

    async def _run(self, handler: Handler, request_id: Any, method: str, params: Any) -> None:
        try:
            result = await handler(params)
        except asyncio.CancelledError:
            if not self.closed.is_set():
                self._error(request_id, INTERNAL_ERROR, f"{method} was cancelled")
            raise
        except Exception as error:
            mapped = error if isinstance(error, PiError) else from_exception(error)
            if mapped is None:
                log.exception("%s failed", method)
                self._error(request_id, INTERNAL_ERROR, f"{method} failed: {redact(str(error))}")
            else:
                self._error(request_id, mapped.code, redact(mapped.message), mapped.data)
            return
        self._answer(request_id, result)

    def _take_answer(self, request_id: Any, message: dict[str, Any]) -> None:
        future = self._pending.get(request_id) if isinstance(request_id, int) else None
        if future is None or future.done():
            log.debug("an answer to no pending request (%r); ignored", request_id)
            return
        error = message.get("error")
        if isinstance(error, dict):
            future.set_exception(RemoteError(error.get("code"), str(error.get("message", "error"))))
        else:
            future.set_result(message.get("result"))

    def _lost(self) -> None:
        """End of input or a client that does not read: fail our pending requests, stop."""
        if self.closed.is_set():
            return
        self.closed.set()
        for future in self._pending.values():
            if not future.done():
                future.set_exception(ConnectionError("the ACP client is gone"))
        self._on_lost()

    async def settle(self, timeout: float) -> None:
        """Wait (at most ``timeout`` seconds) for the requests in progress to be answered."""
        if self._tasks:
            await asyncio.wait(list(self._tasks), timeout=timeout)

    async def aclose(self) -> None:
        """Stop the request tasks, send what is queued (briefly), then stop sending."""
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.wait(list(self._tasks), timeout=5)
        await self.outbox.flush(2.0)
        self.outbox.close()


def _valid_id(value: Any) -> bool:
    return value is None or isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))
