"""Whether stored bytes are JSON, checked without building them.

A context or a page sends messages as the bytes of their lines (``orjson.Fragment``), so each
must be one JSON value in valid UTF-8, or the answer would be invalid JSON. Parsing them with
orjson to find out built every object only to drop it: ~280 ms for a 71 MB context, most of
``pi/buildContext`` of a big session. msgspec's decoder into a raw value checks the same grammar
while only finding where the value ends, and refuses anything after it; each part is checked on its
own (11 ms for a 30 MB context; joining parts into megabyte arrays first cost as much again, and
their page faults), and its UTF-8 by a decode dropped at once (7 ms; one decode of a whole context
made a 300 MB string and took ~210 ms).

It accepts what orjson accepts, and numbers beyond a double's range too (``1e400``: JSON by its
grammar; ``JSON.parse`` reads it, orjson refuses it), which the tolerant per-line reader these
checks fall back to accepts anyway: a line is sent as stored either way.
"""

from __future__ import annotations

import codecs
import functools
from collections.abc import Callable, Sequence
from typing import Any

_utf8_decode = codecs.utf_8_decode


@functools.cache
def value_reader() -> tuple[Callable[[bytes | memoryview], Any], type[Exception]]:
    """msgspec's decoder of one raw value, and its error. msgspec is loaded here, not at start-up
    (~15 ms of imports the first session requests do not need): by the stdio takeover's import
    thread, or else by the first check."""
    import msgspec

    return msgspec.json.Decoder(msgspec.Raw).decode, msgspec.DecodeError


def each_one_value(parts: Sequence[bytes | memoryview]) -> bool:
    """Whether every part is exactly one JSON value (JSON's space around it allowed) in valid UTF-8."""
    read, error = value_reader()
    try:
        for part in parts:
            read(part)
            if not utf8(part):
                return False
    except (error, RecursionError):  # nested too deep: the per-line reader's
        return False
    return True


def utf8(data: bytes | memoryview) -> bool:
    """Whether ``data`` is valid UTF-8: at once when it is ASCII, or a view of bytes that are (a
    stored line's message: the line is scanned without making a string, about twice as fast as
    the decode); else decoded, then dropped."""
    if type(data) is memoryview:
        owner = data.obj
        if type(owner) is bytes and owner.isascii():
            return True
    elif isinstance(data, bytes) and data.isascii():
        return True
    try:
        _utf8_decode(data, "strict", True)
    except UnicodeDecodeError:
        return False
    return True


def utf8_parts(parts: Sequence[bytes | memoryview]) -> bool:
    """:func:`utf8` of every part, each on its own (no split inside a character, no big string)."""
    return all(map(utf8, parts))
