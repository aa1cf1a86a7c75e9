"""pygls' LSP protocol with the changes a JSON API server needs.

* Custom-method params arrive as the raw JSON (dicts, lists, ``None``) instead of pygls' lossy
  namedtuples (which rename keys like ``from`` or ``my-key``), and only the top-level message is
  structured: a params object that happens to contain ``"jsonrpc"`` is just data.
* ``$/cancelRequest`` reaches a request only once its handler has started (see
  :meth:`PiProtocol._handle_cancel_notification`).
* Every request is answered: a missing ``params`` member, a malformed message, a bad id or LSP params
  that do not validate get a JSON-RPC error instead of silence (pygls 2.1.1 drops such requests).
* Output goes through orjson, so results can embed ``orjson.Fragment`` bytes (stored entries,
  context messages, the pre-built tree) without re-encoding them; lengths are byte lengths.
* Domain errors become the contract's error objects in one place; unexpected exceptions become
  -32603 without tracebacks, and API keys are redacted from anything that leaves the process.
"""

from __future__ import annotations

import asyncio
import enum
import inspect
import json
import logging
from collections.abc import Callable, Generator
from concurrent.futures import Future
from typing import Any

import attrs
import orjson
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.protocol import LanguageServerProtocol, lsp_method
from pygls.protocol.json_rpc import JsonRPCNotification, JsonRPCRequestMessage, JsonRPCResponseMessage, MsgId

from pi_lsp.framing import frame_pieces, write_pieces
from pi_lsp.protocol.enums import ERROR_CODES
from pi_lsp.secrets import redact
from pi_lsp.server.capabilities import initialize_result
from pi_lsp.server.replies import encode, error_payload, outcome_payload
from pi_lsp.service.errors import INTERNAL_ERROR
from pi_lsp.session.jsonl import loads_line

log = logging.getLogger(__name__)

PARSE_ERROR = ERROR_CODES["ParseError"]
INVALID_REQUEST = ERROR_CODES["InvalidRequest"]


def _valid_id(value: Any) -> bool:
    return value is None or isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def _loads(body: bytes) -> Any:
    """orjson first; the tolerant reader for big integers, lone surrogates or invalid UTF-8.
    orjson reads an integer beyond 64 bits as a float: an id that came out one is read again
    exactly, since a response must carry its request's id as sent."""
    try:
        data = orjson.loads(body)
        if not (isinstance(data, dict) and isinstance(data.get("id"), float)):
            return data
        return json.loads(body)  # the standard library reads integers exactly
    except orjson.JSONDecodeError:
        pass
    try:
        return loads_line(body)
    except RecursionError as error:
        raise ValueError("the message is nested too deeply") from error


class PiProtocol(LanguageServerProtocol):
    """One connection's protocol; the transport feeds it message bodies via :meth:`receive`."""

    def __init__(self, server: Any, converter: Any) -> None:
        super().__init__(server, converter)
        self.suppressed_responses: set[MsgId] = set()
        self.on_exit: Callable[[], None] | None = None
        self._pending_writes: set[asyncio.Future[Any]] = set()
        self._shutdown_ids: set[MsgId] = set()
        self._client_requests: set[MsgId] = set()  # ids of the client's requests not answered yet
        self.on_message: Callable[[], None] = lambda: None  # each message received (the warm-up's clock)

    # ------------------------------------------------------------------ input

    def receive(self, body: bytes) -> None:
        """Handle one message body (the transport has already removed the headers)."""
        self.on_message()
        try:
            data = _loads(body)
        except ValueError as error:
            self._write_error(None, PARSE_ERROR, f"parse error: {error}")
            return
        if not isinstance(data, dict):
            self._write_error(
                None, INVALID_REQUEST, "a message must be a JSON object (batches are not supported)"
            )
            return
        message = self._structure(data)
        if message is not None:
            self.handle_message(message)

    def _structure(self, data: dict[str, Any]) -> Any:
        has_id = "id" in data
        msg_id = data.get("id")
        method = data.get("method")
        if has_id and not _valid_id(msg_id):
            self._write_error(None, INVALID_REQUEST, "id must be a string or an integer")
            return None
        if data.get("jsonrpc") != "2.0":
            if has_id and isinstance(method, str):
                self._write_error(msg_id, INVALID_REQUEST, 'jsonrpc must be "2.0"')
            else:
                log.warning("ignoring a message without jsonrpc 2.0")
            return None
        if "method" in data:
            if not isinstance(method, str):
                if has_id:
                    self._write_error(msg_id, INVALID_REQUEST, "method must be a string")
                return None
            return self._structure_call(data, method, has_id, msg_id)
        if has_id and ("result" in data or "error" in data):
            try:
                return self.structure_message(data)
            except Exception:
                log.warning("ignoring a malformed response to request %r", msg_id)
                return None
        if has_id:
            self._write_error(msg_id, INVALID_REQUEST, "a request needs a method")
        return None

    def _structure_call(self, data: dict[str, Any], method: str, has_id: bool, msg_id: Any) -> Any:
        message_type = self.get_message_type(method)
        if message_type is None:  # a pi/ method (or unknown): keep the params exactly as sent
            params = data.get("params")
            if has_id:
                return JsonRPCRequestMessage(id=msg_id, method=method, jsonrpc="2.0", params=params)
            return JsonRPCNotification(method=method, jsonrpc="2.0", params=params)
        try:
            message = self._converter.structure(data, message_type)
        except Exception:
            if has_id:
                self._write_error(msg_id, -32602, f"invalid params for {method}")
            else:
                log.warning("ignoring notification %s with invalid params", method)
            return None
        if has_id and not hasattr(message, "id"):
            self._write_error(msg_id, INVALID_REQUEST, f"{method} is a notification and must not carry an id")
            return None
        return message

    def handle_message(self, message: Any) -> None:
        if self._shutdown and hasattr(message, "id") and getattr(message, "method", types.EXIT) != types.EXIT:
            self._write_error(message.id, INVALID_REQUEST, "the server is shutting down")
            return
        if hasattr(message, "id") and hasattr(message, "method"):
            self._client_requests.add(message.id)
            if len(self._client_requests) > 4096:  # ids answered without a handler (unknown methods)
                self._client_requests &= self._request_futures.keys()
            if message.method == types.SHUTDOWN:
                self._shutdown_ids.add(message.id)
        super().handle_message(message)

    def _handle_cancel_notification(self, msg_id: MsgId) -> None:
        """``$/cancelRequest`` lands once the request's handler has taken its first step (a loop
        turn later), never before: a request cancelled right behind it (a stop pressed at once) is
        cancelled as its handler cancels, e.g. ``pi/prompt`` aborts its run and answers with it,
        instead of ending unseen with -32800 while a ``pi/abort`` sent as fast would have aborted."""
        cancel = super()._handle_cancel_notification
        asyncio.get_running_loop().call_soon(cancel, msg_id)

    # ------------------------------------------------------------------ results and errors

    def _send_handler_result(self, future: Future[Any], *, msg_id: MsgId) -> None:
        """Map the handler's outcome onto the response (pygls would log every error as a crash)."""
        self._request_futures.pop(msg_id, None)
        self._client_requests.discard(msg_id)
        error = None if future.cancelled() else future.exception()
        if isinstance(error, JsonRpcException):
            self._write_error(msg_id, error.code, redact(error.message), error.data)
            return
        payload = outcome_payload(msg_id, future)
        if "result" in payload:
            self._send_response(msg_id, result=payload["result"])
        else:
            self._write_payload(payload)

    # ------------------------------------------------------------------ LSP lifecycle

    @lsp_method(types.INITIALIZE)
    def lsp_initialize(self, params: types.InitializeParams) -> Generator[Any, Any, types.InitializeResult]:
        """pygls' initialize (workspace, user handler), answering our fixed capabilities."""
        yield from super().lsp_initialize(params)
        result: types.InitializeResult = self._converter.structure(
            initialize_result(), types.InitializeResult
        )
        return result

    @lsp_method(types.SHUTDOWN)
    def lsp_shutdown(self, *args: Any) -> Generator[Any, Any, None]:
        """pygls' shutdown (user handler, then cancel other requests), made safe for two shutdowns.

        Neovim 0.7 sends ``shutdown`` twice when it quits (the plugin stops its client, then
        Neovim's own exit handler stops every client). pygls cancelled everything in its request
        table but the current request: the other shutdown, whose cancellation removes its entry
        at once (concurrent futures run their callbacks synchronously), so the loop died with
        "dictionary changed size during iteration" and was answered -32603; and the other
        shutdown's own handler step, which pygls keeps in the same table under a made-up id.
        Here only the client's own pending requests are cancelled, from a copy, never another
        shutdown: both shutdowns get ``null``.
        """
        if (user_handler := self.fm.features.get(types.SHUTDOWN)) is not None:
            yield user_handler, args, None
        current_id = self.msg_id
        self._shutdown_ids.discard(current_id)
        for msg_id in list(self._client_requests):
            future = self._request_futures.get(msg_id)
            if msg_id in self._shutdown_ids or msg_id == current_id or future is None:
                continue
            if not future.done():
                future.cancel()
        self._shutdown = True

    def _run_generator(
        self, future: Future[Any] | None, *, gen: Generator[Any, Any, Any], result_future: Future[Any]
    ) -> None:
        """pygls' step of a built-in handler, ending quietly when the step it waited for was
        cancelled (the editor went away during ``shutdown``: pygls logged a traceback)."""
        if future is not None and future.cancelled():
            gen.close()
            result_future.cancel()
            return
        super()._run_generator(future, gen=gen, result_future=result_future)

    @lsp_method(types.EXIT)
    def lsp_exit(self, *args: Any) -> Generator[Any, Any, None]:
        """Over TCP/WebSocket ``exit`` ends this connection only, not the shared server."""
        if self.on_exit is None:
            yield from super().lsp_exit(*args)
            return
        if (user_handler := self.fm.features.get(types.EXIT)) is not None:
            yield user_handler, args, None
        self.on_exit()

    # ------------------------------------------------------------------ output

    def notify(self, method: str, params: Any | None = None) -> None:
        """Plain-JSON params are sent as they are, also for LSP methods such as ``$/progress``
        (pygls would wrap them in its typed notification and fail to encode a dict)."""
        if isinstance(params, dict):  # straight to the wire: a streamed run sends one per delta
            self._write_payload({"jsonrpc": "2.0", "method": method, "params": params})
            return
        super().notify(method, params)

    def _write_error(self, msg_id: MsgId | None, code: int, message: str, data: Any = None) -> None:
        self._write_payload(error_payload(msg_id, code, message, data))

    def _payload(self, data: Any) -> Any:
        if isinstance(data, JsonRPCResponseMessage):
            return {"jsonrpc": "2.0", "id": data.id, "result": data.result}
        if isinstance(data, JsonRPCNotification):
            payload = {"jsonrpc": "2.0", "method": data.method}
            if data.params is not None:
                payload["params"] = data.params
            return payload
        if isinstance(data, JsonRPCRequestMessage):
            return {"jsonrpc": "2.0", "id": data.id, "method": data.method, "params": data.params}
        if attrs.has(type(data)):
            return self._converter.unstructure(data)
        return data

    def _default(self, value: Any) -> Any:
        if attrs.has(type(value)):
            return self._converter.unstructure(value)
        if isinstance(value, enum.Enum):
            return value.value
        if isinstance(value, set | frozenset):
            return list(value)
        raise TypeError(f"cannot encode {type(value).__name__}")

    def _send_data(self, data: Any) -> None:
        if not data:
            return
        if (
            self.suppressed_responses
            and not hasattr(data, "method")
            and getattr(data, "id", None) in self.suppressed_responses
        ):
            self.suppressed_responses.discard(data.id)
            return
        self._write_payload(self._payload(data))

    def _write_payload(self, payload: Any) -> None:
        if self.writer is None:
            log.error("no transport to send on")
            return
        try:
            body = encode(payload, self._default)
        except Exception as error:
            log.exception("could not encode a message")
            if (
                isinstance(payload, dict)
                and "id" in payload
                and "method" not in payload
                and "error" not in payload
            ):
                message = redact(f"internal error: the result could not be encoded: {error}")
                self._write_error(payload["id"], INTERNAL_ERROR, message)
            return
        try:
            if not self._include_headers:
                result = self.writer.write(b"".join(body))  # a single piece is passed on uncopied
            else:
                result = write_pieces(self.writer, frame_pieces(body))
        except (BrokenPipeError, ConnectionResetError):
            log.debug("the client has gone; a message was not delivered")
            return
        if inspect.isawaitable(result):
            task = asyncio.ensure_future(result)
            self._pending_writes.add(task)
            task.add_done_callback(self._pending_writes.discard)
