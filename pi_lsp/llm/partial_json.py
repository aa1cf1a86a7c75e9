"""JSON from the model's stream read the way pi (JavaScript) reads it.

- Tool-call arguments still arriving: complete JSON as is, JSON with raw control characters or bad
  escapes inside strings after repairing them, and a truncated document as far as it goes (an
  unfinished string is kept, an unfinished key is dropped). Anything unusable gives ``{}``.
- ``JSON.parse`` semantics (no NaN/Infinity) and V8's wording of its errors, which pi quotes in the
  error text of a malformed stream event.
"""

from __future__ import annotations

import json
from typing import Any

import orjson

from pi_lsp.jscompat import js_trim

_VALID_ESCAPES = frozenset('"\\/bfnrtu')
_HEX = frozenset("0123456789abcdefABCDEF")
_CONTROL_ESCAPES = {"\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def repair_json(text: str) -> str:
    """Escape raw control characters in strings and double backslashes before invalid escapes."""
    out: list[str] = []
    in_string = False
    index = 0
    while index < len(text):
        char = text[index]
        if not in_string:
            out.append(char)
            in_string = char == '"'
        elif char == '"':
            out.append(char)
            in_string = False
        elif char == "\\":
            following = text[index + 1] if index + 1 < len(text) else None
            if (
                following == "u"
                and len(text) >= index + 6
                and all(c in _HEX for c in text[index + 2 : index + 6])
            ):
                out.append(text[index : index + 6])
                index += 5
            elif following is not None and following in _VALID_ESCAPES and following != "u":
                out.append("\\" + following)
                index += 1
            else:
                out.append("\\\\")
        elif ord(char) <= 0x1F:
            out.append(_CONTROL_ESCAPES.get(char, f"\\u{ord(char):04x}"))
        else:
            out.append(char)
        index += 1
    return "".join(out)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def js_json_loads(text: str) -> Any:
    """``JSON.parse``: like ``json.loads`` but without Python's NaN/Infinity extension.

    orjson first (every streamed event goes through here); what it refuses (malformed text, NaN,
    a lone surrogate escape, an integer beyond 64 bits) goes to ``json``, whose errors say where."""
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return json.loads(text, parse_constant=_reject_constant)


def parse_json_with_repair(text: str) -> Any:
    """``JSON.parse``, retried once on the repaired text; raises ``ValueError`` when both fail."""
    try:
        return js_json_loads(text)
    except ValueError:
        repaired = repair_json(text)
        if repaired == text:
            raise
        return js_json_loads(repaired)


class _Partial(Exception):
    """The text ended before the value did."""


def _js_substring(text: str, start: int, end: int) -> str:
    """``String.prototype.substring``: negative bounds are 0, swapped when reversed."""
    start, end = max(0, min(start, len(text))), max(0, min(end, len(text)))
    return text[min(start, end) : max(start, end)]


_LITERALS: tuple[tuple[str, Any], ...] = (("null", None), ("true", True), ("false", False))
_NON_JSON_LITERALS: tuple[tuple[str, float], ...] = (
    ("Infinity", float("inf")), ("-Infinity", float("-inf")), ("NaN", float("nan")),
)  # fmt: skip


class _PartialParser:
    """A tolerant parser for a document cut short, with the semantics of the ``partial-json`` npm
    package pi uses (everything may be partial): what is complete is kept, an unfinished string is
    kept as far as it goes, an unfinished key or value is dropped."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.length = len(text)
        self.index = 0

    def _at(self, index: int) -> str | None:
        return self.text[index] if 0 <= index < self.length else None

    def _skip_blank(self) -> None:
        while self.index < self.length and self.text[self.index] in " \n\r\t":
            self.index += 1

    def value(self) -> Any:
        self._skip_blank()
        if self.index >= self.length:
            raise _Partial
        char = self.text[self.index]
        if char == '"':
            return self._string()
        if char == "{":
            return self._object()
        if char == "[":
            return self._array()
        rest = self.text[self.index :]
        for word, meaning in (*_LITERALS, *_NON_JSON_LITERALS):
            complete = rest[: len(word)] == word
            truncated = (
                len(rest) < len(word) and word.startswith(rest) and (word != "-Infinity" or len(rest) > 1)
            )
            if complete or truncated:
                self.index += len(word)
                return meaning
        return self._number()

    def _string(self) -> str:
        start = self.index
        escape = False
        self.index += 1
        while self.index < self.length and (
            self.text[self.index] != '"' or (escape and self.text[self.index - 1] == "\\")
        ):
            escape = not escape if self.text[self.index] == "\\" else False
            self.index += 1
        if self._at(self.index) == '"':
            self.index += 1
            decoded: str = js_json_loads(_js_substring(self.text, start, self.index - int(escape)))
            return decoded
        try:
            partial: str = js_json_loads(_js_substring(self.text, start, self.index - int(escape)) + '"')
        except ValueError:
            partial = js_json_loads(_js_substring(self.text, start, self.text.rfind("\\")) + '"')
        return partial

    def _object(self) -> dict[str, Any]:
        self.index += 1
        self._skip_blank()
        result: dict[str, Any] = {}
        try:
            while self._at(self.index) != "}":
                self._skip_blank()
                if self.index >= self.length:
                    return result
                key = self._string()
                self._skip_blank()
                self.index += 1  # the colon, unchecked
                try:
                    result[key] = self.value()
                except (ValueError, _Partial, IndexError):
                    return result
                self._skip_blank()
                if self._at(self.index) == ",":
                    self.index += 1
        except (ValueError, _Partial, IndexError):
            return result
        self.index += 1
        return result

    def _array(self) -> list[Any]:
        self.index += 1
        result: list[Any] = []
        try:
            while self._at(self.index) != "]":
                result.append(self.value())
                self._skip_blank()
                if self._at(self.index) == ",":
                    self.index += 1
        except (ValueError, _Partial, IndexError):
            return result
        self.index += 1
        return result

    def _number(self) -> Any:
        if self.index == 0:
            if self.text == "-":
                raise ValueError("lone minus")
            try:
                return js_json_loads(self.text)
            except ValueError:
                try:
                    return js_json_loads(_js_substring(self.text, 0, self.text.rfind("e")))
                except ValueError:
                    pass
                raise
        start = self.index
        if self._at(self.index) == "-":
            self.index += 1
        while self.index < self.length and self.text[self.index] not in ",]}":
            self.index += 1
        token = _js_substring(self.text, start, self.index)
        try:
            return js_json_loads(token)
        except ValueError:
            if token == "-":
                raise _Partial from None
            return js_json_loads(_js_substring(self.text, start, self.text.rfind("e")))


def _partial_parse(text: str) -> Any:
    trimmed = js_trim(text)
    if not trimmed:
        raise ValueError("empty")
    return _PartialParser(trimmed).value()


def parse_streaming_json(text: str) -> Any:
    """The arguments parsed so far (``{}`` when nothing usable has arrived)."""
    if not text or not js_trim(text):
        return {}
    try:
        return parse_json_with_repair(text)
    except ValueError:
        pass
    for candidate in (text, repair_json(text)):
        try:
            result = _partial_parse(candidate)
        except (ValueError, _Partial, IndexError, RecursionError):
            continue
        return result if result is not None else {}
    return {}


# ---------------------------------------------------------------------------------------------
# JSON.parse's error wording (V8), for error texts that quote it (pi's "Could not parse ..." text)

_CONTEXT = 10


def _enclosing(text: str, position: int) -> str | None:
    """The innermost open ``{`` or ``[`` at ``position`` (strings skipped)."""
    stack: list[str] = []
    in_string = escape = False
    for char in text[:position]:
        if in_string:
            if escape:
                escape = False
            elif char == "\\":
                escape = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "{[":
            stack.append(char)
        elif char in "}]" and stack:
            stack.pop()
    return stack[-1] if stack else None


def _unexpected_token(text: str, position: int) -> str:
    if len(text) <= 2 * _CONTEXT:
        source = f'"{text}"'
    else:
        start, end = max(0, position - _CONTEXT), min(len(text), position + _CONTEXT)
        source = ("..." if start > 0 else "") + f'"{text[start:end]}"' + ("..." if end < len(text) else "")
    return f"Unexpected token '{text[position]}', {source} is not valid JSON"


def _expecting_value(text: str, position: int) -> str:
    rest = text[position:]
    if not rest.strip(" \t\n\r"):
        return "Unexpected end of JSON input"
    for word in ("true", "false", "null"):
        matched = 0
        while matched < min(len(word), len(rest)) and rest[matched] == word[matched]:
            matched += 1
        if matched:
            if position + matched >= len(text):
                return "Unexpected end of JSON input"
            return _unexpected_token(text, position + matched)
    if rest[0] == "-":
        return f"No number after minus sign in JSON at position {position + 1}"
    return _unexpected_token(text, position)


def v8_json_error(error: json.JSONDecodeError) -> str:
    """What ``JSON.parse`` (V8) says for the text Python's parser rejected (the usual cases)."""
    text, position, reason = error.doc, error.pos, error.msg
    at = f"in JSON at position {position}"
    if reason == "Expecting value":
        return _expecting_value(text, position)
    if reason == "Extra data":
        return f"Unexpected non-whitespace character after JSON at position {position}"
    if reason.startswith("Expecting property name"):
        before = text[:position].rstrip(" \t\n\r")
        if before.endswith(","):
            return f"Expected double-quoted property name {at}"
        return f"Expected property name or '}}' {at}"
    if reason == "Expecting ':' delimiter":
        return f"Expected ':' after property name {at}"
    if reason == "Expecting ',' delimiter":
        if _enclosing(text, position) == "[":
            return f"Expected ',' or ']' after array element {at}"
        return f"Expected ',' or '}}' after property value {at}"
    if reason.startswith("Unterminated string"):
        return f"Unterminated string in JSON at position {len(text)}"
    if reason.startswith("Invalid control character"):
        return f"Bad control character in string literal {at}"
    if reason.startswith("Invalid \\escape"):
        return f"Bad escaped character in JSON at position {position + 1}"
    return f"{reason} {at}"
