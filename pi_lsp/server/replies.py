"""JSON-RPC responses and their bytes, without pygls: shared by the protocol and the start-up phase.

A handler's outcome becomes one response: its result, the contract's error object for a domain
error, -32800 when it was cancelled, or -32603 without a traceback for anything unexpected. API
keys are redacted from every message and error datum that leaves the process. Bodies are written
by orjson (so results can embed ``orjson.Fragment`` bytes without re-encoding, and a big context's
messages as :class:`~pi_lsp.json_parts.JsonParts` pieces); integers beyond 64 bits, which orjson
refuses, are written as their digits, and strings with a lone surrogate escaped as JSON allows.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import orjson

from pi_lsp.json_parts import Buffer, Default, encode_pieces
from pi_lsp.secrets import redact
from pi_lsp.service.errors import INTERNAL_ERROR, REQUEST_CANCELLED, from_exception

log = logging.getLogger(__name__)


def _writable(value: Any) -> Any:
    """The value with what orjson refuses as fragments of their JSON: integers beyond 64 bits, and
    strings holding a lone surrogate (JSON escapes it as ``\\udxxx``, as ``JSON.stringify`` does)."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return orjson.Fragment(json.dumps(value).encode())
        return value
    if isinstance(value, int) and not isinstance(value, bool) and not -(1 << 63) <= value < 1 << 64:
        return orjson.Fragment(b"%d" % value)
    if isinstance(value, dict):
        return {key: _writable(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_writable(item) for item in value]
    return value


def _redact_data(value: Any) -> Any:
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {key: _redact_data(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_redact_data(item) for item in value]
    return value


def encode(payload: Any, default: Default | None = None) -> list[Buffer]:
    """The message body, as the pieces to write in order (:mod:`pi_lsp.json_parts`), also when it
    holds what orjson refuses (:func:`_writable`: a client's request id beyond 64 bits, or a lone
    surrogate echoed from a client's params)."""
    try:
        return encode_pieces(payload, default)
    except TypeError:
        return encode_pieces(_writable(payload), default)


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
