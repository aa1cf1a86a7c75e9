"""``pi-lsp acp`` over stdin/stdout.

The protocol's output is a duplicate of the original stdout; file descriptor 1 then points at
stderr, so a stray ``print`` of any library can never corrupt the JSON-RPC stream.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
import threading
from collections.abc import Callable
from typing import Any, Protocol

from pi_lsp.acp.agent import AcpAgent
from pi_lsp.acp.connection import Connection
from pi_lsp.full_writes import write_all
from pi_lsp.service.build import build_service

log = logging.getLogger(__name__)
SETTLE_SECONDS = 5.0


class Writer(Protocol):
    def write(self, data: bytes) -> None: ...
    async def drain(self) -> None: ...


async def serve_streams(reader: asyncio.StreamReader, writer: Writer) -> None:
    """Serve one ACP client on a pair of streams until its input ends (or it stops reading)."""
    service = build_service()
    agent = AcpAgent(service)

    async def send(body: bytes) -> None:
        writer.write(body)
        await writer.drain()

    connection = Connection(
        send,
        requests=agent.requests(),
        notifications=agent.notifications(),
        write_now=_write_now(writer),
        on_message=service.warm_up.touch,
    )
    agent.connection = connection
    service.warm_up.touch()  # the first prompt's modules load once the client goes quiet
    try:
        await connection.serve(reader)
        await connection.settle(SETTLE_SECONDS)  # the last requests before end of input are answered
    finally:
        await agent.aclose()  # runs still going end (their client is gone), as pi's do
        await connection.settle(SETTLE_SECONDS)
        await connection.aclose()
        await service.close()


def _write_now(writer: Writer) -> Callable[[bytes], bool] | None:
    """A message goes straight into the pipe transport while its buffer is empty (at most that one
    message is then buffered there); otherwise it waits in the outbox, which bounds the rest."""
    transport = getattr(writer, "transport", None)
    if transport is None:
        return None

    def write_now(body: bytes) -> bool:
        if transport.is_closing() or transport.get_write_buffer_size() > 0:
            return False
        transport.write(body)
        return True

    return write_now


async def _stdio() -> None:
    loop = asyncio.get_running_loop()
    out_fd = os.dup(sys.stdout.fileno())
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    reader = asyncio.StreamReader(limit=2**20)
    try:
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin.buffer)
    except ValueError:  # a regular file (``pi-lsp acp < requests``): read it in a thread
        _feed_from_thread(reader, sys.stdin.buffer.fileno())
    out = os.fdopen(out_fd, "wb", buffering=0)
    try:
        transport, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, out)
    except ValueError:  # stdout is a regular file: blocking writes in a thread, in order
        await serve_streams(reader, _ThreadWriter(out))
        return
    writer = asyncio.StreamWriter(transport, protocol, None, loop)
    try:
        await serve_streams(reader, writer)
    finally:
        transport.close()


def _feed_from_thread(reader: asyncio.StreamReader, fd: int) -> None:
    loop = asyncio.get_running_loop()

    def pump() -> None:
        while chunk := os.read(fd, 1 << 16):
            loop.call_soon_threadsafe(reader.feed_data, chunk)
        loop.call_soon_threadsafe(reader.feed_eof)

    threading.Thread(target=pump, name="pi-lsp-acp-stdin", daemon=True).start()


class _ThreadWriter:
    """``write`` + ``drain`` of a StreamWriter over a file that is not a pipe."""

    def __init__(self, out: Any) -> None:
        self.out = out
        self.pending = bytearray()

    def write(self, data: bytes) -> None:
        self.pending += data

    async def drain(self) -> None:
        data, self.pending = bytes(self.pending), bytearray()
        await asyncio.to_thread(write_all, self.out.fileno(), data)


def serve_acp() -> int:
    """Run the ACP agent on stdio; 0 when the client closed its end."""
    try:
        asyncio.run(_stdio())
    except KeyboardInterrupt:
        return 130
    return 0
