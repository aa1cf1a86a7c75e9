"""A big answer reaches the editor whole, even when the server is stopped and continued mid-write.

Under ``PYTHONUNBUFFERED`` (set in many containers and editor launch configurations) the server's
``sys.stdout.buffer`` is a raw file, whose ``write`` may take only part of a buffer: a pipe write
interrupted by a stop (Ctrl-Z in the editor's terminal, a debugger or profiler attaching) returns
the count written so far. The server dropped the rest, so the editor got the first ~130 KB of a
30 MB ``pi/buildContext`` answer and then waited forever. Every write now continues until the whole
message is out (:mod:`pi_lsp.full_writes`).
"""

from __future__ import annotations

import asyncio
import os
import signal
import threading
from pathlib import Path

import orjson
import pytest

from pi_lsp.client.rpc_client import RpcClient
from tests.server.support import start_raw, stop_and_continue, write_linear_session

LINE = "\nthe quick brown fox jumps over the lazy dog"
SHAPES = {
    "few big messages": (24, LINE * 24_000),  # about 1 MB a message
    # the answer is written from its pieces (a view of each stored message and the commas between
    # them), over 1,024 at a time: several writev calls, each of which a stop may cut short
    "many messages": (2_400, LINE * 240),
}


@pytest.mark.parametrize("shape", list(SHAPES))
@pytest.mark.parametrize("unbuffered", ["1", ""])
async def test_a_big_answer_arrives_whole_across_stops(tmp_path: Path, unbuffered: str, shape: str) -> None:
    messages, text = SHAPES[shape]
    path = write_linear_session(tmp_path / "big.jsonl", messages, pad=text)
    client: RpcClient = await start_raw(tmp_path, PYTHONUNBUFFERED=unbuffered)
    assert client._process is not None
    done = threading.Event()
    try:
        await client.request("pi/openSession", {"path": str(path)}, timeout=60)
        pid = client._process.pid
        stopper = threading.Thread(target=stop_and_continue, args=(pid, done), daemon=True)
        for _ in range(3):  # each answer is ~24 MB, written while the server is stopped every few ms
            request = asyncio.ensure_future(client.request_raw("pi/buildContext", {}, timeout=30))
            if not stopper.is_alive():
                stopper.start()
            body = await request
            context = orjson.loads(body)["result"]
            texts = [message["content"][0]["text"] for message in context["messages"]]
            words = ["answer" if n % 2 else "question" for n in range(messages)]
            assert texts == [f"{word} {n}{text}" for n, word in enumerate(words)]
        done.set()
        stopper.join()
        os.kill(pid, signal.SIGCONT)
        # the connection is still in step: the next request is answered as usual
        state = await client.request("pi/getSessionState", {}, timeout=30)
        assert state["entryCount"] == messages
    finally:
        done.set()
        if client._process is not None and client._process.returncode is None:
            os.kill(client._process.pid, signal.SIGCONT)
        await client.close()
