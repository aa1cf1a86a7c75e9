"""Work that could run without end is bounded: the server keeps answering and can always exit.

Each test starts the real server over stdio and gives it what used to hold its workers for good.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import orjson
import pytest

from pi_lsp.server.rpc_client import RpcClient, RpcError
from tests.server.conftest import start_raw

BACKTRACKING = "re:(a|aa)+z"  # exponential in the run of a's for a backtracking engine


def _session_with_text(folder: Path, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    header = {"type": "session", "version": 3, "id": "bt-1", "timestamp": "2026-01-01T00:00:00.000Z",
              "cwd": "/proj"}
    entry = {"type": "message", "id": "m1", "parentId": None, "timestamp": "2026-01-01T00:00:00.000Z",
             "message": {"role": "user", "content": text, "timestamp": 1}}
    path = folder / "bt.jsonl"
    path.write_bytes(orjson.dumps(header) + b"\n" + orjson.dumps(entry) + b"\n")
    return path


async def _error(client: RpcClient, method: str, params: dict[str, object], timeout: float) -> RpcError:
    with pytest.raises(RpcError) as info:
        await client.request(method, params, timeout=timeout)
    return info.value


async def test_backtracking_regex_search_is_bounded_and_does_not_fill_the_pool(tmp_path: Path) -> None:
    sessions = tmp_path / "sessions"
    _session_with_text(sessions, "a" * 60)
    client = await start_raw(tmp_path, PI_CODING_AGENT_SESSION_DIR=str(sessions))
    try:
        # a plain regex search still works
        found = await client.request("pi/listSessions", {"cwd": "/proj", "query": "re:^bt-1 +a+ /proj$"})
        assert [info["id"] for info in found["sessions"]] == ["bt-1"]
        started = time.monotonic()
        query = {"cwd": "/proj", "query": BACKTRACKING}
        searches = [asyncio.ensure_future(_error(client, "pi/listSessions", query, 60)) for _ in range(4)]
        await asyncio.sleep(0.3)
        # with four searches running, other work is still served
        state = await client.request("pi/newSession", {"sessionDir": str(tmp_path / "other")}, timeout=20)
        assert state["entryCount"] == 0
        errors = await asyncio.gather(*searches)
        for error in errors:
            assert error.code == -32602
            assert error.data == {"field": "query", "reason": "timeout"}
            assert "regular expression" in error.message
        assert time.monotonic() - started < 30
    finally:
        await client.close()
