"""A JSON value carried as the byte pieces it is made of, to the output, never joined.

A big session's context is tens of megabytes of messages that are already JSON: the stored lines.
Joining them into one array and then encoding the response around it copied the whole answer
twice (and faulted in twice its size of fresh memory) before the first byte was written.
:class:`JsonParts` keeps the pieces (views of the stored lines and the commas between them);
:func:`encode_pieces` encodes the rest of a message with orjson and splices the pieces in where
the value stands, so the stdio writer hands them to ``writev`` as they are. Everything else that
encodes such a value (the network door, the command line) gets it joined, through
:func:`joined_default`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any

import orjson

Buffer = bytes | memoryview
Default = Callable[[Any], Any]

_MARK = b'"\\u0000pi-lsp-parts-' + os.urandom(16).hex().encode() + b'-%d"'
"""Where a value stands in the encoded message: a JSON string no content can hold unless it knows
this process's random token (and every match is checked to be the only one)."""


class JsonParts:
    """One JSON value (``pieces`` written in order), valid as a whole: its maker checked it."""

    __slots__ = ("pieces",)

    def __init__(self, pieces: Sequence[Buffer]) -> None:
        self.pieces = pieces

    def joined(self) -> bytes:
        return b"".join(self.pieces)


def joined_default(value: Any, default: Default | None = None) -> Any:
    """orjson's ``default`` for a writer that wants one buffer: the value's pieces joined."""
    if isinstance(value, JsonParts):
        return orjson.Fragment(value.joined())
    return _otherwise(value, default)


def _otherwise(value: Any, default: Default | None) -> Any:
    """What the caller's ``default`` makes of a value orjson cannot write; else orjson's TypeError."""
    if default is not None:
        return default(value)
    raise TypeError(f"cannot encode {type(value).__name__}")


def encode_pieces(payload: Any, default: Default | None = None) -> list[Buffer]:
    """``payload`` encoded by orjson, as the pieces to write: one, unless it holds
    :class:`JsonParts` values, whose pieces are spliced in unjoined. Raises what orjson raises."""
    found: list[JsonParts] = []

    def marking(value: Any) -> Any:
        if isinstance(value, JsonParts):
            found.append(value)
            return orjson.Fragment(_MARK % (len(found) - 1))
        return _otherwise(value, default)

    body = orjson.dumps(payload, default=marking)
    if not found:
        return [body]
    pieces: list[Buffer] = []
    start = 0
    for number, parts in enumerate(found):
        mark = _MARK % number
        at = body.find(mark, start)
        if at < 0 or body.find(mark, at + len(mark)) >= 0:  # never expected: join rather than guess
            return [orjson.dumps(payload, default=lambda value: joined_default(value, default))]
        pieces.append(body[start:at])
        pieces.extend(parts.pieces)
        start = at + len(mark)
    pieces.append(body[start:])
    return pieces
