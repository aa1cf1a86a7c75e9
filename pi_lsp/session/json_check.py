"""Whether stored bytes are JSON, checked without building them.

A context or a page sends messages as the bytes of their lines (``orjson.Fragment``), so each
must be one JSON value in valid UTF-8, or the answer would be invalid JSON. Parsing them with
orjson to find out built every object only to drop it: ~280 ms for a 71 MB context, most of
``pi/buildContext`` of a big session. msgspec's decoder into ``list[msgspec.Raw]`` checks the same
grammar while only finding where each value ends (~26 ms), and UTF-8 is checked by decoding a
megabyte at a time (~20 ms; one decode of a whole context made a 300 MB string and took ~210 ms).

It accepts what orjson accepts, and numbers beyond a double's range too (``1e400``: JSON by its
grammar; ``JSON.parse`` reads it, orjson refuses it), which the tolerant per-line reader these
checks fall back to accepts anyway: a line is sent as stored either way.
"""

from __future__ import annotations

import codecs
import functools
from collections.abc import Callable, Iterator, Sequence
from typing import Any

CHUNK_BYTES = 1 << 20
"""About how much is checked at a time: bounded memory, one call per megabyte."""

_DECODE_BYTES = 16 * 1024
"""How much of a chunk is decoded at a time to check its UTF-8 (a string that small reuses memory)."""


@functools.cache
def values_reader() -> tuple[Callable[[bytes], list[Any]], type[Exception]]:
    """msgspec's decoder into raw values, and its error. msgspec is loaded here, not at start-up
    (~15 ms of imports the first session requests do not need): by the stdio takeover's import
    thread, or else by the first check."""
    import msgspec

    return msgspec.json.Decoder(list[msgspec.Raw]).decode, msgspec.DecodeError


def each_one_value(parts: Sequence[bytes | memoryview]) -> bool:
    """Whether every part is exactly one JSON value in valid UTF-8, checked as arrays of about
    :data:`CHUNK_BYTES` (while a megabyte is in the processor's cache: one parse of a whole
    context was no faster). Each value must be as long as its part: counting alone let two damaged
    parts make up for each other (one cut short and closed by the next, one holding two values),
    JSON's space around a part is allowed."""
    read, error = values_reader()
    for start, end in _runs(parts):
        chunk = _array(parts[start:end])
        try:
            values = read(chunk)
        except (error, RecursionError):  # nested too deep: the per-line reader's
            return False
        if len(values) != end - start or not _same_lengths(values, parts[start:end]) or not utf8(chunk):
            return False
    return True


def _same_lengths(values: Sequence[Any], parts: Sequence[bytes | memoryview]) -> bool:
    """Whether each value spans its whole part (JSON's space around it aside)."""
    if not any(map(int.__ne__, map(len, values), map(len, parts))):
        return True
    return all(
        len(value) == len(bytes(part).strip(b" \t\n\r")) for value, part in zip(values, parts, strict=True)
    )


def _array(parts: Sequence[bytes | memoryview]) -> bytes:
    """The parts as one JSON array, copied once (the brackets go on the end parts)."""
    if len(parts) == 1:
        return b"".join((b"[", parts[0], b"]"))
    return b",".join([b"[" + parts[0], *parts[1:-1], b"".join((parts[-1], b"]"))])


def utf8(data: bytes) -> bool:
    """Whether ``data`` is valid UTF-8: ASCII at once; else decoded :data:`_DECODE_BYTES` at a time
    and dropped (one decode of a megabyte made a string of up to four, in fresh memory each time)."""
    if data.isascii():
        return True
    decode = codecs.getincrementaldecoder("utf-8")().decode
    view = memoryview(data)
    try:
        for start in range(0, len(data), _DECODE_BYTES):
            decode(view[start : start + _DECODE_BYTES])
        decode(b"", True)
    except UnicodeDecodeError:
        return False
    return True


def utf8_parts(parts: Sequence[bytes | memoryview]) -> bool:
    """:func:`utf8` of every part, joined about :data:`CHUNK_BYTES` at a time (no split inside a
    part, so none inside a character; no string of the whole)."""
    return all(utf8(b"".join(parts[start:end])) for start, end in _runs(parts))


def _runs(parts: Sequence[bytes | memoryview]) -> Iterator[tuple[int, int]]:
    """``(start, end)`` of consecutive parts of about :data:`CHUNK_BYTES` together, in order."""
    start = size = 0
    for end, part in enumerate(parts, start=1):
        size += len(part)
        if size >= CHUNK_BYTES or end == len(parts):
            yield start, end
            start, size = end, 0
