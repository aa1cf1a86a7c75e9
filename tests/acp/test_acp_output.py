"""The ACP connection's output is bounded: a client that stops reading ends the connection.

Without the bound, every ``session/update`` of a run would pile up in memory while the client
does not read; with it, the queue stops at :data:`~pi_lsp.outbox.MAX_QUEUED_BYTES`, the
connection is declared lost (which ends its runs) and reading stops too.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

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


async def test_the_real_process_drops_a_client_that_never_reads(tmp_path: Path) -> None:
    """``pi-lsp acp`` whose client sends requests but never reads the answers: once the answers
    waiting exceed the bound, the process lets the client go and exits by itself (stdin still open)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PI_", "ANTHROPIC_"))}
    env["PI_CODING_AGENT_DIR"] = str(tmp_path / "agent")
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "pi_lsp", "acp", env=env, cwd=str(tmp_path),
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL,
    )  # fmt: skip
    assert process.stdin is not None
    name = "x" * 10_000  # each answer: "method not found: xxx…", ~10 KB
    line = json.dumps({"jsonrpc": "2.0", "id": 1, "method": name}).encode() + b"\n"
    try:
        for _ in range(3 * MAX_QUEUED_BYTES // len(line)):
            process.stdin.write(line)
            try:
                await asyncio.wait_for(process.stdin.drain(), 5)
            except (ConnectionError, TimeoutError):
                break  # it stopped reading us: it has let us go
            if process.returncode is not None:
                break
        for _ in range(300):  # (not process.wait(): that also waits for the stdout we never read)
            if process.returncode is not None:
                break
            await asyncio.sleep(0.1)
        assert process.returncode == 0  # it ended by itself
    finally:
        if process.returncode is None:
            process.kill()
        assert process.stdout is not None
        await asyncio.wait_for(process.stdout.read(), 30)  # what it had left in the pipe, then EOF
        await asyncio.wait_for(process.wait(), 30)
