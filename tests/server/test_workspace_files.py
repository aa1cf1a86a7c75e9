"""Files a workspace controls cannot hang the server or make it read without bound (issue 8).

Each test runs the real server over stdio on a workspace holding a hostile file: a FIFO (``open``
would wait for a writer forever), a link to ``/dev/zero`` (endless), a sparse file of gigabytes.
The server answers at once and says in the prompt's diagnostics which file it did not read.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from pi_lsp.client.rpc_client import RpcClient
from pi_lsp.safe_io import MAX_TEXT_BYTES
from tests.server.support import SERVER, server_env

ANSWER_S = 10  # far above a normal answer, far below "hangs for good"


@asynccontextmanager
async def raw_server(tmp_path: Path, *args: str) -> AsyncIterator[RpcClient]:
    """A server whose agent dir and HOME are inside ``tmp_path`` (not initialized yet)."""
    env = server_env(tmp_path / "agent", HOME=str(tmp_path / "home"))
    client = await RpcClient.start([*SERVER, *args], env=env, quiet=True)
    try:
        yield client
    finally:
        await client.close(timeout=ANSWER_S)


async def initialize(client: RpcClient, root: Path) -> Any:
    params = {
        "processId": os.getpid(),
        "capabilities": {},
        "rootUri": root.as_uri(),
        "workspaceFolders": [{"uri": root.as_uri(), "name": root.name}],
    }
    result = await client.request("initialize", params, timeout=ANSWER_S)
    client.notify("initialized", {})
    return result


def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / ".pi").mkdir(parents=True)
    (tmp_path / "agent").mkdir()
    (tmp_path / "home").mkdir()
    return ws


def messages(result: dict[str, Any], path: Path) -> list[str]:
    return [d["message"] for d in result["diagnostics"] if d["path"] == str(path)]


async def test_a_fifo_settings_file_does_not_freeze_initialize(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    os.mkfifo(ws / ".pi" / "settings.json")
    async with raw_server(tmp_path) as client:
        result = await initialize(client, ws)
        assert "capabilities" in result
        prompt = await client.request("pi/getSystemPrompt", {"cwd": str(ws)}, timeout=ANSWER_S)
        assert any("FIFO" in m for m in messages(prompt, ws / ".pi" / "settings.json"))
        # the session requests, which read the settings too, still work
        state = await client.request("pi/newSession", {"persist": False}, timeout=ANSWER_S)
        assert state["cwd"] == str(ws)
    assert client.process.returncode == 0


async def test_a_fifo_agents_file_does_not_hang_prompt_shutdown_or_exit(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    os.mkfifo(ws / "AGENTS.md")
    (ws / "CLAUDE.md").write_text("Use tabs.\n")
    async with raw_server(tmp_path) as client:
        await initialize(client, ws)
        prompt = await client.request("pi/getSystemPrompt", {"cwd": str(ws)}, timeout=ANSWER_S)
        assert any("not a regular file (a FIFO)" in m for m in messages(prompt, ws / "AGENTS.md"))
        # as for an unreadable candidate, pi's next candidate is used
        assert [s["path"] for s in prompt["sources"] if s["kind"] == "agents"] == [str(ws / "CLAUDE.md")]
        assert await client.request("shutdown", None, omit_params=True, timeout=ANSWER_S) is None
        client.notify("exit")
        assert await _exit_code(client) == 0


async def _exit_code(client: RpcClient) -> int | None:
    return await asyncio.wait_for(client.process.wait(), ANSWER_S)


async def test_endless_and_huge_prompt_files_are_skipped(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    zero = "/dev/zero"
    (ws / "AGENTS.md").symlink_to(zero)
    (ws / ".pi" / "SYSTEM.md").symlink_to(zero)
    (ws / ".pi" / "settings.json").symlink_to(zero)
    huge = ws / ".pi" / "APPEND_SYSTEM.md"
    with open(huge, "wb") as handle:  # sparse: no disk used
        handle.truncate(4 << 30)
    skills = ws / ".pi" / "skills"
    (skills / "zero").mkdir(parents=True)
    (skills / "zero" / "SKILL.md").symlink_to(zero)
    (skills / "big").mkdir()
    big = skills / "big" / "SKILL.md"
    big.write_text("---\nname: big\ndescription: Big.\n---\n" + "x" * MAX_TEXT_BYTES)
    (skills / "fine").mkdir()
    (skills / "fine" / "SKILL.md").write_text("---\nname: fine\ndescription: Fine.\n---\nBody.\n")
    async with raw_server(tmp_path) as client:
        await initialize(client, ws)
        prompt = await client.request("pi/getSystemPrompt", {"cwd": str(ws)}, timeout=ANSWER_S)
        assert any("character device" in m for m in messages(prompt, ws / "AGENTS.md"))
        assert any("character device" in m for m in messages(prompt, ws / ".pi" / "settings.json"))
        assert any("character device" in m for m in messages(prompt, ws / ".pi" / "SYSTEM.md"))
        assert any("larger than 1,048,576 bytes" in m for m in messages(prompt, huge))
        assert any("larger than 1,048,576 bytes" in m for m in messages(prompt, big))
        assert [s["name"] for s in prompt["skills"]] == ["fine"]
        assert len(prompt["text"]) < 100_000
        listed = await client.request("pi/listSkills", {"cwd": str(ws)}, timeout=ANSWER_S)
        assert [s["name"] for s in listed["skills"]] == ["fine"]


async def test_a_debug_log_inside_a_watched_folder_does_not_feed_itself(tmp_path: Path) -> None:
    """The log file lies in a skills folder (watched recursively) under a name the watcher takes for
    a prompt file (``*.md``); at debug level every event and rebuild is logged. Idle, the server
    must neither rebuild the prompt nor keep writing its log."""
    ws = workspace(tmp_path)
    (ws / ".pi" / "skills").mkdir()
    log = ws / ".pi" / "skills" / "debug.md"
    async with raw_server(tmp_path, "--log-file", str(log), "--log-level", "debug") as client:
        await initialize(client, ws)
        await client.request("pi/getSystemPrompt", {"cwd": str(ws)}, timeout=ANSWER_S)
        await asyncio.sleep(0.5)  # the watcher's debounce and any rebuild it started
        size = log.stat().st_size
        await asyncio.sleep(1.5)
        idle = log.stat().st_size - size
        changed = [m for m in client.drain_notifications() if m.get("method") == "pi/systemPromptChanged"]
        assert changed == []  # nothing changed but the log, which is not a prompt file
        assert idle < 4096, log.read_text()[-2000:]
        assert str(log) not in log.read_text()  # no event about the log file was ever logged
