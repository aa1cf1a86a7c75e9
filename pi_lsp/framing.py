"""LSP base-protocol framing: ``Content-Length`` headers, a blank line, then the body.

Only the two headers LSP defines are accepted. Anything else — an HTTP request line from a browser's
``fetch``, an unknown header, a negative, non-numeric or absurd length — is a :class:`FrameError`:
the transport reports it and closes that stream without acting on the body, since a stream that
framed one message wrongly cannot be trusted to frame the next one right.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any, Literal, Protocol, overload

MAX_BODY_BYTES = 256 * 1024 * 1024
"""The largest message body accepted (a bigger ``Content-Length`` is refused before reading it)."""

Body = bytes | bytearray
"""A message body as read: a big one from a trusted peer is the buffer it was read into."""

MAX_HEADER_LINE = 1024
_ALLOWED_HEADERS = (b"content-length", b"content-type")


class FrameError(ValueError):
    """The byte stream is not LSP framing; the message says what was wrong (never the body)."""


def _header_value(line: bytes, length: int | None, limit: int) -> int | None:
    """Fold one header line into the Content-Length seen so far; FrameError for anything else."""
    if len(line) > MAX_HEADER_LINE:
        raise FrameError("a header line is too long")
    name, colon, value = line.partition(b":")
    name = name.strip().lower()
    if not colon or name not in _ALLOWED_HEADERS:
        shown = line[:60].decode("ascii", "replace")
        raise FrameError(f"not an LSP header: {shown!r} (only Content-Length and Content-Type are allowed)")
    if name == b"content-type":
        return length
    if length is not None:
        raise FrameError("Content-Length is given twice")
    text = value.strip()
    if not text.isdigit():  # also rejects "-5", "+5", "1e3" and an empty value
        shown = text[:30].decode("ascii", "replace")
        raise FrameError(f"Content-Length must be a non-negative integer, got {shown!r}")
    parsed = int(text)
    if parsed > limit:
        raise FrameError(f"Content-Length {parsed} is larger than the {limit}-byte limit")
    return parsed


class LineReader(Protocol):
    def readline(self) -> bytes: ...
    def read(self, size: int) -> bytes: ...


def read_frame(stream: LineReader, limit: int = MAX_BODY_BYTES) -> bytes | None:
    """One message body from a blocking stream; None at end of input, FrameError on bad framing."""
    length: int | None = None
    while True:
        line = stream.readline()
        if not line:
            return None
        text = line.strip()
        if text:
            length = _header_value(text, length, limit)
            continue
        if length is None:
            continue  # stray blank line between messages
        body = stream.read(length)
        return body if len(body) == length else None


@overload
async def read_frame_async(
    reader: asyncio.StreamReader, limit: int = MAX_BODY_BYTES, *, trusted: Literal[False] = False
) -> bytes | None: ...
@overload
async def read_frame_async(reader: asyncio.StreamReader, limit: int, *, trusted: bool) -> Body | None: ...
async def read_frame_async(
    reader: asyncio.StreamReader, limit: int = MAX_BODY_BYTES, *, trusted: bool = False
) -> Body | None:
    """One message body from an asyncio stream; None at end of input, FrameError on bad framing.

    A ``trusted`` peer's big body (our own server's answer) is read into one buffer of the size it
    declares (:func:`_read_declared`); an untrusted one is read as it arrives, so that a length
    alone never makes us hold memory."""
    length: int | None = None
    while True:
        try:
            line = await reader.readuntil(b"\n")
        except asyncio.IncompleteReadError as error:
            if error.partial.strip():
                raise FrameError("the stream ended inside a header") from None
            return None
        except asyncio.LimitOverrunError:
            raise FrameError("a header line is too long") from None
        text = line.strip()
        if text:
            length = _header_value(text, length, limit)
            continue
        if length is None:
            continue
        if trusted and length > BIG_BODY_BYTES:
            return await _read_declared(reader, length)
        try:
            return await reader.readexactly(length)
        except asyncio.IncompleteReadError:
            return None


BIG_BODY_BYTES = 1 << 20
_READ_PIECE = 1 << 20


async def _read_declared(reader: asyncio.StreamReader, length: int) -> bytearray | None:
    """``length`` bytes read into one buffer made at that size; None when the stream ends first.

    ``readexactly`` copies what arrives into a buffer that grows, then copies it all out again:
    for a 30 MB context that is two fresh 30 MB areas (their page faults) and 21–27 ms of the
    client's CPU, against 10–12 ms here."""
    try:
        body = bytearray(length)
    except MemoryError:
        raise FrameError(f"a {length}-byte body cannot be held in memory") from None
    view = memoryview(body)
    filled = 0
    while filled < length:
        piece = await reader.read(min(length - filled, _READ_PIECE))
        if not piece:
            return None
        view[filled : filled + len(piece)] = piece
        filled += len(piece)
    return body


def write_pieces(writer: Any, pieces: Sequence[bytes | memoryview]) -> Any:
    """Write a framed message's pieces in order: all at once through the writer's own
    ``write_pieces`` where it has one (the stdio writer's ``writev``), else one ``write`` each.
    Returns what the last call returned (an awaitable, for an asynchronous writer)."""
    write_all = getattr(writer, "write_pieces", None)
    if write_all is not None:
        return write_all(pieces)
    result = None
    for piece in pieces:
        result = writer.write(piece)
    return result


def frame(body: bytes) -> bytes:
    """The header block for ``body`` (written apart from it so a big body is not copied)."""
    return header(len(body))


def header(size: int) -> bytes:
    """The header block of a body of ``size`` bytes."""
    return b"Content-Length: %d\r\n\r\n" % size


JOIN_LIMIT = 64 * 1024
"""Bodies up to this size are written in one piece with their header (see :func:`frame_pieces`)."""


def frame_pieces(body: Sequence[bytes | memoryview]) -> list[bytes | memoryview]:
    """A message body (given as its pieces in order) framed, as the pieces to write: one for a small
    body, so that a message is one write (one system call, one wake-up of the editor) rather than
    two; the header and the body's pieces apart for a big one, which joining would copy once more."""
    size = sum(map(len, body))
    if size <= JOIN_LIMIT:
        return [b"".join((header(size), *body))]
    return [header(size), *body]
