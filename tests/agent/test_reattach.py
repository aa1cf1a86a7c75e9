"""A shared server (``--tcp --reattach-grace``): runs outlive their connection, as a reloaded editor
window needs, and the server's state file, lock and idle exit (``--state-file``, ``--idle-exit``).

Everything runs the real server over TCP with the real SDK against the loopback fake model."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import stat
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from pi_lsp.client.rpc_client import RpcClient
from tests.agent.chat_support import (
    HELLO,
    MODEL,
    ChatClient,
    Workspace,
    bash_turn,
    no_process_left,
    text_turn,
)
from tests.llm.fake_anthropic import FakeAnthropic, Reply
from tests.pi.pi_rpc import write_agent_dir
from tests.server.network_support import NetworkServer, run_server, start_network_server


async def _connect(server: NetworkServer, ws: Workspace, **options: Any) -> ChatClient:
    rpc = await RpcClient.connect(server.host, server.port)
    return await ChatClient.attach(rpc, ws, options={"model": MODEL, "token": server.token, **options})


async def _stop(server: NetworkServer) -> None:
    server.process.kill()
    await server.process.wait()


@contextlib.asynccontextmanager
async def _shared_server(tmp_path: Path, replies: list[Reply], *args: str) -> AsyncIterator[_World]:
    """A TCP server (``args`` added) on a fresh workspace and fake model; every client is closed."""
    ws = Workspace(HELLO)
    try:
        async with FakeAnthropic(replies) as fake:
            write_agent_dir(ws.agent_dir, fake.url, ws.settings)
            server = await start_network_server(tmp_path, "--tcp", *args, **ws.server_env(fake.url))
            world = _World(ws, server)
            try:
                yield world
            finally:
                for client in world.clients:
                    await client.close()
                await _stop(server)
    finally:
        ws.cleanup()


class _World:
    def __init__(self, ws: Workspace, server: NetworkServer) -> None:
        self.ws, self.server = ws, server
        self.clients: list[ChatClient] = []

    async def connect(self, **options: Any) -> ChatClient:
        client = await _connect(self.server, self.ws, **options)
        self.clients.append(client)
        return client

    async def start_then_leave(self, client: ChatClient, until: str) -> dict[str, Any]:
        """``client`` starts a run on a new session, waits for an event ``until``, then closes
        (a window reload: shutdown, exit, connection gone); the session's state is returned."""
        state = await client.new_session(self.ws)
        prompting = asyncio.ensure_future(client.rpc.request("pi/prompt", {"text": "start"}))
        await client.wait_event(lambda e: e["type"] == until)
        self.clients.remove(client)
        await client.close()
        prompting.cancel()
        return state

    def messages(self) -> list[dict[str, Any]]:
        return [e["message"] for e in self.ws.entries() if e["type"] == "message"]


async def test_a_reattaching_client_answers_the_approval_the_closed_one_was_asked(tmp_path: Path) -> None:
    marker = tmp_path / "approved"
    replies = [bash_turn(f"touch {marker}; echo ran"), text_turn("Done after reload.")]
    async with _shared_server(tmp_path, replies, "--reattach-grace", "30") as world:
        first = await world.connect()
        first.answer_approval = lambda request: ...  # the window reloads before the user answers
        state = await world.start_then_leave(first, "approval_request")

        second = await world.connect()
        second.answer_approval = lambda request: {"decision": "allow"}
        await second.rpc.request("pi/openSession", {"path": state["file"]})
        end = await second.wait_event(lambda e: e["type"] == "agent_end")
        assert end.get("stopReason", "stop") == "stop"
        [asked] = second.approval_requests  # asked again, of the new connection
        assert asked["toolName"] == "bash" and asked["sessionId"] == state["sessionId"]
        assert marker.exists()
        # agent_end comes before the run's last step (pi's compaction check); asked right then,
        # the server answers once that step is done, so the editor does not show a run forever.
        run_state = await second.rpc.request("pi/getRunState", {})
        assert run_state["running"] is False and run_state["pendingApprovals"] == []
        _assert_one_tool_turn(world.messages(), "ran\n", "Done after reload.")


def _assert_one_tool_turn(messages: list[dict[str, Any]], tool_output: str, reply: str) -> None:
    """The session holds the prompt, the call, its result ``tool_output`` and the final ``reply``."""
    assert [m["role"] for m in messages] == ["user", "assistant", "toolResult", "assistant"]
    assert messages[2]["content"][0]["text"] == tool_output
    assert messages[3]["content"][0]["text"] == reply


async def test_a_run_streams_on_to_the_client_that_reopens_its_session(tmp_path: Path) -> None:
    replies = [bash_turn("sleep 1.5; echo slept"), text_turn("Finished.")]
    async with _shared_server(tmp_path, replies, "--reattach-grace", "30") as world:
        state = await world.start_then_leave(await world.connect(approval="auto"), "tool_execution_start")

        second = await world.connect(approval="auto")
        await second.rpc.request("pi/openSession", {"path": state["file"]})
        joined = await second.rpc.request("pi/getRunState", {})
        assert joined["running"] is True
        end = await second.wait_event(lambda e: e["type"] == "agent_end")
        assert end.get("stopReason", "stop") == "stop"
        seqs = [params["seq"] for params in second.events]
        assert seqs == list(range(joined["seq"] + 1, joined["seq"] + 1 + len(seqs)))
        _assert_one_tool_turn(world.messages(), "slept\n", "Finished.")


async def test_nobody_reattaching_aborts_the_run_after_the_grace(tmp_path: Path) -> None:
    replies = [bash_turn("sleep 30.125"), text_turn("never")]
    async with _shared_server(tmp_path, replies, "--reattach-grace", "1") as world:
        await world.start_then_leave(await world.connect(approval="auto"), "tool_execution_update")
        for _ in range(200):
            messages = world.messages()
            if messages and messages[-1].get("stopReason") == "aborted":
                break
            await asyncio.sleep(0.05)
        last = world.messages()[-1]
        assert last["role"] == "assistant" and last["stopReason"] == "aborted"
        assert await no_process_left("sleep 30.125")


async def test_without_grace_a_run_still_ends_with_its_connection(tmp_path: Path) -> None:
    replies = [bash_turn("sleep 30.375"), text_turn("never")]
    async with _shared_server(tmp_path, replies) as world:
        await world.start_then_leave(await world.connect(approval="auto"), "tool_execution_update")
        assert await no_process_left("sleep 30.375")


async def test_state_file_lock_and_idle_exit(tmp_path: Path) -> None:
    state_file = tmp_path / "shared" / "server.json"
    server = await start_network_server(
        tmp_path, "--tcp", "--state-file", str(state_file), "--idle-exit", "1.5"
    )
    try:
        for _ in range(100):  # written right after the announcement
            if state_file.exists():
                break
            await asyncio.sleep(0.02)
        record = json.loads(state_file.read_text())
        assert record["pid"] == server.process.pid
        assert record["tcp"] == f"{server.host}:{server.port}" and record["token"] == server.token
        assert stat.S_IMODE(state_file.stat().st_mode) == 0o600
        assert stat.S_IMODE(state_file.parent.stat().st_mode) == 0o700

        second = run_server(tmp_path, "--tcp", "127.0.0.1:0", "--state-file", str(state_file))
        assert second.returncode == 3, second.stderr
        assert f"pid {server.process.pid}" in second.stderr and server.token not in second.stderr
        assert json.loads(state_file.read_text())["pid"] == server.process.pid  # left alone

        ws = Workspace(HELLO)
        try:
            client = await _connect(server, ws)
            await client.new_session(ws)
            await asyncio.sleep(2.5)  # a connection keeps an idle server alive
            assert server.process.returncode is None
            await client.close()
        finally:
            ws.cleanup()
        assert await asyncio.wait_for(server.process.wait(), 15) == 0
        assert not state_file.exists()
    finally:
        if server.process.returncode is None:
            await _stop(server)


async def test_a_stale_state_file_is_replaced_and_sigterm_removes_it(tmp_path: Path) -> None:
    state_file = tmp_path / "server.json"
    state_file.write_text(json.dumps({"pid": 999999999, "tcp": "127.0.0.1:1", "token": "old"}))
    server = await start_network_server(tmp_path, "--tcp", "--state-file", str(state_file))
    for _ in range(100):
        if json.loads(state_file.read_text())["pid"] == server.process.pid:
            break
        await asyncio.sleep(0.02)
    assert json.loads(state_file.read_text())["pid"] == server.process.pid
    server.process.terminate()
    assert await asyncio.wait_for(server.process.wait(), 15) == 0
    assert not state_file.exists()


def test_shared_server_options_need_a_network_transport(tmp_path: Path) -> None:
    flags = (("--state-file", str(tmp_path / "s.json")), ("--idle-exit", "5"), ("--reattach-grace", "5"))
    for flag, value in flags:
        result = run_server(tmp_path, flag, value)
        assert result.returncode == 1 and f"{flag} needs --tcp or --ws" in result.stderr
    bad = run_server(tmp_path, "--tcp", "127.0.0.1:0", "--idle-exit", "soon")
    assert bad.returncode == 2 and "expected a number of seconds" in bad.stderr
    assert not os.path.exists(tmp_path / "s.json")
