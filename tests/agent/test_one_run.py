"""One run per session, and a stop that always reaches it, through the real server process.

Requests here are written back to back (no wait between them), as a double-click, two editor
windows or a stop pressed right after sending produce them: the server must check that the
session is free and register the run in one step, and an abort must find a run that is still
being prepared (slash commands, system prompt, SDK import).
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from pi_lsp.client.rpc_client import RpcClient, RpcError, decode_response
from tests.agent.chat_support import (
    HELLO,
    MODEL,
    Chat,
    ChatClient,
    Workspace,
    bash_turn,
    no_process_left,
    open_chat,
    text_turn,
    two_connections,
)
from tests.llm.fake_anthropic import FakeAnthropic
from tests.pi.pi_rpc import write_agent_dir
from tests.server.support import GATED

SESSION_BUSY = -32006
ABORTED_BEFORE_RESPONSE = "Request was aborted."


async def outcomes(futures: list[asyncio.Future[bytes]]) -> tuple[list[Any], list[RpcError]]:
    """The results and the errors of requests sent together."""
    results: list[Any] = []
    errors: list[RpcError] = []
    for body in await asyncio.wait_for(asyncio.gather(*futures), 60):
        try:
            results.append(decode_response(body))
        except RpcError as error:
            errors.append(error)
    return results, errors


def user_texts(chat: Chat) -> list[str]:
    return [m["content"][0]["text"] for m in chat.messages() if m["role"] == "user"]


def assert_aborted_before_the_model(chat: Chat, result: dict[str, Any]) -> None:
    """Stored as pi stores a run whose abort came before the model call: the user message, then an
    empty aborted reply (no request made); the answer is that run's."""
    assert result["stopReason"] == "aborted" and chat.fake.requests == []
    written = chat.ws.entries()
    # The workspace snapshot taken before the user message (a checkpoint entry) is not pi's.
    entries = [e for e in written if e.get("customType") != "pi-lsp/checkpoint"]
    assert [e["type"] for e in entries] == [
        "session", "model_change", "thinking_level_change", "message", "message"
    ]  # fmt: skip
    user, reply = entries[3]["message"], entries[4]["message"]
    assert user["role"] == "user" and user["content"][0]["text"] == "stop me"
    assert reply["role"] == "assistant" and reply["content"] == []
    assert reply["stopReason"] == "aborted" and reply["errorMessage"] == ABORTED_BEFORE_RESPONSE
    assert result["userEntryId"] == entries[3]["id"]
    assert result["entryIds"] == [e["id"] for e in written[1:]]


# ------------------------------------------------------------------------------ one run per session


async def test_twelve_prompts_sent_at_once_start_one_run() -> None:
    async for chat in open_chat([text_turn("Only one.")], options={"approval": "auto"}):
        sent = [chat.client.rpc.request_future("pi/prompt", {"text": f"prompt {n}"}) for n in range(12)]
        results, errors = await outcomes([future for _, future in sent])
        assert [r["stopReason"] for r in results] == ["stop"]
        assert len(errors) == 11 and {e.code for e in errors} == {SESSION_BUSY}
        assert {e.data["busy"] for e in errors} == {"prompt"}
        assert len(chat.fake.requests) == 1
        assert len(user_texts(chat)) == 1
        assert [m["role"] for m in chat.messages()] == ["user", "assistant"]


async def test_prompts_from_two_connections_start_one_run(tmp_path: Path) -> None:
    async with two_connections(tmp_path, [text_turn("Only one.")]) as both:
        session = (await both.first.new_session(both.ws))["sessionId"]
        futures = []
        for n in range(6):  # interleaved, each connection's own requests back to back
            for name, client in (("first", both.first), ("second", both.second)):
                params = {"session": session, "text": f"prompt {n} from the {name} connection"}
                futures.append(client.rpc.request_future("pi/prompt", params)[1])
        results, errors = await outcomes(futures)
        assert [r["stopReason"] for r in results] == ["stop"]
        assert len(errors) == 11 and {e.code for e in errors} == {SESSION_BUSY}
        assert len(both.fake.requests) == 1
        messages = [e["message"] for e in both.ws.entries() if e["type"] == "message"]
        assert [m["role"] for m in messages] == ["user", "assistant"]


async def test_compact_and_branch_summary_sent_behind_a_prompt_are_busy() -> None:
    replies = [text_turn("First reply."), text_turn("Second.")]
    async for chat in open_chat(replies, options={"approval": "auto"}):
        first = await chat.prompt("first")
        state = await chat.client.rpc.request("pi/getSessionState", {})
        _, running = chat.client.rpc.request_future("pi/prompt", {"text": "second"})
        _, compact = chat.client.rpc.request_future("pi/compact", {})
        _, summary = chat.client.rpc.request_future(
            "pi/navigate", {"targetId": first["userEntryId"], "summarize": True}
        )
        for future in (compact, summary):
            with pytest.raises(RpcError) as raised:
                decode_response(await asyncio.wait_for(future, 60))
            assert raised.value.code == SESSION_BUSY and raised.value.data == {"busy": "prompt"}
        assert decode_response(await asyncio.wait_for(running, 60))["stopReason"] == "stop"
        assert [e["type"] for e in chat.ws.entries()].count("compaction") == 0
        after = await chat.client.rpc.request("pi/getSessionState", {})
        assert after["entryCount"] == state["entryCount"] + 2


async def test_a_second_user_command_at_once_is_busy_and_one_during_a_run_is_stored_after_it() -> None:
    replies = [bash_turn("sleep 0.3; echo tool"), text_turn("Done.")]
    async for chat in open_chat(replies, options={"approval": "auto"}):
        _, one = chat.client.rpc.request_future("pi/bash", {"command": "sleep 0.2; echo one"})
        _, two = chat.client.rpc.request_future("pi/bash", {"command": "echo two"})
        results, errors = await outcomes([one, two])
        assert [r["output"] for r in results] == ["one\n"]
        assert [(e.code, e.data) for e in errors] == [(SESSION_BUSY, {"busy": "bash"})]
        # cancelled right behind the request, the command is started, killed and stored as cancelled
        msg_id, killed = chat.client.rpc.request_future("pi/bash", {"command": "sleep 30.25"})
        chat.client.rpc.notify("$/cancelRequest", {"id": msg_id})
        cancelled = decode_response(await asyncio.wait_for(killed, 60))
        assert cancelled["cancelled"] is True and await no_process_left("sleep 30.25")
        # during a run the user's command runs at once and is stored when the run has ended (pi's !cmd)
        running = asyncio.ensure_future(chat.prompt("go"))
        await chat.client.wait_event(lambda e: e["type"] == "tool_execution_start")
        during = await chat.client.rpc.request("pi/bash", {"command": "echo during"})
        assert during["output"] == "during\n"
        assert (await running)["stopReason"] == "stop"
        roles = [m["role"] for m in chat.messages()]
        run_roles = ["user", "assistant", "toolResult", "assistant"]
        assert roles == ["bashExecution", "bashExecution", *run_roles, "bashExecution"]
        assert chat.ws.entries()[-1]["id"] == during["entryId"]


# ------------------------------------------------------------------------------ a stop that reaches the run


async def test_abort_sent_right_behind_the_prompt_aborts_it() -> None:
    async for chat in open_chat([text_turn("Never sent.")], options={"approval": "auto"}):
        _, prompt = chat.client.rpc.request_future("pi/prompt", {"text": "stop me"})
        _, abort = chat.client.rpc.request_future("pi/abort", {})
        assert decode_response(await asyncio.wait_for(abort, 60)) == {"aborted": True}
        result = decode_response(await asyncio.wait_for(prompt, 60))
        assert_aborted_before_the_model(chat, result)
        kinds = [e["type"] for e in chat.client.event_list() if e["type"] != "checkpoint"]
        assert kinds[0] == "agent_start" and kinds[-1] == "agent_end"
        assert (await chat.client.rpc.request("pi/getRunState", {}))["running"] is False
        # the session is free again: the next prompt runs
        assert (await chat.prompt("again"))["stopReason"] == "stop"


async def test_cancel_request_right_behind_the_prompt_aborts_it() -> None:
    async for chat in open_chat([text_turn("Never sent.")], options={"approval": "auto"}):
        msg_id, prompt = chat.client.rpc.request_future("pi/prompt", {"text": "stop me"})
        chat.client.rpc.notify("$/cancelRequest", {"id": msg_id})
        result = json.loads(await asyncio.wait_for(prompt, 60))["result"]
        assert_aborted_before_the_model(chat, result)


@pytest.mark.parametrize("stop", ["pi/abort", "$/cancelRequest"])
async def test_a_stop_behind_the_first_prompt_of_a_server_still_starting(tmp_path: Path, stop: str) -> None:
    """The prompt and the stop arrive while pygls is still being imported (held by the gate of
    ``test_startup``): both are handed to pygls together, in order, and the stop still reaches the
    run (a cancel is not applied before the prompt's handler has started)."""
    ws = Workspace(HELLO)
    gate, log = tmp_path / "gate", tmp_path / "imported.txt"
    async with FakeAnthropic([text_turn("Never sent.")]) as fake:
        write_agent_dir(ws.agent_dir, fake.url, ws.settings)
        command = [sys.executable, "-c", GATED, str(gate), str(log)]
        rpc = await RpcClient.start(command, env=ws.server_env(fake.url), quiet=True)
        client = await ChatClient.attach(rpc, ws, options={"model": MODEL, "approval": "auto"})
        try:
            await client.new_session(ws)  # answered at start-up
            msg_id, prompt = rpc.request_future("pi/prompt", {"text": "stop me"})
            if stop == "pi/abort":
                _, abort = rpc.request_future("pi/abort", {})
            else:
                rpc.notify("$/cancelRequest", {"id": msg_id})
            assert not gate.exists()
            gate.touch()
            if stop == "pi/abort":
                assert decode_response(await asyncio.wait_for(abort, 60)) == {"aborted": True}
            result = decode_response(await asyncio.wait_for(prompt, 60))
            assert_aborted_before_the_model(Chat(ws, fake, client), result)
        finally:
            gate.touch()
            await client.close()
            ws.cleanup()
