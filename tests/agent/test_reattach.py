"""A shared server (``--tcp --reattach-grace``): runs outlive their connection, as a reloaded editor
window needs, and the server's state file, lock and idle exit (``--state-file``, ``--idle-exit``).

Everything runs the real server over TCP with the real SDK against the loopback fake model."""

from __future__ import annotations

import asyncio
import json
import os
import stat
from pathlib import Path
from typing import Any

from pi_lsp.server.rpc_client import RpcClient
from tests.agent.chat_support import MODEL, ChatClient, Workspace
from tests.agent.test_runs import HELLO, bash_turn, no_process_left, text_turn
from tests.llm.fake_anthropic import FakeAnthropic
from tests.pi.pi_rpc import write_agent_dir
from tests.server.network_support import NetworkServer, run_server, start_network_server


async def _connect(server: NetworkServer, ws: Workspace, **options: Any) -> ChatClient:
    rpc = await RpcClient.connect(server.host, server.port)
    return await ChatClient.attach(rpc, ws, options={"model": MODEL, "token": server.token, **options})


async def _stop(server: NetworkServer) -> None:
    server.process.kill()
    await server.process.wait()


async def test_a_reattaching_client_answers_the_approval_the_closed_one_was_asked(tmp_path: Path) -> None:
    ws = Workspace(HELLO)
    marker = ws.cwd / "approved"
    replies = [bash_turn(f"touch {marker}; echo ran"), text_turn("Done after reload.")]
    async with FakeAnthropic(replies) as fake:
        write_agent_dir(ws.agent_dir, fake.url, ws.settings)
        server = await start_network_server(
            tmp_path, "--tcp", "--reattach-grace", "30", **ws.server_env(fake.url)
        )
        first = await _connect(server, ws)
        first.answer_approval = lambda request: ...  # the window reloads before the user answers
        second: ChatClient | None = None
        try:
            state = await first.new_session(ws)
            prompting = asyncio.ensure_future(first.rpc.request("pi/prompt", {"text": "run it"}))
            await first.wait_event(lambda e: e["type"] == "approval_request")
            await first.close()  # the window reloads: its connection ends mid-run
            prompting.cancel()

            second = await _connect(server, ws)
            second.answer_approval = lambda request: {"decision": "allow"}
            await second.rpc.request("pi/openSession", {"path": state["file"]})
            end = await second.wait_event(lambda e: e["type"] == "agent_end")
            assert end.get("stopReason", "stop") == "stop"
            [asked] = second.approval_requests  # asked again, of the new connection
            assert asked["toolName"] == "bash" and asked["sessionId"] == state["sessionId"]
            assert marker.exists()
            run_state = await second.rpc.request("pi/getRunState", {})
            assert run_state["running"] is False and run_state["pendingApprovals"] == []
            messages = [e["message"] for e in ws.entries() if e["type"] == "message"]
            assert [m["role"] for m in messages] == ["user", "assistant", "toolResult", "assistant"]
            assert messages[2]["content"][0]["text"] == "ran\n"
            assert messages[3]["content"][0]["text"] == "Done after reload."
        finally:
            if second is not None:
                await second.close()
            await _stop(server)
            ws.cleanup()


async def test_a_run_streams_on_to_the_client_that_reopens_its_session(tmp_path: Path) -> None:
    ws = Workspace(HELLO)
    async with FakeAnthropic([bash_turn("sleep 1.5; echo slept"), text_turn("Finished.")]) as fake:
        write_agent_dir(ws.agent_dir, fake.url, ws.settings)
        server = await start_network_server(
            tmp_path, "--tcp", "--reattach-grace", "30", **ws.server_env(fake.url)
        )
        first = await _connect(server, ws, approval="auto")
        second: ChatClient | None = None
        try:
            state = await first.new_session(ws)
            prompting = asyncio.ensure_future(first.rpc.request("pi/prompt", {"text": "start"}))
            await first.wait_event(lambda e: e["type"] == "tool_execution_start")
            await first.close()  # the window reloads: its connection ends mid-run
            prompting.cancel()

            second = await _connect(server, ws, approval="auto")
            await second.rpc.request("pi/openSession", {"path": state["file"]})
            joined = await second.rpc.request("pi/getRunState", {})
            assert joined["running"] is True
            end = await second.wait_event(lambda e: e["type"] == "agent_end")
            assert end.get("stopReason", "stop") == "stop"
            seqs = [params["seq"] for params in second.events]
            assert seqs == list(range(joined["seq"] + 1, joined["seq"] + 1 + len(seqs)))
            messages = [e["message"] for e in ws.entries() if e["type"] == "message"]
            assert [m["role"] for m in messages] == ["user", "assistant", "toolResult", "assistant"]
            assert messages[2]["content"][0]["text"] == "slept\n"
            assert messages[3]["content"][0]["text"] == "Finished."
        finally:
            if second is not None:
                await second.close()
            await _stop(server)
            ws.cleanup()


async def test_nobody_reattaching_aborts_the_run_after_the_grace(tmp_path: Path) -> None:
    ws = Workspace(HELLO)
    async with FakeAnthropic([bash_turn("sleep 30.125"), text_turn("never")]) as fake:
        write_agent_dir(ws.agent_dir, fake.url, ws.settings)
        server = await start_network_server(
            tmp_path, "--tcp", "--reattach-grace", "1", **ws.server_env(fake.url)
        )
        first = await _connect(server, ws, approval="auto")
        try:
            await first.new_session(ws)
            prompting = asyncio.ensure_future(first.rpc.request("pi/prompt", {"text": "start"}))
            await first.wait_event(lambda e: e["type"] == "tool_execution_update")
            await first.close()  # the window reloads: its connection ends mid-run
            prompting.cancel()
            for _ in range(200):
                entries = ws.entries()
                if entries and entries[-1].get("message", {}).get("stopReason") == "aborted":
                    break
                await asyncio.sleep(0.05)
            last = ws.entries()[-1]["message"]
            assert last["role"] == "assistant" and last["stopReason"] == "aborted"
            assert await no_process_left("sleep 30.125")
        finally:
            await _stop(server)
            ws.cleanup()


async def test_without_grace_a_run_still_ends_with_its_connection(tmp_path: Path) -> None:
    ws = Workspace(HELLO)
    async with FakeAnthropic([bash_turn("sleep 30.375"), text_turn("never")]) as fake:
        write_agent_dir(ws.agent_dir, fake.url, ws.settings)
        server = await start_network_server(tmp_path, "--tcp", **ws.server_env(fake.url))
        first = await _connect(server, ws, approval="auto")
        try:
            await first.new_session(ws)
            prompting = asyncio.ensure_future(first.rpc.request("pi/prompt", {"text": "start"}))
            await first.wait_event(lambda e: e["type"] == "tool_execution_update")
            await first.close()  # the window reloads: its connection ends mid-run
            prompting.cancel()
            assert await no_process_left("sleep 30.375")
        finally:
            await _stop(server)
            ws.cleanup()


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
