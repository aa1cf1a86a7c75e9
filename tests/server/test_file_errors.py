"""File-system failures come back as FileError (-32007, ``data: {path, reason}``), never -32603.

The server runs as a real subprocess over stdio; the failures are real: a directory where a file
is expected, a missing directory, a file-size limit (``RLIMIT_FSIZE``) and, where this machine
lets us mount one, a tmpfs that fills up. After a refused append the file holds exactly the
acknowledged entries, and pi reads it so.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from pi_lsp.client.rpc_client import RpcClient, RpcError
from tests.oracle import PiOracle, optional_checks_run
from tests.server.support import SERVER, assistant, server_env, start_raw, user

FILE_ERROR = -32007


async def _error(client: RpcClient, method: str, params: dict[str, Any]) -> RpcError:
    with pytest.raises(RpcError) as info:
        await client.request(method, params, timeout=30)
    return info.value


async def test_open_a_directory_is_a_file_error(tmp_path: Path) -> None:
    client = await start_raw(tmp_path)
    try:
        folder = tmp_path / "folder.jsonl"
        folder.mkdir()
        error = await _error(client, "pi/openSession", {"path": str(folder)})
        assert error.code == FILE_ERROR
        assert error.data == {"path": str(folder), "reason": "notRegularFile"}
        # the server is still fine
        state = await client.request("pi/newSession", {"sessionDir": str(tmp_path / "s")})
        assert state["entryCount"] == 0
    finally:
        await client.close()


async def test_session_dir_below_a_file_is_a_file_error(tmp_path: Path) -> None:
    client = await start_raw(tmp_path)
    try:
        blocker = tmp_path / "plain-file"
        blocker.write_text("x")
        error = await _error(client, "pi/newSession", {"sessionDir": str(blocker / "sessions")})
        assert error.code == FILE_ERROR
        assert error.data["reason"] == "notFound"
        assert error.data["path"].startswith(str(blocker))
    finally:
        await client.close()


def _fsize_limited_server(limit: int) -> list[str]:
    """The server command, started under a file-size limit (writes past it fail with EFBIG)."""
    code = (
        "import os, resource, sys; "
        f"resource.setrlimit(resource.RLIMIT_FSIZE, ({limit}, {limit})); "
        "os.execv(sys.argv[1], sys.argv[1:])"
    )
    return [sys.executable, "-c", code, *SERVER]


async def _append_until_refused(client: RpcClient, session_dir: Path) -> tuple[str, list[str], RpcError]:
    state = await client.request("pi/newSession", {"sessionDir": str(session_dir)})
    acknowledged: list[str] = []
    big = "x" * 6000
    for number in range(200):
        entry = user(f"{number} {big}") if number % 2 == 0 else assistant(f"{number} {big}")
        try:
            result = await client.request("pi/appendEntry", {"entry": entry}, timeout=30)
        except RpcError as error:
            return state["file"], acknowledged, error
        acknowledged.append(result["id"])
    raise AssertionError("the file never filled up")


def _check_file_holds_exactly(path: str, acknowledged: list[str], request: pytest.FixtureRequest) -> None:
    data = Path(path).read_bytes()
    assert data.endswith(b"\n"), "a refused append left a torn line"
    lines = [orjson.loads(line) for line in data.splitlines()]
    assert lines[0]["type"] == "session"
    assert [line["id"] for line in lines[1:]] == acknowledged
    if optional_checks_run():
        oracle: PiOracle = request.getfixturevalue("pi_oracle")
        pi = oracle.result("load", path=path, treeFormat="none")
        assert [entry["id"] for entry in pi["entries"]] == acknowledged


async def test_file_size_limit_refuses_the_append_and_keeps_the_file_whole(
    tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    env = server_env(tmp_path / "agent")
    client = await RpcClient.start(_fsize_limited_server(64 * 1024), env=env, quiet=True)
    try:
        await client.initialize(str(tmp_path))
        path, acknowledged, error = await _append_until_refused(client, tmp_path / "sessions")
        assert error.code == FILE_ERROR, error
        assert error.data == {"path": path, "reason": "tooLarge"}
        assert len(acknowledged) >= 4
        _check_file_holds_exactly(path, acknowledged, request)
        state = await client.request("pi/getSessionState", {})
        assert state["entryCount"] == len(acknowledged) and state["leafId"] == acknowledged[-1]
    finally:
        await client.close()


@contextlib.contextmanager
def _small_tmpfs(where: Path) -> Iterator[Path]:
    where.mkdir()
    try:
        done = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(where)], capture_output=True, check=False
        )
    except OSError:
        done = None
    if done is None or done.returncode != 0:
        pytest.skip("cannot mount a tmpfs here (needs root); the RLIMIT_FSIZE test covers the same path")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


@pytest.mark.skipif(os.geteuid() != 0, reason="mounting a tmpfs needs root")
async def test_disk_full_refuses_the_append_and_keeps_the_file_whole(
    tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    with _small_tmpfs(tmp_path / "small") as small:
        client = await start_raw(tmp_path)
        try:
            path, acknowledged, error = await _append_until_refused(client, small / "sessions")
            assert error.code == FILE_ERROR, error
            assert error.data == {"path": path, "reason": "noSpace"}
            _check_file_holds_exactly(path, acknowledged, request)
        finally:
            await client.close()


async def _flushed_session(client: RpcClient, tmp_path: Path) -> tuple[dict[str, Any], Path, list[str]]:
    state = await client.request("pi/newSession", {"sessionDir": str(tmp_path / "sessions")})
    ids = []
    for entry in (user("q"), assistant("a")):
        ids.append((await client.request("pi/appendEntry", {"entry": entry}))["id"])
    return state, Path(state["file"]), ids


async def test_deleted_session_file_is_written_again_and_announced(
    tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    client = await start_raw(tmp_path)
    try:
        state, path, ids = await _flushed_session(client, tmp_path)
        await asyncio.sleep(0.2)
        client.drain_notifications()
        path.unlink()
        new = await client.request("pi/appendEntry", {"entry": user("after the delete")})
        reasons = []
        while "append" not in reasons:
            reasons.append((await client.next_notification("pi/sessionChanged"))["reason"])
        assert "rewritten" in reasons and reasons.index("rewritten") < reasons.index("append")
        _check_file_holds_exactly(str(path), [*ids, new["id"]], request)
        after = await client.request("pi/getSessionState", {})
        assert after["sessionId"] == state["sessionId"]
        assert any("deleted" in d["message"] for d in after["diagnostics"])
    finally:
        await client.close()


async def test_session_file_replaced_by_another_session_is_refused(tmp_path: Path) -> None:
    client = await start_raw(tmp_path)
    try:
        state, path, _ids = await _flushed_session(client, tmp_path)
        other = tmp_path / "other.jsonl"
        other.write_text(
            '{"type":"session","version":3,"id":"other","timestamp":"2026-01-01T00:00:00.000Z"}\n'
        )
        os.replace(other, path)
        theirs = path.read_bytes()
        error = await _error(client, "pi/appendEntry", {"entry": user("mine")})
        assert error.code == FILE_ERROR and error.data == {"path": str(path), "reason": "replaced"}
        assert path.read_bytes() == theirs
        assert (await client.request("pi/getSessionState", {}))["sessionId"] == state["sessionId"]
    finally:
        await client.close()
