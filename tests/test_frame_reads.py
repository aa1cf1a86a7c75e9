"""Reading framed messages from an asyncio stream: a trusted peer's big body goes into one buffer
of its declared size; anyone else's is read as it arrives."""

from __future__ import annotations

import asyncio
import os

import pytest

from pi_lsp.framing import BIG_BODY_BYTES, FrameError, read_frame_async


def _stream(pieces: list[bytes], *, end: bool = True) -> asyncio.StreamReader:
    reader = asyncio.StreamReader(limit=1 << 16)
    for piece in pieces:
        reader.feed_data(piece)
    if end:
        reader.feed_eof()
    return reader


def _cut(data: bytes, size: int) -> list[bytes]:
    return [data[start : start + size] for start in range(0, len(data), size)]


@pytest.mark.parametrize("trusted", [False, True])
async def test_a_big_body_arrives_whole_and_in_order(trusted: bool) -> None:
    body = os.urandom(3 * BIG_BODY_BYTES + 12345)
    second = b'{"jsonrpc":"2.0","id":2,"result":null}'
    data = b"Content-Length: %d\r\n\r\n" % len(body) + body
    data += b"Content-Length: %d\r\n\r\n" % len(second) + second
    reader = _stream(_cut(data, 65536 - 7))
    first = await read_frame_async(reader, 1 << 30, trusted=trusted)
    assert first == body
    assert type(first) is (bytearray if trusted else bytes)
    assert await read_frame_async(reader, 1 << 30, trusted=trusted) == second
    assert await read_frame_async(reader, 1 << 30, trusted=trusted) is None


async def test_a_trusted_body_fed_while_it_is_read() -> None:
    body = os.urandom(2 * BIG_BODY_BYTES + 1)
    reader = _stream([b"Content-Length: %d\r\n\r\n" % len(body)], end=False)
    read = asyncio.ensure_future(read_frame_async(reader, 1 << 30, trusted=True))
    for piece in _cut(body, 100_000):
        await asyncio.sleep(0)
        assert not read.done()
        reader.feed_data(piece)
    assert await read == body


@pytest.mark.parametrize("trusted", [False, True])
async def test_a_body_cut_short_is_the_end_of_input(trusted: bool) -> None:
    body = os.urandom(BIG_BODY_BYTES + 10)
    reader = _stream([b"Content-Length: %d\r\n\r\n" % len(body), body[:-1]])
    assert await read_frame_async(reader, 1 << 30, trusted=trusted) is None


async def test_the_limit_holds_for_a_trusted_peer_too() -> None:
    reader = _stream([b"Content-Length: 5000000\r\n\r\n"])
    with pytest.raises(FrameError, match="larger than"):
        await read_frame_async(reader, 4_000_000, trusted=True)


async def test_a_body_too_big_to_hold_is_a_frame_error(monkeypatch: pytest.MonkeyPatch) -> None:
    """A length no buffer can be made for ends the stream as bad framing (the client's pending
    requests then fail at once) instead of escaping as a MemoryError that leaves them waiting."""
    import pi_lsp.framing as framing

    def no_memory(size: int) -> bytearray:
        raise MemoryError

    monkeypatch.setattr(framing, "bytearray", no_memory, raising=False)
    reader = _stream([b"Content-Length: %d\r\n\r\n" % (BIG_BODY_BYTES + 1), b"x" * 10])
    with pytest.raises(FrameError, match="cannot be held"):
        await read_frame_async(reader, 1 << 40, trusted=True)
