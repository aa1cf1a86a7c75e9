"""Best-effort parsing of JSON that is still arriving (tool-call arguments while they stream).

pi parses a tool call's ``input_json_delta`` text after every delta so that editors can show the
arguments as they form: complete JSON as is, JSON with raw control characters or bad escapes
inside strings after repairing them, and a truncated document as far as it goes (an unfinished
string is kept, an unfinished key is dropped). Anything unusable gives ``{}``.
"""

from __future__ import annotations

import json
from typing import Any

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


def parse_json_with_repair(text: str) -> Any:
    """``json.loads``, retried once on the repaired text; raises ``ValueError`` when both fail."""
    try:
        return json.loads(text)
    except ValueError:
        repaired = repair_json(text)
        if repaired == text:
            raise
        return json.loads(repaired)


class _Incomplete(Exception):
    pass


class _PartialParser:
    """Recursive descent that returns the value parsed so far when the text ends early."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def _skip(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos] in " \t\n\r":
            self.pos += 1

    def value(self) -> Any:
        self._skip()
        if self.pos >= len(self.text):
            raise _Incomplete
        char = self.text[self.pos]
        if char == "{":
            return self._object()
        if char == "[":
            return self._array()
        if char == '"':
            return self._string()
        return self._literal()

    def _object(self) -> dict[str, Any]:
        result: dict[str, Any] = {}
        self.pos += 1
        while True:
            self._skip()
            if self.pos >= len(self.text):
                return result
            if self.text[self.pos] == "}":
                self.pos += 1
                return result
            if self.text[self.pos] == ",":
                self.pos += 1
                continue
            try:
                key = self._string(require_end=True)
            except _Incomplete:
                return result
            self._skip()
            if self.pos >= len(self.text) or self.text[self.pos] != ":":
                if self.pos >= len(self.text):
                    return result
                raise ValueError("expected ':'")
            self.pos += 1
            try:
                result[key] = self.value()
            except _Incomplete:
                return result

    def _array(self) -> list[Any]:
        result: list[Any] = []
        self.pos += 1
        while True:
            self._skip()
            if self.pos >= len(self.text):
                return result
            if self.text[self.pos] == "]":
                self.pos += 1
                return result
            if self.text[self.pos] == ",":
                self.pos += 1
                continue
            try:
                result.append(self.value())
            except _Incomplete:
                return result

    def _string(self, require_end: bool = False) -> str:
        if self.text[self.pos] != '"':
            raise ValueError("expected a string")
        start = self.pos
        index = self.pos + 1
        while index < len(self.text):
            if self.text[index] == "\\":
                index += 2
                continue
            if self.text[index] == '"':
                self.pos = index + 1
                decoded: str = json.loads(self.text[start : index + 1])
                return decoded
            index += 1
        if require_end:
            raise _Incomplete
        self.pos = len(self.text)
        body = self.text[start + 1 :]
        while body:  # drop a dangling escape sequence, then decode what is complete
            try:
                partial: str = json.loads('"' + body + '"')
                return partial
            except ValueError:
                body = body[:-1]
        return ""

    def _literal(self) -> Any:
        start = self.pos
        while self.pos < len(self.text) and self.text[self.pos] not in ",]} \t\n\r":
            self.pos += 1
        token = self.text[start : self.pos]
        for word, meaning in (("true", True), ("false", False), ("null", None)):
            if token == word:
                return meaning
            if self.pos >= len(self.text) and word.startswith(token):
                return meaning
        try:
            return json.loads(token)
        except ValueError:
            if self.pos >= len(self.text):
                trimmed = token.rstrip(".eE+-")
                if trimmed and trimmed != "-":
                    return json.loads(trimmed)
                raise _Incomplete from None
            raise


def parse_streaming_json(text: str) -> Any:
    """The arguments parsed so far (``{}`` when nothing usable has arrived)."""
    if not text or not text.strip():
        return {}
    try:
        return parse_json_with_repair(text)
    except ValueError:
        pass
    for candidate in (text, repair_json(text)):
        try:
            result = _PartialParser(candidate).value()
        except (ValueError, _Incomplete, IndexError):
            continue
        return result if result is not None else {}
    return {}
