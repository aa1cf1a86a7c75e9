"""pi's physical line format: one compact JSON object per LF-terminated line.

Parsing is tolerant the way pi's is (blank lines and unparseable lines are skipped, invalid UTF-8
is replaced like Node's ``utf8`` decoding, lone surrogate escapes are accepted) but every skipped
line is reported. Serialising matches ``JSON.stringify``: compact, UTF-8, integral floats as ints.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, BinaryIO

import orjson

from pi_lsp.jscompat import js_finite_float
from pi_lsp.session.errors import InvalidEntryError

JsonObject = dict[str, Any]

MAX_LINE_BYTES = 320 * 1024 * 1024
"""The longest session line read or written (without its LF). Above every line we write: a prompt
or an appended entry arrives in one protocol message of at most 256 MiB and is written in no more
bytes than its JSON took (JSON.stringify escapes only what JSON requires escaped), plus a head of
a few hundred bytes; pi's images travel as base64 inside such lines. Longer lines (a corrupted or
hostile file: one gigabyte without a newline) are skipped with a diagnostic without being held in
memory, and never rewritten; our own appends refuse to write one (``check_line_size``)."""

READ_CHUNK_BYTES = 1 * 1024 * 1024

HOLD_BYTES = 16 * 1024 * 1024
"""A line still unfinished after this many bytes is measured before it is read whole (see
``read_line_blocks``): what the reader holds of a line too long to read."""


@dataclass(frozen=True, slots=True)
class RawLine:
    """One non-blank physical line: its 1-based number, byte offset and bytes (without the LF)."""

    number: int
    offset: int
    data: bytes


def loads_line(data: bytes | bytearray) -> Any:
    """Parse one line as JSON, accepting what ``JSON.parse`` of Node-decoded UTF-8 accepts.

    Raises ValueError when the line is not JSON at all.
    """
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError as error:
        too_deep = "depth limit" in str(error)
    # Node decodes invalid UTF-8 to U+FFFD and JSON.parse accepts lone surrogate escapes;
    # orjson rejects both, the standard library accepts the latter. JSON.parse has no depth
    # limit: lines nested deeper than orjson or the standard library go take the deep reader.
    text = data.decode("utf-8", "replace")
    # the deep reader (its patterns are compiled on import) only for lines that need it
    from pi_lsp.session.deep_json import loads_deep

    if too_deep:
        return loads_deep(text)
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise ValueError(str(error)) from None
    except RecursionError:
        return loads_deep(text)


_LEAVES = frozenset({str, int, bool, type(None)})
"""Exact types that are written as they are (most values of a message): skipped without a call."""


_INFINITIES = (float("inf"), float("-inf"))

_EXACT_INTEGERS = 2.0**53
"""Integral floats below this are written as the int they equal: the same digits JS writes."""

_SAME_FORM_FROM = 1e-5
"""Non-integral floats at least this far from 0 are written by orjson exactly as by
``JSON.stringify`` (shortest digits, fixed notation below 1e21, ``e+NN`` above); orjson writes
some smaller ones in exponent form where JS does not (``1e-6 <= x < 1e-5``). tests/test_jscompat.py
checks this against node for orjson's installed version."""


def _js_number_form(value: Any) -> Any:
    """Floats written exactly as ``JSON.stringify`` writes them (``2`` for 2.0, ``0.000009``).

    Most floats are left to orjson (see ``_SAME_FORM_FROM``); only containers holding a float
    that needs another form are copied; everything else is passed through as is. Exact
    types are compared first (this runs on every append); subclasses take the general path.
    """
    kind = type(value)
    if kind is dict:
        changed: dict[Any, Any] | None = None
        for key, item in value.items():
            if type(item) in _LEAVES:
                continue
            form = _js_number_form(item)
            if form is not item:
                if changed is None:
                    changed = dict(value)
                changed[key] = form
        return value if changed is None else changed
    if kind is list:
        copy: list[Any] | None = None
        for index, item in enumerate(value):
            if type(item) in _LEAVES:
                continue
            form = _js_number_form(item)
            if form is not item:
                if copy is None:
                    copy = list(value)
                copy[index] = form
        return value if copy is None else copy
    if kind is float:
        if value.is_integer():
            if -_EXACT_INTEGERS < value < _EXACT_INTEGERS:
                return int(value)  # its digits are the shortest ones; -0.0 becomes 0 as in JS
        elif not -_SAME_FORM_FROM < value < _SAME_FORM_FROM:
            return value  # orjson writes these as JSON.stringify does (NaN and ±Infinity: null)
        return orjson.Fragment(js_finite_float(value))
    if kind in _LEAVES:
        return value
    return _subclass_number_form(value)


def _subclass_number_form(value: Any) -> Any:
    """:func:`_js_number_form` for subclasses of dict, list, tuple or float (and other values)."""
    if isinstance(value, dict):
        return _js_number_form(dict(value))
    if isinstance(value, list | tuple):
        return _js_number_form(list(value))
    if isinstance(value, float):
        return _js_number_form(float(value))
    return value


def dumps_compact(value: Any) -> bytes:
    """``JSON.stringify(value)`` as UTF-8 bytes (no trailing newline)."""
    try:
        return orjson.dumps(_js_number_form(value))
    except TypeError:
        # Lone surrogates or integers beyond 64 bits: the standard library writes both. Its
        # escapes of control characters are JSON.stringify's; lone surrogates, which it leaves
        # raw, are escaped as JSON.stringify escapes them (``\ud800``), so the bytes are node's.
        # It starts from the value itself: orjson's fragments cannot be read back.
        plain = _stdlib_numbers(value)
        text = json.dumps(plain, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
        return _LONE_SURROGATE.sub(_escape_surrogate, text).encode("utf-8")


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
"""A Python string from JSON holds no surrogate pairs (a pair decodes to one character)."""


def _escape_surrogate(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def dumps_kept(value: Any) -> bytes:
    """:func:`dumps_compact` for bytes kept in memory (an appended entry's line): copied out of
    orjson's output buffer, which kept as it is makes later allocations touch fresh pages (an
    append measured 2-3 µs slower, most of it page faults)."""
    return bytes(memoryview(dumps_compact(value)))


def _stdlib_numbers(value: Any) -> Any:
    """Floats the standard library writes as ``JSON.stringify`` would: NaN and infinities as
    ``null``, integral values without ``.0`` (other floats may differ in exponent form only)."""
    if isinstance(value, float):
        if value != value or value in _INFINITIES:
            return None
        return int(value) if value.is_integer() and abs(value) < 1e21 else value
    if isinstance(value, dict):
        return {key: _stdlib_numbers(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_stdlib_numbers(item) for item in value]
    return value


def check_line_size(size: int) -> None:
    """InvalidEntryError when a line of ``size`` bytes is too long to be read back."""
    if size > MAX_LINE_BYTES:
        raise InvalidEntryError(
            f"the entry would be a line of {size:,} bytes; session lines are limited to "
            f"{MAX_LINE_BYTES:,} bytes (MAX_LINE_BYTES), so it was not written"
        )


@dataclass(frozen=True, slots=True)
class LineBlock:
    """Complete LF-terminated lines: ``data[start:end]``; ``data`` starts at file offset ``offset``."""

    data: bytes
    end: int
    offset: int
    start: int = 0


@dataclass(frozen=True, slots=True)
class LongLine:
    """A line longer than the limit, passed over unread: where it starts, its length without the
    LF (so far, when ``terminated`` is False: it runs to the end of the file)."""

    offset: int
    size: int
    terminated: bool


@dataclass(frozen=True, slots=True)
class LastLine:
    """The bytes after the last LF (a line not ended yet, or a torn one), at ``offset``."""

    data: bytes
    offset: int


def read_line_blocks(
    handle: BinaryIO,
    start: int = 0,
    *,
    stop: int | None = None,
    limit: int | None = None,
    chunk_bytes: int | None = None,
    hold_bytes: int | None = None,
) -> Iterator[LineBlock | LongLine | LastLine]:
    """The lines of the seekable ``handle`` from offset ``start`` (its position) to ``stop`` (else
    the end), in file order, as blocks of whole lines.

    A line still unfinished after ``hold_bytes`` (HOLD_BYTES) is measured by reading on without
    keeping what is read: one of at most ``limit`` (MAX_LINE_BYTES) bytes is then read again whole,
    a longer one is reported as a :class:`LongLine` and never held (memory stays near
    ``hold_bytes`` however long the line)."""
    limit = MAX_LINE_BYTES if limit is None else limit
    chunk_bytes = min(chunk_bytes or READ_CHUNK_BYTES, limit)  # a line within one chunk is within the limit
    hold = min(limit, HOLD_BYTES if hold_bytes is None else hold_bytes)
    offset = start  # the file offset of the line being read (of pending[0])
    pending: list[bytes] = []  # the pieces of that line, when it did not end in its first chunk
    pending_size = 0
    position = start
    while stop is None or position < stop:
        chunk = handle.read(chunk_bytes if stop is None else min(chunk_bytes, stop - position))
        if not chunk:
            break
        position += len(chunk)
        cut = chunk.rfind(b"\n") + 1
        if pending and cut == 0:
            pending.append(chunk)
            pending_size += len(chunk)
            if pending_size <= hold:
                continue
            size, terminated = _measure_line(handle, pending_size, position, stop, chunk_bytes)
            pending, pending_size = [], 0
            if size > limit:
                yield LongLine(offset, size, terminated)
            else:
                line = _read_at(handle, offset, size + 1 if terminated else size)
                if not terminated or len(line) != size + 1:  # the end, or cut short meanwhile
                    yield LastLine(line, offset)
                    return
                yield LineBlock(line, size + 1, offset)
            if not terminated:
                return
            offset = position = offset + size + 1
            handle.seek(position)
            continue
        start = 0  # where the chunk's own lines start, after the end of a line begun before it
        if pending:
            first = chunk.find(b"\n")
            if pending_size + first > limit:
                yield LongLine(offset, pending_size + first, True)
                offset += pending_size + first + 1
            else:  # that line alone is joined: the chunk's other lines are not copied again
                pending.append(chunk[: first + 1])
                line = b"".join(pending)
                yield LineBlock(line, len(line), offset)
                offset += len(line)
            start = first + 1
            pending, pending_size = [], 0
        if cut > start:
            yield LineBlock(chunk, cut, offset - start, start)
            offset += cut - start
        if cut < len(chunk):
            pending, pending_size = [chunk[cut:]], len(chunk) - cut
    if pending:
        yield LastLine(b"".join(pending), offset)


def _measure_line(
    handle: BinaryIO, so_far: int, position: int, stop: int | None, chunk_bytes: int
) -> tuple[int, bool]:
    """(length, ended by a LF) of a line ``so_far`` bytes long at ``position``, read on to its end
    without keeping it."""
    while stop is None or position < stop:
        chunk = handle.read(chunk_bytes if stop is None else min(chunk_bytes, stop - position))
        if not chunk:
            break
        newline = chunk.find(b"\n")
        if newline >= 0:
            return so_far + newline, True
        so_far += len(chunk)
        position += len(chunk)
    return so_far, False


def _read_at(handle: BinaryIO, offset: int, size: int) -> bytes:
    handle.seek(offset)
    return handle.read(size)


def iter_lines(handle: BinaryIO) -> Iterator[bytes | None]:
    """The non-blank lines of ``handle`` from its position (the last one even without a LF), one
    at a time; None stands for a line over MAX_LINE_BYTES, which is not read. For readers that
    stop early (a header check), where a whole-file read would be wasted."""
    for item in read_line_blocks(handle, handle.tell()):
        if isinstance(item, LineBlock):
            for line in split_lines(item.data[item.start : item.end]):
                yield line.data
        elif isinstance(item, LongLine):
            yield None
        elif item.data.strip():
            yield item.data


def split_lines(data: bytes, base_offset: int = 0, first_number: int = 1) -> Iterator[RawLine]:
    """Non-blank LF-separated lines of ``data`` with their offsets; a trailing CR is kept (JSON ws)."""
    number = first_number
    start = 0
    length = len(data)
    while start < length:
        end = data.find(b"\n", start)
        if end < 0:
            end = length
        chunk = data[start:end]
        if chunk.strip():
            yield RawLine(number, base_offset + start, chunk)
        number += 1
        start = end + 1
