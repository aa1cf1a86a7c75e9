"""Where each object key of a JSON text is written, so a diagnostic can sit on a settings key.

``json`` parses values but forgets positions; this scanner walks the text once and records the
line and columns of every key inside nested objects (keys inside arrays are not recorded: no
setting is addressed that way). Text that is not valid JSON yields the keys found before the
problem, never an error.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

__all__ = ["KeySpan", "json_key_spans"]


@dataclass(frozen=True, slots=True)
class KeySpan:
    """A key's quoted text on one line: ``start`` and ``end`` are character columns."""

    line: int
    start: int
    end: int


@dataclass
class _Container:
    path: tuple[str, ...] | None  # None: an array, or inside one
    expect_key: bool = False
    last_key: str | None = None


def _string_end(text: str, start: int) -> int:
    """The index just past the closing quote of the string opened at ``start`` (-1: unterminated)."""
    index = start + 1
    while index < len(text):
        char = text[index]
        if char == "\\":
            index += 2
        elif char == '"':
            return index + 1
        elif char == "\n":
            return -1
        else:
            index += 1
    return -1


def json_key_spans(text: str) -> dict[tuple[str, ...], KeySpan]:
    """Every object key's position by its path (``("retry", "maxRetries")``); the first wins."""
    spans: dict[tuple[str, ...], KeySpan] = {}
    stack: list[_Container] = []
    line, line_start, index = 0, 0, 0
    while index < len(text):
        char = text[index]
        if char == "\n":
            line, line_start = line + 1, index + 1
        elif char == '"':
            end = _string_end(text, index)
            if end < 0:
                break
            top = stack[-1] if stack else None
            if top is not None and top.expect_key:
                try:
                    key = json.loads(text[index:end])
                except ValueError:
                    break
                top.expect_key, top.last_key = False, key
                if top.path is not None:
                    spans.setdefault((*top.path, key), KeySpan(line, index - line_start, end - line_start))
            index = end
            continue
        elif char in "{[":
            parent = stack[-1] if stack else None
            if parent is None:
                path: tuple[str, ...] | None = ()
            elif parent.path is None or parent.last_key is None:
                path = None
            else:
                path = (*parent.path, parent.last_key)
            if char == "[":
                path = None
            stack.append(_Container(path, expect_key=char == "{"))
        elif char in "}]":
            if not stack:
                break
            stack.pop()
        elif char == "," and stack and stack[-1].last_key is not None:
            stack[-1].expect_key, stack[-1].last_key = True, None
        index += 1
    return spans
