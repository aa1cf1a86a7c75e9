"""JSON-RPC responses and their bytes, without pygls: shared by the protocol and the start-up phase.

A handler's outcome becomes one response: its result, the contract's error object for a domain
error, -32800 when it was cancelled, or -32603 without a traceback for anything unexpected. API
keys are redacted from every message and error datum that leaves the process. Bodies are written
by orjson (so results can embed ``orjson.Fragment`` bytes without re-encoding); what orjson cannot
write (integers beyond 64 bits) falls back to the standard library.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import Any

import orjson

from pi_lsp.secrets import redact
from pi_lsp.service.errors import INTERNAL_ERROR, REQUEST_CANCELLED, from_exception
from pi_lsp.session.jsonl import loads_line

log = logging.getLogger(__name__)

Default = Callable[[Any], Any]


def _plain(value: Any) -> Any:
    """Turn embedded fragments back into values (only for the rare non-orjson fallback)."""
    if isinstance(value, orjson.Fragment):
        contents = value.contents
        return loads_line(contents if isinstance(contents, bytes) else contents.encode())
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value]
    return value


def _redact_data(value: Any) -> Any:
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {key: _redact_data(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_redact_data(item) for item in value]
    return value


def encode(payload: Any, default: Default | None = None) -> bytes:
    """The message body: orjson, else the standard library (integers beyond 64 bits and the like)."""
    try:
        return orjson.dumps(payload, default=default)
    except TypeError:
        return json.dumps(_plain(payload), default=default, separators=(",", ":")).encode()


def error_payload(msg_id: Any, code: int, message: str, data: Any = None) -> dict[str, Any]:
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = _redact_data(data)
    return {"jsonrpc": "2.0", "id": msg_id, "error": error}


def outcome_payload(msg_id: Any, future: Any) -> dict[str, Any]:
    """The response to a request whose handler ``future`` (a task or a thread future) is done."""
    if future.cancelled():
        message = f"request {msg_id} was cancelled; nothing was written"
        return error_payload(msg_id, REQUEST_CANCELLED, message)
    error = future.exception()
    if error is None:
        return {"jsonrpc": "2.0", "id": msg_id, "result": future.result()}
    mapped = from_exception(error)
    if mapped is not None:
        log.debug("request %s failed: %s", msg_id, mapped.message)
        return error_payload(msg_id, mapped.code, redact(mapped.message), mapped.data)
    log.error("request %s failed unexpectedly", msg_id, exc_info=error)
    return error_payload(msg_id, INTERNAL_ERROR, redact(f"internal error: {type(error).__name__}: {error}"))
