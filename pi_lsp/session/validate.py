"""Validation of client-built entries and messages, with errors that name the offending field.

Only what pi's readers rely on is required; unknown extra fields are kept (lossless).
"""

from __future__ import annotations

import binascii
from collections.abc import Mapping
from typing import Any

from pi_lsp.session.errors import InvalidEntryError
from pi_lsp.session.ids import now_ms

ENTRY_TYPES = (
    "message",
    "model_change",
    "thinking_level_change",
    "custom",
    "custom_message",
    "session_info",
    "label",
    "compaction",
    "branch_summary",
)
MESSAGE_ROLES = ("user", "assistant", "toolResult", "bashExecution", "custom")
STOP_REASONS = ("stop", "length", "toolUse", "error", "aborted")
SERVER_FIELDS = ("id", "parentId", "timestamp")
IMAGE_MIME_TYPES = ("image/jpeg", "image/png", "image/gif", "image/webp")
"""The image types the model (Anthropic's API) accepts: any other is refused by the API, after the
message is already in the session."""


def is_base64(text: str) -> bool:
    """Whether ``text`` is standard, padded base64 without whitespace (what the API decodes)."""
    if not text.isascii():
        return False
    try:
        binascii.a2b_base64(text, strict_mode=True)
    except binascii.Error:
        return False
    return True


def image_problem(block: Mapping[str, Any]) -> tuple[str, str] | None:
    """(field, what it must be) for the first bad field of an image ``{data, mimeType}``, else None.

    Checked where a client hands in an image (``pi/prompt`` ``images``, ``pi/appendEntry``), so a
    bad one is refused before it is stored or sent to the model."""
    data = block.get("data")
    if not isinstance(data, str) or not data:
        return "data", "a non-empty base64 string"
    if not is_base64(data):
        return "data", "base64 (the image's bytes, padded, no data: URL prefix, no line breaks)"
    mime_type = block.get("mimeType")
    if not isinstance(mime_type, str) or not mime_type:
        return "mimeType", "a non-empty string"
    if mime_type not in IMAGE_MIME_TYPES:
        return "mimeType", "one of " + ", ".join(IMAGE_MIME_TYPES)
    return None


def require_object(value: Any, name: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise InvalidEntryError(f"{name} must be an object")
    return value


def _require(obj: dict[str, Any], key: str, kinds: type | tuple[type, ...], where: str, what: str) -> None:
    if key not in obj:
        raise InvalidEntryError(f"{where}.{key} is required")
    value = obj[key]
    if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in _as_tuple(kinds)):
        raise InvalidEntryError(f"{where}.{key} must be {what}")


def _as_tuple(kinds: type | tuple[type, ...]) -> tuple[type, ...]:
    return kinds if isinstance(kinds, tuple) else (kinds,)


def _content(obj: dict[str, Any], where: str, allowed: tuple[str, ...], allow_string: bool) -> None:
    if "content" not in obj:
        raise InvalidEntryError(f"{where}.content is required")
    content = obj["content"]
    if isinstance(content, str):
        if allow_string:
            return
        raise InvalidEntryError(f"{where}.content must be an array of content blocks")
    if not isinstance(content, list):
        raise InvalidEntryError(f"{where}.content must be a string or an array of content blocks")
    for position, block in enumerate(content):
        label = f"{where}.content[{position}]"
        if not isinstance(block, dict):
            raise InvalidEntryError(f"{label} must be an object")
        kind = block.get("type")
        if kind not in allowed:
            raise InvalidEntryError(f"{label}.type must be one of {', '.join(allowed)}")
        if kind == "text":
            _require(block, "text", str, label, "a string")
        elif kind == "image":
            if (problem := image_problem(block)) is not None:
                raise InvalidEntryError(f"{label}.{problem[0]} must be {problem[1]}")
        elif kind == "thinking":
            _require(block, "thinking", str, label, "a string")
        elif kind == "toolCall":
            _require(block, "id", str, label, "a string")
            _require(block, "name", str, label, "a string")
            _require(block, "arguments", dict, label, "an object")


def message(value: Any, where: str = "entry.message") -> dict[str, Any]:
    """Check a message by role; fills a missing ``timestamp`` with now (epoch ms)."""
    msg = require_object(value, where)
    role = msg.get("role")
    if role not in MESSAGE_ROLES:
        raise InvalidEntryError(f"{where}.role must be one of {', '.join(MESSAGE_ROLES)}")
    if role == "user":
        _content(msg, where, ("text", "image"), allow_string=True)
    elif role == "assistant":
        _content(msg, where, ("text", "thinking", "toolCall"), allow_string=False)
        for key in ("api", "provider", "model"):
            _require(msg, key, str, where, "a string")
        _require(msg, "usage", dict, where, "an object")
        if msg.get("stopReason") not in STOP_REASONS:
            raise InvalidEntryError(f"{where}.stopReason must be one of {', '.join(STOP_REASONS)}")
    elif role == "toolResult":
        _require(msg, "toolCallId", str, where, "a string")
        _require(msg, "toolName", str, where, "a string")
        _content(msg, where, ("text", "image"), allow_string=False)
        _require(msg, "isError", bool, where, "a boolean")
    elif role == "bashExecution":
        _require(msg, "command", str, where, "a string")
        _require(msg, "output", str, where, "a string")
        _require(msg, "cancelled", bool, where, "a boolean")
        _require(msg, "truncated", bool, where, "a boolean")
        if "exitCode" in msg and msg["exitCode"] is not None and not isinstance(msg["exitCode"], int):
            raise InvalidEntryError(f"{where}.exitCode must be a number")
    else:
        _require(msg, "customType", str, where, "a string")
        _content(msg, where, ("text", "image"), allow_string=True)
        _require(msg, "display", bool, where, "a boolean")
    if "timestamp" not in msg:
        msg = {**msg, "timestamp": now_ms()}
    elif not isinstance(msg["timestamp"], int | float) or isinstance(msg["timestamp"], bool):
        raise InvalidEntryError(f"{where}.timestamp must be a number (epoch milliseconds)")
    return msg


def entry_fields(value: Any) -> dict[str, Any]:
    """Validate a client entry and return its fields without server-assigned keys."""
    entry = require_object(value, "entry")
    kind = entry.get("type")
    if kind not in ENTRY_TYPES:
        raise InvalidEntryError(f"entry.type must be one of {', '.join(ENTRY_TYPES)}")
    fields = {key: item for key, item in entry.items() if key not in SERVER_FIELDS}
    if kind == "message":
        fields["message"] = message(entry.get("message"))
    elif kind == "model_change":
        _require(entry, "provider", str, "entry", "a string")
        _require(entry, "modelId", str, "entry", "a string")
    elif kind == "thinking_level_change":
        _require(entry, "thinkingLevel", str, "entry", "a string")
    elif kind == "custom":
        _require(entry, "customType", str, "entry", "a string")
    elif kind == "custom_message":
        _require(entry, "customType", str, "entry", "a string")
        _content(entry, "entry", ("text", "image"), allow_string=True)
        _require(entry, "display", bool, "entry", "a boolean")
    elif kind == "session_info":
        _require(entry, "name", str, "entry", "a string")
        fields["name"] = entry["name"].strip()
    elif kind == "label":
        _require(entry, "targetId", str, "entry", "a string")
        if "label" in entry and entry["label"] is not None and not isinstance(entry["label"], str):
            raise InvalidEntryError("entry.label must be a string")
        if entry.get("label") is None:
            fields.pop("label", None)
    elif kind == "compaction":
        _require(entry, "summary", str, "entry", "a string")
        _require(entry, "firstKeptEntryId", str, "entry", "a string")
        _require(entry, "tokensBefore", (int, float), "entry", "a number")
    elif kind == "branch_summary":
        _require(entry, "summary", str, "entry", "a string")
        if "fromId" in entry and not isinstance(entry["fromId"], str):
            raise InvalidEntryError("entry.fromId must be a string")
    return fields
