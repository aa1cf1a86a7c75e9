"""Each small message the server sends over stdio is one write: header and body together.

A message written as two writes costs the server two system calls and wakes the editor twice (it
reads the header alone, then waits for the body); over a 200-turn agent run that was the largest
single item of the server's CPU. The server's stdout here is a Linux packet-mode pipe
(``O_DIRECT``), where every write stays a packet of its own and a read returns one packet, so the
test sees the server's writes exactly as they were made.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import select
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO

import orjson
import pytest

from pi_lsp.server.transport import PIPE_BYTES, widen_pipe
from tests.server.support import SERVER, server_env

PIPE_BUF = 4096  # a packet-mode pipe splits a bigger write into packets of this size


def _frame(message: dict[str, object]) -> bytes:
    body = orjson.dumps(message)
    return b"Content-Length: %d\r\n\r\n%b" % (len(body), body)


def _read_packets(fd: int, wanted_ids: set[object], deadline: float) -> list[bytes]:
    """Packets until every id in ``wanted_ids`` has been answered (or the deadline passes)."""
    packets: list[bytes] = []
    stream = b""
    answered: set[object] = set()
    while answered != wanted_ids and time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
        if not ready:
            break
        packet = os.read(fd, 1 << 16)
        if not packet:
            break
        packets.append(packet)
        stream += packet
        while (end := stream.find(b"\r\n\r\n")) >= 0:
            length = int(stream[:end].split(b":", 1)[1])
            if len(stream) < end + 4 + length:
                break
            message = orjson.loads(stream[end + 4 : end + 4 + length])
            answered.add(message.get("id"))
            stream = stream[end + 4 + length :]
    assert answered >= wanted_ids, f"answers missing; packets: {packets!r}"
    return packets


@contextlib.contextmanager
def _server_writing_to(read_end: int, write_end: int, tmp_path: Path) -> Iterator[IO[bytes]]:
    """A server whose stdout is ``write_end`` (our copy closed); yields its stdin. At the end it is
    told to exit and waited for, and ``read_end`` is closed."""
    process = subprocess.Popen(
        SERVER,
        stdin=subprocess.PIPE,
        stdout=write_end,
        stderr=subprocess.DEVNULL,
        env=server_env(tmp_path / "agent"),
    )
    os.close(write_end)
    assert process.stdin is not None
    try:
        yield process.stdin
    finally:
        process.stdin.write(_frame({"jsonrpc": "2.0", "method": "exit"}))
        process.stdin.close()
        process.wait(30)
        os.close(read_end)


def _initialize(tmp_path: Path) -> bytes:
    params = {"processId": os.getpid(), "capabilities": {}, "rootUri": tmp_path.as_uri()}
    return _frame({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params})


def test_each_small_message_is_one_write(tmp_path: Path) -> None:
    try:
        read_end, write_end = os.pipe2(os.O_DIRECT)
    except (AttributeError, OSError):
        pytest.skip("no packet-mode pipes here")
    with _server_writing_to(read_end, write_end, tmp_path) as stdin:
        new_session = {"cwd": str(tmp_path), "sessionDir": str(tmp_path / "sessions")}
        stdin.write(
            _initialize(tmp_path)
            + _frame({"jsonrpc": "2.0", "method": "initialized", "params": {}})
            # answered while pygls loads (``server/early.py``)
            + _frame({"jsonrpc": "2.0", "id": 2, "method": "pi/newSession", "params": new_session})
            # held for pygls, answered by its protocol (``server/protocol.py``)
            + _frame({"jsonrpc": "2.0", "id": 3, "method": "shutdown"})
        )
        stdin.flush()
        packets = _read_packets(read_end, {1, 2, 3}, time.monotonic() + 60)
    starts = [packet for packet in packets if packet.startswith(b"Content-Length: ")]
    assert len(starts) >= 3
    for packet in starts:
        head, _, body = packet.partition(b"\r\n\r\n")
        length = int(head.split(b":", 1)[1])
        assert body, f"a header was written alone: {packet!r}"
        if length + len(head) + 4 <= PIPE_BUF:
            assert len(body) == length, f"a small message took more than one write: {packet!r}"


def test_the_output_pipe_is_widened_for_big_answers(tmp_path: Path) -> None:
    """A 64 KB pipe makes a 30 MB context cross in 460 fills, each a wake-up of both ends; the
    server asks for 1 MB (``transport.widen_pipe``), and only where it is a pipe."""
    get_size = getattr(fcntl, "F_GETPIPE_SZ", None)
    if get_size is None or int(Path("/proc/sys/fs/pipe-max-size").read_text()) < PIPE_BYTES:
        pytest.skip("pipe sizes cannot be asked for here")
    read_end, write_end = os.pipe()
    assert fcntl.fcntl(read_end, get_size) < PIPE_BYTES
    with _server_writing_to(read_end, write_end, tmp_path) as stdin:
        stdin.write(_initialize(tmp_path))
        stdin.flush()
        _read_packets(read_end, {1}, time.monotonic() + 60)
        assert fcntl.fcntl(read_end, get_size) == PIPE_BYTES


def test_widening_leaves_what_is_not_a_pipe(tmp_path: Path) -> None:
    with (tmp_path / "out").open("wb") as file:
        widen_pipe(file.fileno())  # a regular file: nothing to ask, no error
    read_end, write_end = os.pipe()
    try:
        os.close(read_end)
        widen_pipe(write_end)  # a pipe whose reader has gone: still no error
    finally:
        os.close(write_end)
