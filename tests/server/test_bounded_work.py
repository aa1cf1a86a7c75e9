"""Work that could run without end is bounded: the server keeps answering and can always exit.

Each test starts the real server over stdio and gives it what used to hold its workers for good.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import orjson
import pytest

from pi_lsp.client.rpc_client import RpcClient, RpcError
from tests.server.support import start_raw

BACKTRACKING = "re:(a|aa)+z"  # exponential in the run of a's for a backtracking engine


def _session_with_text(folder: Path, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    header = {
        "type": "session",
        "version": 3,
        "id": "bt-1",
        "timestamp": "2026-01-01T00:00:00.000Z",
        "cwd": "/proj",
    }
    entry = {
        "type": "message",
        "id": "m1",
        "parentId": None,
        "timestamp": "2026-01-01T00:00:00.000Z",
        "message": {"role": "user", "content": text, "timestamp": 1},
    }
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


def _hold_lock(path: Path) -> int:
    """Take the session file's write lock as a hung writer in another process would."""
    import fcntl
    import os

    fd = os.open(path, os.O_RDWR)
    fcntl.flock(fd, fcntl.LOCK_EX)
    return fd


async def _four_locked_sessions(client: RpcClient, tmp_path: Path) -> list[tuple[str, Path, int]]:
    from tests.server.support import assistant, user

    held = []
    for number in range(4):
        state = await client.request("pi/newSession", {"sessionDir": str(tmp_path / f"s{number}")})
        await client.request("pi/appendEntry", {"entry": user("q")})
        await client.request("pi/appendEntry", {"entry": assistant("a")})
        path = Path(state["file"])
        held.append((state["sessionId"], path, _hold_lock(path)))
    return held


async def test_writes_stuck_on_a_held_lock_time_out_and_free_the_pool(tmp_path: Path) -> None:
    import os

    from tests.server.support import user

    client = await start_raw(tmp_path)
    held: list[tuple[str, Path, int]] = []
    try:
        held = await _four_locked_sessions(client, tmp_path)
        before = [path.read_bytes() for _, path, _ in held]
        appends = [
            asyncio.ensure_future(_error(client, "pi/appendEntry", {"session": sid, "entry": user("x")}, 60))
            for sid, _, _ in held
        ]
        await asyncio.sleep(0.5)
        other = await client.request("pi/newSession", {"sessionDir": str(tmp_path / "other")}, timeout=30)
        # the pool was full of stuck writes; it is served once they gave up (10 s), not never
        assert await client.request("pi/getSessionState", {"session": other["sessionId"]}, timeout=30)
        for error in await asyncio.gather(*appends):
            assert error.code == -32007 and error.data["reason"] == "timeout"
        assert [path.read_bytes() for _, path, _ in held] == before
    finally:
        for _, _, fd in held:
            os.close(fd)
        await client.close()


async def test_exit_exits_with_four_workers_stuck(tmp_path: Path) -> None:
    import os

    from tests.server.support import user

    client = await start_raw(tmp_path)
    held: list[tuple[str, Path, int]] = []
    try:
        held = await _four_locked_sessions(client, tmp_path)
        for sid, _, _ in held:
            client.request_future("pi/appendEntry", {"session": sid, "entry": user("x")})
        await asyncio.sleep(0.5)
        started = time.monotonic()
        client.request_future("shutdown", None, omit_params=True)
        client.notify("exit")
        await asyncio.wait_for(client.process.wait(), 9)  # before the stuck writes' own 10 s timeout
        assert time.monotonic() - started < 9
    finally:
        for _, _, fd in held:
            os.close(fd)
        if client.process.returncode is None:
            client.process.kill()
