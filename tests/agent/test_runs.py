"""pi/prompt and its companions through the real server (stdio) with the real SDK and a fake model:
errors, approvals, queues, several clients, cancellation, secrets, a server killed mid-run."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
from typing import Any

import pytest

from pi_lsp.client.rpc_client import RpcClient, RpcError, server_command
from tests.agent.chat_support import (
    API_KEY,
    HELLO,
    MODEL,
    ChatClient,
    Workspace,
    bash_turn,
    no_process_left,
    open_chat,
    text_turn,
    two_connections,
)
from tests.agent.process_support import Markers, marked_pids, wait_started
from tests.llm.fake_anthropic import FakeAnthropic, Reply, Text, ToolUse, assistant_stream, error_reply
from tests.oracle import require_oracle
from tests.pi.pi_rpc import PiRpc, write_agent_dir

# ------------------------------------------------------------------------------ errors


async def test_no_api_key_is_a_model_error_and_writes_nothing() -> None:
    async for chat in open_chat([text_turn("never")], env={"ANTHROPIC_API_KEY": ""}):
        with pytest.raises(RpcError) as raised:
            await chat.prompt("hello")
        assert raised.value.code == -32004
        assert "ANTHROPIC_API_KEY" in raised.value.message
        assert chat.ws.session_files() == [] and chat.fake.requests == []
        assert (await chat.client.rpc.request("pi/listModels", {}))["hasApiKey"] is False
        state = await chat.client.rpc.request("pi/getSessionState", {})
        assert state["entryCount"] == 0


async def test_invalid_params_name_the_field() -> None:
    async for chat in open_chat([text_turn("never")]):
        for params, field in (
            ({}, "text"),
            ({"text": 3}, "text"),
            ({"text": "x", "streamingBehavior": "later"}, "streamingBehavior"),
            ({"text": "x", "images": [{"data": "AA=="}]}, "images[0].mimeType"),
        ):
            with pytest.raises(RpcError) as raised:
                await chat.client.rpc.request("pi/prompt", params)
            assert raised.value.code == -32602 and raised.value.data["field"] == field
        with pytest.raises(RpcError) as raised:
            await chat.client.rpc.request("pi/setModel", {"modelId": "gpt-9"})
        assert raised.value.code == -32602 and raised.value.data["field"] == "modelId"
        assert chat.fake.requests == []


async def test_the_key_never_reaches_events_results_or_the_file() -> None:
    leaked = error_reply(401, "authentication_error", f"invalid x-api-key: {API_KEY}")
    async for chat in open_chat([leaked]):
        result = await chat.prompt("hello")
        assert result["stopReason"] == "error"
        assert "authentication_error" in result["errorMessage"]
        for text in (
            json.dumps(result),
            json.dumps(chat.client.events),
            chat.ws.session_files()[0].read_text(),
        ):
            assert API_KEY not in text


# ------------------------------------------------------------------------------ approvals


async def test_bash_waits_for_approval_and_runs_when_allowed() -> None:
    async for chat in open_chat([bash_turn("echo approved-run"), text_turn("Done.")]):
        chat.client.answer_approval = lambda request: {"decision": "allow"}
        result = await chat.prompt("run it")
        assert result["stopReason"] == "stop"
        [request] = chat.client.approval_requests
        assert request["toolName"] == "bash" and request["args"] == {"command": "echo approved-run"}
        assert request["cwd"] == str(chat.ws.cwd) and request["preview"]["command"] == "echo approved-run"
        tool_result = chat.messages()[2]
        assert tool_result["content"][0]["text"] == "approved-run\n" and tool_result["isError"] is False
        kinds = [e["type"] for e in chat.client.event_list()]
        assert (
            kinds.index("approval_request")
            < kinds.index("approval_result")
            < kinds.index("tool_execution_end")
        )


@pytest.mark.parametrize(
    ("capable", "answer", "expected"),
    [
        (True, lambda r: {"decision": "deny", "reason": "Not on my machine."}, "Not on my machine."),
        (True, lambda r: {"decision": "deny"}, "the user denied permission to run bash"),
        (True, None, "got no valid answer"),  # an error answer
        (False, None, "did not declare capabilities.experimental.pi.approvals"),
    ],
    ids=["denied-with-reason", "denied", "unanswered", "incapable-client"],
)
async def test_denied_unanswered_and_incapable_clients_get_pis_blocked_result(
    tmp_path: Any, capable: bool, answer: Any, expected: str
) -> None:
    marker = tmp_path / "ran"
    command = f"touch {marker}"
    async for chat in open_chat([bash_turn(command), text_turn("Ok.")], approvals=capable):
        chat.client.answer_approval = answer
        assert (await chat.prompt("run it"))["stopReason"] == "stop"
        tool_result = chat.messages()[2]
        assert tool_result["isError"] is True and tool_result["details"] == {}
        assert expected in tool_result["content"][0]["text"]
        assert not marker.exists()
        assert bool(chat.client.approval_requests) == capable


async def test_a_denial_with_a_reason_says_the_user_denied_it_then_gives_the_reason() -> None:
    async for chat in open_chat([bash_turn("rm -rf build"), text_turn("Ok.")]):
        chat.client.answer_approval = lambda r: {"decision": "deny", "reason": "Not on my machine."}
        await chat.prompt("clean up")
        tool_result = chat.messages()[2]
        assert tool_result["content"][0]["text"] == (
            "Tool call blocked: the user denied permission to run bash. Nothing was run."
            " The user's reason: Not on my machine."
        )
        # The event keeps the user's own words, for editors to show.
        [result] = [e for e in chat.client.event_list() if e["type"] == "approval_result"]
        assert result["reason"] == "Not on my machine."


async def test_allow_always_covers_that_exact_command_for_the_session() -> None:
    replies = [bash_turn("echo same", "t1"), bash_turn("echo same", "t2"), bash_turn("echo other", "t3"),
               text_turn("Done.")]  # fmt: skip
    async for chat in open_chat(replies):
        chat.client.answer_approval = lambda request: {"decision": "allowAlways"}
        await chat.prompt("go")
        assert [r["args"]["command"] for r in chat.client.approval_requests] == ["echo same", "echo other"]


async def test_edits_inside_the_workspace_need_no_approval_but_outside_do(tmp_path: Any) -> None:
    outside = tmp_path / "outside.txt"
    edit_in = ToolUse("e1", "write", {"path": "inside.txt", "content": "in\n"})
    edit_out = ToolUse("e2", "write", {"path": str(outside), "content": "out\n"})
    replies = [Reply(events=assistant_stream(edit_in, edit_out)), text_turn("Done.")]
    async for chat in open_chat(replies):
        chat.client.answer_approval = lambda request: {"decision": "deny"}
        await chat.prompt("write both")
        [request] = chat.client.approval_requests
        assert request["toolName"] == "write" and request["preview"]["outsideWorkspace"] is True
        assert request["preview"]["path"] == str(outside)
        assert (chat.ws.cwd / "inside.txt").read_text() == "in\n" and not outside.exists()


async def test_a_workspace_cannot_loosen_approval() -> None:
    ws = Workspace(HELLO)
    (ws.cwd / ".pi").mkdir()
    (ws.cwd / ".pi" / "settings.json").write_text('{"approval": "auto"}')
    async with FakeAnthropic([bash_turn("echo hi"), text_turn("Done.")]) as fake:
        write_agent_dir(ws.agent_dir, fake.url, ws.settings)
        client = await ChatClient.start(ws, fake.url, options={"model": MODEL})
        try:
            await client.new_session(ws)
            client.answer_approval = lambda request: {"decision": "allow"}
            await client.rpc.request("pi/prompt", {"text": "go"})
            assert len(client.approval_requests) == 1
        finally:
            await client.close()
            ws.cleanup()


# ------------------------------------------------------------------------------ queues


async def test_steering_lands_after_the_tool_batch_and_follow_up_when_it_would_stop() -> None:
    replies = [bash_turn("sleep 0.6; echo slow"), text_turn("After steer."), text_turn("After follow-up.")]
    async for chat in open_chat(replies, options={"approval": "auto"}):
        running = asyncio.ensure_future(chat.prompt("start"))
        await chat.client.wait_event(lambda e: e["type"] == "tool_execution_start")
        assert await chat.prompt("steer me", streamingBehavior="steer") == {"queued": "steer"}
        assert await chat.prompt("and then", streamingBehavior="followUp") == {"queued": "followUp"}
        with pytest.raises(RpcError) as raised:
            await chat.prompt("no behaviour")
        assert raised.value.code == -32006
        state = await chat.client.rpc.request("pi/getRunState", {})
        assert state["running"] and state["queue"] == {"steering": ["steer me"], "followUp": ["and then"]}
        assert [tool["toolName"] for tool in state["tools"]] == ["bash"]
        result = await running
        assert result["stopReason"] == "stop"
        texts = [(m["role"], m["content"][0].get("text") if m["content"] else None) for m in chat.messages()]
        assert texts == [
            ("user", "start"), ("assistant", None), ("toolResult", "slow\n"), ("user", "steer me"),
            ("assistant", "After steer."), ("user", "and then"), ("assistant", "After follow-up."),
        ]  # fmt: skip
        updates = [e for e in chat.client.event_list() if e["type"] == "queue_update"]
        assert updates[-1] == {"type": "queue_update", "steering": [], "followUp": []}


async def test_clear_queue_returns_the_texts() -> None:
    async for chat in open_chat([bash_turn("sleep 0.5"), text_turn("Done.")], options={"approval": "auto"}):
        running = asyncio.ensure_future(chat.prompt("start"))
        await chat.client.wait_event(lambda e: e["type"] == "tool_execution_start")
        await chat.prompt("later", streamingBehavior="followUp")
        assert await chat.client.rpc.request("pi/clearQueue", {}) == {"steering": [], "followUp": ["later"]}
        await running
        assert [m["role"] for m in chat.messages()] == ["user", "assistant", "toolResult", "assistant"]


# ------------------------------------------------------------------------------ clients and cancellation


async def test_two_clients_see_the_events_and_the_run_state(tmp_path: Any) -> None:
    async with two_connections(tmp_path, [bash_turn("sleep 0.5; echo two"), text_turn("Done.")]) as both:
        first, second = both.first, both.second
        state = await first.new_session(both.ws)
        running = asyncio.ensure_future(first.rpc.request("pi/prompt", {"text": "start"}))
        await first.wait_event(lambda e: e["type"] == "tool_execution_start")
        await second.rpc.request("pi/openSession", {"path": state["file"]})  # flushed by now
        joined = await second.rpc.request("pi/getRunState", {})
        assert joined["running"] is True and [t["toolName"] for t in joined["tools"]] == ["bash"]
        assert (await running)["stopReason"] == "stop"
        await second.wait_event(lambda e: e["type"] == "agent_end")
        first_seqs = [p["seq"] for p in first.events]
        second_seqs = [p["seq"] for p in second.events]
        assert first_seqs == list(range(1, len(first_seqs) + 1))
        assert second_seqs == first_seqs[first_seqs.index(joined["seq"]) + 1 :]
        assert {p["sessionId"] for p in second.events} == {state["sessionId"]}


async def test_cancel_request_aborts_the_run_and_answers_with_it() -> None:
    async for chat in open_chat([bash_turn("sleep 30.75")], options={"approval": "auto"}):
        msg_id, future = chat.client.rpc.request_future("pi/prompt", {"text": "start"})
        await chat.client.wait_event(lambda e: e["type"] == "tool_execution_update")
        chat.client.rpc.notify("$/cancelRequest", {"id": msg_id})
        result = json.loads(await asyncio.wait_for(future, 20))["result"]
        assert result["stopReason"] == "aborted"
        assert await no_process_left("sleep 30.75")


async def test_a_daemon_left_by_bash_neither_wedges_the_run_nor_the_next_prompt(markers: Markers) -> None:
    daemon = markers.new()
    replies = [bash_turn(f"setsid sleep {daemon} & echo started"), text_turn("Done."), text_turn("Again.")]
    async for chat in open_chat(replies, options={"approval": "auto"}):
        first = await chat.client.rpc.request("pi/prompt", {"text": "start it"}, timeout=20)
        assert first["stopReason"] == "stop"
        tool_result = chat.messages()[2]
        [pid] = marked_pids(daemon)
        assert tool_result["content"][0]["text"].startswith("started\n\n\n[Still running in the background")
        assert f"`kill {pid}` stops it" in tool_result["content"][0]["text"]
        second = await chat.client.rpc.request("pi/prompt", {"text": "again"}, timeout=20)
        assert second["stopReason"] == "stop"


async def test_abort_ends_a_run_whose_bash_left_a_daemon_holding_the_output(markers: Markers) -> None:
    daemon, child = markers.new(), markers.new()
    replies = [bash_turn(f"setsid sleep {daemon} & echo started; sleep {child}"), text_turn("Again.")]
    async for chat in open_chat(replies, options={"approval": "auto"}):
        running = asyncio.ensure_future(chat.client.rpc.request("pi/prompt", {"text": "go"}, timeout=20))
        await wait_started(daemon)
        await wait_started(child)
        assert await chat.client.rpc.request("pi/abort", {}) == {"aborted": True}
        assert (await running)["stopReason"] == "aborted"
        assert marked_pids(child) == []
        again = await chat.client.rpc.request("pi/prompt", {"text": "again"}, timeout=20)
        assert again["stopReason"] == "stop"


async def test_full_output_files_live_until_their_run_or_the_server_ends(tmp_path: Any) -> None:
    """The model can read a truncated command's file during its run; the run's end removes it.
    The user's own command's file (named to the model in later runs) goes when the server exits."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    replies = [bash_turn("seq 1 5000", "toolu_A"), bash_turn("ls $TMPDIR", "toolu_L"), text_turn("Done.")]
    async for chat in open_chat(replies, options={"approval": "auto"}, env={"TMPDIR": str(tmp)}):
        assert (await chat.prompt("count"))["stopReason"] == "stop"
        seq_result, ls_result = chat.messages()[2], chat.messages()[4]
        full = seq_result["details"]["fullOutputPath"]
        assert os.path.dirname(full) == str(tmp)
        assert ls_result["content"][0]["text"] == os.path.basename(full) + "\n"  # there during the run
        assert list(tmp.iterdir()) == []  # gone with the run
        user = await chat.client.rpc.request("pi/bash", {"command": "seq 1 5000"})
        assert user["truncated"] is True
        [entry] = [e for e in chat.ws.entries() if e.get("message", {}).get("role") == "bashExecution"]
        assert os.path.exists(entry["message"]["fullOutputPath"])
        await chat.client.close()
        assert list(tmp.iterdir()) == []


@pytest.mark.oracle
async def test_a_server_killed_mid_run_leaves_a_file_pi_continues() -> None:
    require_oracle()
    ws = Workspace(HELLO)
    try:
        async with FakeAnthropic([bash_turn("sleep 30.5"), text_turn("Continued by pi.")]) as fake:
            write_agent_dir(ws.agent_dir, fake.url, ws.settings)
            rpc = await RpcClient.start(server_command(), env=ws.server_env(fake.url), quiet=True)
            client = ChatClient(rpc)
            options = {"pi": {"model": MODEL, "approval": "auto"}}
            init = {"processId": os.getpid(), "capabilities": {}, "initializationOptions": options}
            await rpc.request("initialize", init)
            rpc.notify("initialized", {})
            state = await client.new_session(ws)
            prompt = asyncio.ensure_future(rpc.request("pi/prompt", {"text": "start"}))
            await client.wait_event(lambda e: e["type"] == "tool_execution_update")
            rpc.process.send_signal(signal.SIGKILL)
            await rpc.process.wait()
            prompt.cancel()
            subprocess.run(["pkill", "-f", "sleep 30.5"], check=False)
            pi = await PiRpc.start(ws.cwd, ws.agent_dir, ws.sessions, MODEL, tools=["read"])
            try:
                assert (await pi.command("switch_session", sessionPath=state["file"]))["success"]
                messages = (await pi.command("get_messages"))["data"]["messages"]
                assert [m["role"] for m in messages] == ["user", "assistant"]
                await pi.command("prompt", message="go on")
                await pi.wait_for(lambda events: any(e.get("type") == "agent_end" for e in events))
            finally:
                await pi.close()
        roles = [e["message"]["role"] for e in ws.entries() if e["type"] == "message"]
        assert roles == ["user", "assistant", "user", "assistant"]
    finally:
        ws.cleanup()


# ------------------------------------------------------------------------------ slash commands, user bash


async def test_get_commands_lists_templates_then_skills() -> None:
    async for chat in open_chat([text_turn("never")]):
        prompts = chat.ws.cwd / ".pi" / "prompts"
        prompts.mkdir(parents=True)
        (prompts / "review.md").write_text("---\ndescription: Review a file\n---\nReview $1 carefully.\n")
        skill = chat.ws.cwd / ".pi" / "skills" / "tidy"
        skill.mkdir(parents=True)
        (skill / "SKILL.md").write_text("---\nname: tidy\ndescription: Tidy things up\n---\nBe tidy.\n")
        result = await chat.client.rpc.request("pi/getCommands", {"cwd": str(chat.ws.cwd)})
        assert [(c["name"], c["source"], c["description"]) for c in result["commands"]] == [
            ("review", "prompt", "Review a file"), ("skill:tidy", "skill", "Tidy things up")
        ]  # fmt: skip


async def test_user_bash_is_stored_as_a_bash_execution_message() -> None:
    async for chat in open_chat([text_turn("Seen.")]):
        result = await chat.client.rpc.request("pi/bash", {"command": "echo from-user; exit 3"})
        assert result["output"] == "from-user\n" and result["exitCode"] == 3 and result["cancelled"] is False
        hidden = await chat.client.rpc.request(
            "pi/bash", {"command": "echo secret", "excludeFromContext": True}
        )
        await chat.prompt("what happened?")
        entries = chat.ws.entries()
        bash = [e for e in entries if e["type"] == "message" and e["message"]["role"] == "bashExecution"]
        assert [e["id"] for e in bash] == [result["entryId"], hidden["entryId"]]
        assert bash[1]["message"]["excludeFromContext"] is True
        sent = json.dumps(chat.fake.requests[0].body["messages"])
        assert "from-user" in sent and "Command exited with code 3" in sent and "secret" not in sent


async def test_a_cut_stream_is_stored_as_pi_stores_it_and_retried() -> None:
    cut = Reply(events=assistant_stream(Text("This reply is cut off halfway.", chunks=6)), cut_after=5)
    async for chat in open_chat([cut, text_turn("Recovered fine.")]):
        result = await chat.prompt("hello")
        assert result["stopReason"] == "stop"
        failed, retried = chat.messages()[1:]
        assert failed["stopReason"] == "error" and failed["errorMessage"] == "terminated"
        assert failed["content"] and retried["content"][0]["text"] == "Recovered fine."
        kinds = [e["type"] for e in chat.client.event_list()]
        assert kinds.count("agent_start") == 2 and "auto_retry_start" in kinds


async def test_the_key_never_reaches_the_debug_log(tmp_path: Any) -> None:
    log = tmp_path / "server.log"
    ws = Workspace(HELLO)
    leaked = error_reply(401, "authentication_error", f"invalid x-api-key: {API_KEY}")
    try:
        async with FakeAnthropic([leaked]) as fake:
            write_agent_dir(ws.agent_dir, fake.url, ws.settings)
            command = [*server_command(), "--log-level", "debug", "--log-file", str(log)]
            rpc = await RpcClient.start(command, env=ws.server_env(fake.url), quiet=True)
            client = await ChatClient.attach(rpc, ws, options={"model": MODEL})
            try:
                await client.new_session(ws)
                assert (await rpc.request("pi/prompt", {"text": "hello"}))["stopReason"] == "error"
            finally:
                await client.close()
        text = log.read_text()
        assert "pi/prompt" in text or "prompt" in text  # the debug log was written
        assert API_KEY not in text
    finally:
        ws.cleanup()


async def test_set_model_appends_what_changed_and_prompts_use_it() -> None:
    async for chat in open_chat([text_turn("From haiku.")]):
        listed = await chat.client.rpc.request("pi/listModels", {})
        ids = [model["id"] for model in listed["models"]]
        assert MODEL in ids and "claude-haiku-4-5" in ids
        assert listed["current"] == {"provider": "anthropic", "modelId": MODEL, "thinkingLevel": "medium"}
        assert listed["hasApiKey"] is True
        result = await chat.client.rpc.request(
            "pi/setModel", {"modelId": "claude-haiku-4-5", "thinkingLevel": "high"}
        )
        assert result["model"] == {"provider": "anthropic", "modelId": "claude-haiku-4-5"}
        assert result["thinkingLevel"] == "high" and len(result["entryIds"]) == 2
        again = await chat.client.rpc.request("pi/setModel", {"thinkingLevel": "high"})
        assert again["entryIds"] == []
        prompt = await chat.prompt("hi")
        # the session already has its model and level: the workspace's first checkpoint, user, assistant
        assert len(prompt["entryIds"]) == 3
        assert chat.fake.requests[0].body["model"] == "claude-haiku-4-5"
        assert chat.fake.requests[0].body["thinking"]["budget_tokens"] == 16384
        types = [e["type"] for e in chat.ws.entries()[1:]]
        assert types == ["model_change", "thinking_level_change", "custom", "message", "message"]


async def test_abort_ends_an_approval_wait_and_the_run_state_shows_it() -> None:
    async for chat in open_chat([bash_turn("echo never-run")]):
        chat.client.answer_approval = lambda request: ...  # the editor shows the question, no answer yet
        running = asyncio.ensure_future(chat.prompt("run it"))
        await chat.client.wait_event(lambda e: e["type"] == "approval_request")
        state = await chat.client.rpc.request("pi/getRunState", {})
        [pending] = state["pendingApprovals"]
        assert pending["toolName"] == "bash" and pending["args"] == {"command": "echo never-run"}
        assert await chat.client.rpc.request("pi/abort", {}) == {"aborted": True}
        result = await running
        assert result["stopReason"] == "aborted"
        tool_result = chat.messages()[2]
        assert (
            tool_result["isError"]
            and "aborted while waiting for approval" in tool_result["content"][0]["text"]
        )
        assert (await chat.client.rpc.request("pi/getRunState", {}))["pendingApprovals"] == []


async def test_a_run_ends_with_the_connection_that_started_it(tmp_path: Any) -> None:
    async with two_connections(tmp_path, [bash_turn("sleep 30.25"), text_turn("never")]) as both:
        starter, watcher = both.first, both.second
        state = await starter.new_session(both.ws)
        running = asyncio.ensure_future(starter.rpc.request("pi/prompt", {"text": "start"}))
        await starter.wait_event(lambda e: e["type"] == "tool_execution_update")
        await watcher.rpc.request("pi/openSession", {"path": state["file"]})
        await starter.close()  # the editor goes away mid-run
        running.cancel()
        try:
            end = await watcher.wait_event(lambda e: e["type"] == "agent_end", timeout=10)
        except TimeoutError:
            raise AssertionError([e["type"] for e in watcher.event_list()]) from None
        assert end["stopReason"] == "aborted"
        assert await no_process_left("sleep 30.25")


async def test_runs_honour_thinking_budgets_and_block_images() -> None:
    options = {"thinkingBudgets": {"medium": 5000}, "images": {"blockImages": True}}
    async for chat in open_chat([text_turn("Seen."), text_turn("Seen again.")], options=options):
        pixel = {"data": "iVBORw0KGgo=", "mimeType": "image/png"}
        await chat.prompt("look", images=[pixel])
        body = chat.fake.requests[0].body
        assert body["thinking"]["budget_tokens"] == 5000  # pi's default for medium is 8192
        content = body["messages"][0]["content"]
        assert not any(block.get("type") == "image" for block in content)
        assert {"type": "text", "text": "Image reading is disabled."} in [
            {k: v for k, v in block.items() if k in ("type", "text")} for block in content
        ]
        stored = chat.messages()[0]["content"]
        assert [block["type"] for block in stored] == ["text", "image"]  # the session keeps the image


async def test_close_session_aborts_the_run_waits_for_it_then_closes() -> None:
    async for chat in open_chat([bash_turn("sleep 30.6"), text_turn("never")], options={"approval": "auto"}):
        running = asyncio.ensure_future(chat.prompt("start"))
        await chat.client.wait_event(lambda e: e["type"] == "tool_execution_update")
        assert await asyncio.wait_for(chat.client.rpc.request("pi/closeSession", {}), 20) == {}
        assert (await asyncio.wait_for(running, 10))["stopReason"] == "aborted"
        assert await no_process_left("sleep 30.6")
        session_id = chat.client.events[0]["sessionId"]
        assert "agent_end" in [e["event"]["type"] for e in chat.client.events]
        messages = chat.messages()
        assert [m["role"] for m in messages] == ["user", "assistant", "toolResult", "assistant"]
        assert messages[2]["isError"] and messages[-1]["stopReason"] == "aborted"  # stored before the close
        assert len(chat.fake.requests) == 1  # no further turn after the abort
        with pytest.raises(RpcError):
            await chat.client.rpc.request("pi/getRunState", {"sessionId": session_id})
