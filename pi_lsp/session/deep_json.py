"""A JSON reader without a nesting limit, for the rare lines orjson and ``json`` refuse as too deep.

``JSON.parse`` (pi) has no depth limit, so a session line nested thousands of levels deep is an
entry pi reads. orjson stops at 1,024 levels and the standard library's recursive decoder at
Python's recursion limit, so such a line would either be skipped (pi keeps it) or crash every
reader of the file. This reader never recurses: it keeps an explicit stack. Containers nested
deeper than ``KEEP_DEPTH`` are checked like any JSON but kept as ``orjson.Fragment`` holding
their exact text, so the entry's top-level fields (``type``, ``id``, ``parentId``, ``message``)
are ordinary values, nothing downstream has to walk the deep part, and writing the value back
(``orjson.dumps``) reproduces those bytes unchanged.

It accepts exactly what ``JSON.parse`` accepts on Node-decoded text (strings with lone surrogate
escapes included) and raises ValueError for anything else. It is slow compared with orjson, which
is why it only runs for lines the fast readers cannot take.
"""

from __future__ import annotations

import json
import re
from typing import Any

import orjson

# Below orjson's serialisation limit (254), so every parsed value can be written back by orjson.
KEEP_DEPTH = 128

_WHITESPACE = re.compile(r"[ \t\n\r]*")
# Possessive quantifiers: a string that never ends fails in linear time, without backtracking.
_STRING = re.compile(r'"(?:[^"\\\x00-\x1f]++|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*+"')
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?")
_LITERALS = {"true": True, "false": False, "null": None}
_CLOSER = {"[": "]", "{": "}"}
_OPENER = {"]": "[", "}": "{"}


class _Frame:
    """One open container: its kind, the value being built and where it starts."""

    __slots__ = ("key", "kind", "start", "value")

    def __init__(self, kind: str, value: dict[str, Any] | list[Any], start: int) -> None:
        self.kind = kind
        self.value = value
        self.start = start
        self.key = ""


def loads_deep(text: str, keep_depth: int = KEEP_DEPTH) -> Any:
    """Parse ``text`` as one JSON value at any depth (see the module docstring)."""
    parser = _Parser(text, keep_depth)
    return parser.parse()


class _Parser:
    def __init__(self, text: str, keep_depth: int) -> None:
        self.text = text
        self.keep_depth = keep_depth
        self.pos = 0

    def fail(self, what: str) -> ValueError:
        return ValueError(f"{what} at character {self.pos}")

    def skip_whitespace(self) -> None:
        match = _WHITESPACE.match(self.text, self.pos)
        assert match is not None
        self.pos = match.end()

    def peek(self) -> str:
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def string(self) -> str:
        match = _STRING.match(self.text, self.pos)
        if match is None:
            raise self.fail("invalid string")
        self.pos = match.end()
        token = match.group()
        if "\\" not in token:
            return token[1:-1]
        value: str = json.loads(token)  # escapes, lone surrogates included, as JSON.parse reads them
        return value

    def key_and_colon(self, frame: _Frame) -> None:
        self.skip_whitespace()
        if self.peek() != '"':
            raise self.fail("expected a property name")
        frame.key = self.string()
        self.skip_whitespace()
        if self.peek() != ":":
            raise self.fail("expected ':'")
        self.pos += 1

    def scalar(self) -> Any:
        char = self.peek()
        if char == '"':
            return self.string()
        match = _NUMBER.match(self.text, self.pos)
        if match is not None:
            self.pos = match.end()
            token = match.group()
            return float(token) if match.group(1) or match.group(2) else int(token)
        for word, value in _LITERALS.items():
            if self.text.startswith(word, self.pos):
                self.pos += len(word)
                return value
        raise self.fail("unexpected character" if char else "unexpected end of JSON")

    def parse(self) -> Any:
        stack: list[_Frame] = []
        while True:
            # A value starts here.
            self.skip_whitespace()
            char = self.peek()
            value: Any
            if char in _CLOSER and len(stack) >= self.keep_depth:
                start = self.pos
                self.skip_container()
                value = orjson.Fragment(self.text[start : self.pos].encode("utf-8", "surrogatepass"))
            elif char in _CLOSER:
                container: dict[str, Any] | list[Any] = {} if char == "{" else []
                frame = _Frame(char, container, self.pos)
                self.pos += 1
                self.skip_whitespace()
                if self.peek() != _CLOSER[char]:
                    stack.append(frame)
                    if char == "{":
                        self.key_and_colon(frame)
                    continue
                self.pos += 1
                value = frame.value
            else:
                value = self.scalar()
            # A value ended: store it in its container, then read separators and closers.
            while True:
                if not stack:
                    self.skip_whitespace()
                    if self.pos != len(self.text):
                        raise self.fail("unexpected text after the JSON value")
                    return value
                frame = stack[-1]
                if isinstance(frame.value, dict):
                    frame.value[frame.key] = value
                else:
                    frame.value.append(value)
                self.skip_whitespace()
                char = self.peek()
                if char == ",":
                    self.pos += 1
                    if frame.kind == "{":
                        self.key_and_colon(frame)
                    break
                if char != _CLOSER[frame.kind]:
                    raise self.fail(f"expected ',' or '{_CLOSER[frame.kind]}'")
                self.pos += 1
                stack.pop()
                value = frame.value

    def skip_container(self) -> None:
        """Check the container starting here as JSON and move past it, building nothing."""
        text = self.text
        openers = [text[self.pos]]
        state = _KEY_OR_CLOSE if openers[0] == "{" else _VALUE_OR_CLOSE
        self.pos += 1
        while openers:
            match = _TOKEN.match(text, self.pos)
            if match is None:
                raise self.fail("invalid JSON")
            kind = match.lastindex
            token = match.group(kind or 0)
            if kind == _OPEN:  # a run of "[" or one "{"
                if state not in _EXPECTS_VALUE:
                    raise self.fail("unexpected value")
                openers.extend(token)
                state = _KEY_OR_CLOSE if token == "{" else _VALUE_OR_CLOSE
            elif kind == _CLOSE:  # a run of "]" or one "}"; closers past this container are left
                count = min(len(token), len(openers))
                closed = openers[-count:]
                del openers[-count:]
                if closed.count(_OPENER[token[0]]) != count:
                    raise self.fail(f"unexpected '{token[0]}'")
                if state not in (_AFTER_VALUE, _EMPTY_STATE[closed[-1]]):
                    raise self.fail(f"unexpected '{token[0]}'")
                state = _AFTER_VALUE
                self.pos = match.start(kind) + count
                continue
            elif kind == _STRING_TOKEN and state in (_KEY_OR_CLOSE, _KEY):
                state = _COLON
            elif kind in (_STRING_TOKEN, _SCALAR):
                if state not in _EXPECTS_VALUE:
                    raise self.fail("unexpected value")
                state = _AFTER_VALUE
            elif token == "," and state == _AFTER_VALUE:
                state = _VALUE if openers[-1] == "[" else _KEY
            elif token == ":" and state == _COLON:
                state = _VALUE
            else:
                raise self.fail(f"unexpected '{token}'")
            self.pos = match.end()


# skip_container's grammar states and token kinds (the groups of _TOKEN).
_VALUE, _VALUE_OR_CLOSE, _KEY, _KEY_OR_CLOSE, _COLON, _AFTER_VALUE = range(6)
_EXPECTS_VALUE = (_VALUE, _VALUE_OR_CLOSE)
_EMPTY_STATE = {"[": _VALUE_OR_CLOSE, "{": _KEY_OR_CLOSE}
_OPEN, _CLOSE, _STRING_TOKEN, _SCALAR, _PUNCTUATION = range(1, 6)
_TOKEN = re.compile(
    r"[ \t\n\r]*(?:(\[+|\{)|(\]+|\})"
    r'|("(?:[^"\\\x00-\x1f]++|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*+")'
    r"|(-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?|true|false|null)|([,:]))"
)
