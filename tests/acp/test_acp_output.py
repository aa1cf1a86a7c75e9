"""The ACP connection's output is bounded: a client that stops reading ends the connection.

Without the bound, every ``session/update`` of a run would pile up in memory while the client
does not read; with it, the queue stops at :data:`~pi_lsp.outbox.MAX_QUEUED_BYTES`, the
connection is declared lost (which ends its runs) and reading stops too.
"""

from __future__ import annotations

import asyncio

from pi_lsp.acp.connection import Connection
from pi_lsp.outbox import MAX_QUEUED_BYTES


async def test_a_client_that_stops_reading_is_dropped_not_buffered() -> None:
    stalled = asyncio.Event()  # never set: the client's pipe is full

    async def send(body: bytes) -> None:
        await stalled.wait()

    lost: list[bool] = []
    connection = Connection(send, requests={}, notifications={}, on_lost=lambda: lost.append(True))
    reader = asyncio.StreamReader()  # the client sends nothing more either
    serving = asyncio.ensure_future(connection.serve(reader))
    await asyncio.sleep(0.05)  # it is listening
    chunk = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "x" * 4000}}
    for _ in range(2 * MAX_QUEUED_BYTES // 4000):
        connection.notify("session/update", {"sessionId": "s", "update": chunk})
        assert connection.outbox.queued_bytes <= MAX_QUEUED_BYTES
    assert lost == [True] and connection.closed.is_set()
    await asyncio.wait_for(serving, 5)  # it stopped listening as well
    assert connection.outbox.queued_bytes == 0
    await connection.aclose()


async def test_a_reading_client_gets_every_message_in_order() -> None:
    received: list[bytes] = []

    async def send(body: bytes) -> None:
        received.append(body)
        await asyncio.sleep(0)

    connection = Connection(send, requests={}, notifications={})
    for number in range(1000):
        connection.notify("session/update", {"n": number})
    await connection.outbox.flush(5)
    assert len(received) == 1000 and received[-1].endswith(b'{"n":999}}\n')
    await connection.aclose()
