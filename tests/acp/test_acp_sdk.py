"""``pi-lsp acp`` against the official ACP TypeScript SDK (``client.mjs``), the loopback fake model,
the language server and pi itself.

One conversation goes through three ACP processes (created and prompted; loaded in a new process,
which replays it; resumed), is continued over LSP and by pi (the oracle) in between, and every
message the agent sent is checked against the SDK's v1 JSON schema by ajv inside ``client.mjs``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pi_lsp.client.rpc_client import RpcClient, server_command
from tests.acp.sdk_support import require_sdk, run_client, updates
from tests.agent.chat_support import MODEL, Workspace, workspace
from tests.llm.fake_anthropic import FakeAnthropic, Reply, Text, Thinking, ToolUse, assistant_stream
from tests.oracle import optional_checks_run, require_oracle
from tests.pi.pi_rpc import PiRpc, write_agent_dir

BLOCKED = "Tool call blocked"


def session_entries(ws: Workspace) -> list[dict[str, Any]]:
    files = sorted(ws.agent_dir.rglob("*.jsonl"))
    assert len(files) == 1, files
    return [json.loads(line) for line in files[0].read_text().splitlines() if line.strip()]


def messages(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [entry["message"] for entry in entries if entry["type"] == "message"]


def replies() -> list[Reply]:
    edit = {"path": "a.txt", "edits": [{"oldText": "alpha", "newText": "beta"}]}
    edit_unsaved = {"path": "unsaved.txt", "edits": [{"oldText": "on disk", "newText": "changed"}]}
    story = Text("Once upon a time there was a very long story that never ends", chunks=6)
    return [
        Reply(
            events=assistant_stream(
                Thinking("Let me look"), Text("I will edit a.txt"), ToolUse("toolu_edit", "edit", edit)
            )
        ),
        Reply(events=assistant_stream(ToolUse("toolu_ok", "bash", {"command": "echo allowed-command"}))),
        Reply(events=assistant_stream(ToolUse("toolu_no", "bash", {"command": "echo rejected-command"}))),
        Reply(events=assistant_stream(Text("All done."))),
        Reply(events=assistant_stream(story), stall_after=5),  # cancelled mid-stream
        Reply(events=assistant_stream(Text("Seen the picture and the notes."))),
        Reply(events=assistant_stream(ToolUse("toolu_read", "read", {"path": "unsaved.txt"}))),
        Reply(events=assistant_stream(ToolUse("toolu_guarded", "edit", edit_unsaved))),
        Reply(events=assistant_stream(Text("The buffer is unsaved."))),
        Reply(events=assistant_stream(ToolUse("toolu_held", "bash", {"command": "echo hold-command"}))),
        Reply(events=assistant_stream(Text("Continued over LSP."))),
        Reply(events=assistant_stream(Text("Continued by pi."))),
    ]


@pytest.mark.slow
@pytest.mark.oracle
async def test_acp_conversation_through_the_sdk_then_lsp_and_pi() -> None:
    require_sdk()
    files = {
        "a.txt": "alpha\n",
        "b.txt": "linked file text\n",
        "unsaved.txt": "on disk\n",
        ".pi/skills/release/SKILL.md": "---\nname: release\ndescription: Cut a release\n---\nSteps.\n",
        ".pi/prompts/review.md": "---\ndescription: Review the diff\n---\nReview $ARGUMENTS\n",
    }
    with workspace(files) as ws:
        async with FakeAnthropic(replies()) as fake:
            write_agent_dir(ws.agent_dir, fake.url, {**ws.settings, "model": MODEL})
            first = await run_client(ws, fake.url, "first")
            session_id = first["sessionId"]
            check_first_process(ws, first, fake)
            check_stored(ws)

            loaded = await run_client(ws, fake.url, "load", sessionId=session_id)
            check_replay(loaded)

            path = str(sorted(ws.agent_dir.rglob("*.jsonl"))[0])
            lsp = await RpcClient.start(server_command(), env=ws.server_env(fake.url), quiet=True)
            try:
                await lsp.initialize(str(ws.cwd), {"model": MODEL})
                state = await lsp.request("pi/openSession", {"path": path})
                assert state["sessionId"] == session_id
                answer = await lsp.request("pi/prompt", {"sessionId": session_id, "text": "go on over LSP"})
                assert answer["stopReason"] == "stop"
                lsp.drain_notifications()

                if optional_checks_run():
                    require_oracle()
                    await continue_with_pi(ws, path)
                    await wait_external(lsp, session_id)

                offline = {
                    **ws.settings,
                    "model": MODEL,
                    "summarizer": "offline",
                    "compaction": {"keepRecentTokens": 10},
                }
                write_agent_dir(ws.agent_dir, fake.url, offline)  # /compact without a model call
                resumed = await run_client(ws, fake.url, "resume", sessionId=session_id)
                # the LSP client holding the session sees the ACP process's entry arrive
                change = await wait_external(lsp, session_id)
                assert change["appendedIds"]
            finally:
                await lsp.close()
            check_resume(resumed, pi_continued=optional_checks_run())
            entries = session_entries(ws)
            names = [entry.get("name") for entry in entries if entry["type"] == "session_info"]
            assert names[-1] == "From ACP"
            texts = [
                block.get("text")
                for m in messages(entries)
                if m["role"] == "assistant"
                for block in m["content"]
            ]
            assert "Continued over LSP." in texts
            if optional_checks_run():
                assert "Continued by pi." in texts


async def wait_external(lsp: RpcClient, session_id: str) -> dict[str, Any]:
    while True:
        change = await lsp.next_notification("pi/sessionChanged", timeout=20)
        if change["sessionId"] == session_id and change["reason"] == "external":
            return change


async def continue_with_pi(ws: Workspace, path: str) -> None:
    pi = await PiRpc.start(ws.cwd, ws.agent_dir, ws.agent_dir / "sessions", MODEL, session=Path(path))
    try:
        response = await pi.command("prompt", message="go on in pi")
        assert response.get("success"), response
        await pi.wait_for(lambda events: any(e.get("type") == "agent_end" for e in events))
        await pi.wait_idle()
    finally:
        await pi.close()


def check_first_process(ws: Workspace, report: dict[str, Any], fake: FakeAnthropic) -> None:
    results, errors = report["results"], report["errors"]
    assert report["validated"] > 30
    init = results["initialize"]
    assert init["protocolVersion"] == 1
    assert init["agentCapabilities"]["loadSession"] is True
    assert set(init["agentCapabilities"]["sessionCapabilities"]) == {"list", "resume", "close"}
    new = results["new"]
    assert [mode["id"] for mode in new["modes"]["availableModes"]] == ["auto", "acceptEdits", "ask"]
    assert {option["id"] for option in new["configOptions"]} == {"model", "thinking_level"}
    commands = updates(report, "available_commands_update")[0]["availableCommands"]
    described = {command["name"]: command["description"] for command in commands}
    assert {"compact", "name", "session", "review", "skill:release"} <= set(described)
    assert described["skill:release"] == "Cut a release" and described["review"] == "Review the diff"

    # prompt 1: thinking, text, an edit shown as a diff, a bash call allowed and one rejected
    assert results["prompt1"] == {"stopReason": "end_turn"}
    end = report["afterPrompt1"]
    assert (
        "".join(u["content"]["text"] for u in updates(report, "agent_thought_chunk", 0, end)) == "Let me look"
    )
    said = "".join(u["content"]["text"] for u in updates(report, "agent_message_chunk", 0, end))
    assert said == "I will edit a.txtAll done."
    calls = {u["toolCallId"]: u for u in updates(report, "tool_call", 0, end)}
    assert calls["toolu_edit"]["kind"] == "edit" and calls["toolu_ok"]["kind"] == "execute"
    assert calls["toolu_edit"]["locations"] == [{"path": str(ws.cwd / "a.txt")}]
    final = {
        u["toolCallId"]: u
        for u in updates(report, "tool_call_update", 0, end)
        if u.get("status") in ("completed", "failed")
    }
    diff = final["toolu_edit"]["content"][0]
    assert diff == {"type": "diff", "path": str(ws.cwd / "a.txt"), "oldText": "alpha\n", "newText": "beta\n"}
    assert final["toolu_ok"]["status"] == "completed"
    assert "allowed-command" in final["toolu_ok"]["content"][0]["content"]["text"]
    assert final["toolu_no"]["status"] == "failed"
    assert BLOCKED in final["toolu_no"]["content"][0]["content"]["text"]
    asked = [permission["toolCall"]["toolCallId"] for permission in report["permissions"]]
    # acceptEdits: the edits in the workspace are not asked (the guarded one was refused anyway)
    assert asked == ["toolu_ok", "toolu_no", "toolu_held"]
    assert [o["kind"] for o in report["permissions"][0]["options"]] == [
        "allow_once",
        "allow_always",
        "reject_once",
        "reject_always",
    ]
    shown = [
        u
        for u in updates(report, "tool_call_update", 0, end)
        if u["toolCallId"] == "toolu_ok" and u.get("content")
    ]
    assert shown[0]["content"][0]["content"]["text"] == "$ echo allowed-command"
    sequence = report["sequence"]  # the tool_call, then the update carrying the command, then the question
    assert sequence.index("tool_call:toolu_ok:") < sequence.index("tool_call_update:toolu_ok:content")
    assert sequence.index("tool_call_update:toolu_ok:content") < sequence.index("permission:toolu_ok")
    usage = updates(report, "usage_update", 0, end)
    assert len(usage) == 4 and usage[0]["used"] == 120 and usage[0]["size"] > 0

    # prompt 2: cancelled mid-stream; the prompt sent meanwhile was refused
    assert results["prompt2"] == {"stopReason": "cancelled"}
    assert errors["busy"]["code"] == -32006 and "already running a prompt" in errors["busy"]["message"]

    # modes and config options
    assert results["setMode"] == {}
    assert [u["currentModeId"] for u in updates(report, "current_mode_update")] == ["ask", "acceptEdits"]
    thinking = {o["id"]: o for o in results["setThinking"]["configOptions"]}["thinking_level"]
    assert thinking["currentValue"] == "high"
    assert errors["badMode"]["code"] == -32602 and errors["badMode"]["data"] == {"field": "modeId"}

    # prompt 3: an image, an embedded resource and a linked file, as pi's prompt
    assert results["prompt3"] == {"stopReason": "end_turn"}
    sent = fake.requests[5].body["messages"][-1]["content"]
    kinds = [block["type"] for block in sent]
    assert "image" in kinds
    text = "".join(block.get("text", "") for block in sent)
    assert f'<file name="{ws.cwd / "notes.md"}">\nembedded notes\n</file>\n' in text
    assert f'<file name="{ws.cwd / "b.txt"}">\nlinked file text\n\n</file>\n' in text
    assert text.endswith("Look at these")

    # prompt 5: the read saw the client's unsaved buffer, the edit refused to overwrite it
    assert results["prompt5"] == {"stopReason": "end_turn"}
    assert str(ws.cwd / "unsaved.txt") in report["fsReads"]
    assert (ws.cwd / "unsaved.txt").read_text() == "on disk\n"

    # prompt 4: cancelled while its permission question was open
    assert results["prompt4"] == {"stopReason": "cancelled"}
    assert report["permissions"][-1]["toolCall"]["toolCallId"] == "toolu_held"

    listed = results["list"]["sessions"]
    assert [item["sessionId"] for item in listed] == [report["sessionId"]]
    assert listed[0]["title"] and listed[0]["cwd"] == str(ws.cwd)
    assert errors["unknownSession"]["code"] == -32001
    assert results["close"] == {}


def check_stored(ws: Workspace) -> None:
    """What the first process wrote is pi's: the rejection as pi's blocked result, the partial."""
    assert (ws.cwd / "a.txt").read_text() == "beta\n"
    entries = session_entries(ws)
    stored = messages(entries)
    blocked = [m for m in stored if m["role"] == "toolResult" and m["toolCallId"] == "toolu_no"]
    assert blocked[0]["isError"] is True and BLOCKED in blocked[0]["content"][0]["text"]
    aborted = [m for m in stored if m["role"] == "assistant" and m.get("stopReason") == "aborted"]
    assert aborted[0]["content"][0]["text"].startswith("Once upon")  # the partial of the cancelled story
    read = next(m for m in stored if m["role"] == "toolResult" and m["toolCallId"] == "toolu_read")
    assert (
        read["content"][0]["text"].startswith("unsaved buffer text")
        and "unsaved" in read["content"][0]["text"]
    )
    guarded = next(m for m in stored if m["role"] == "toolResult" and m["toolCallId"] == "toolu_guarded")
    assert guarded["isError"] is True and "unsaved changes" in guarded["content"][0]["text"]
    held = [m for m in stored if m["role"] == "toolResult" and m["toolCallId"] == "toolu_held"]
    assert (
        held[0]["isError"] is True and "aborted while waiting for approval" in held[0]["content"][0]["text"]
    )
    levels = [entry["thinkingLevel"] for entry in entries if entry["type"] == "thinking_level_change"]
    assert levels[-1] == "high"
    assert not any(m["role"] == "user" and "meanwhile" in json.dumps(m) for m in stored)


def check_replay(report: dict[str, Any]) -> None:
    assert report["results"]["load"]["modes"]["currentModeId"] == "acceptEdits"
    replayed = [u["update"] for u in report["updates"]]
    users = [u["content"] for u in replayed if u["sessionUpdate"] == "user_message_chunk"]
    assert users[0] == {"type": "text", "text": "Edit a.txt, then run two commands"}
    assert any(block["type"] == "image" for block in users)
    thoughts = [u["content"]["text"] for u in replayed if u["sessionUpdate"] == "agent_thought_chunk"]
    assert thoughts == ["Let me look"]
    calls = [u["toolCallId"] for u in replayed if u["sessionUpdate"] == "tool_call"]
    assert calls == ["toolu_edit", "toolu_ok", "toolu_no", "toolu_read", "toolu_guarded", "toolu_held"]
    done = {u["toolCallId"]: u["status"] for u in replayed if u["sessionUpdate"] == "tool_call_update"}
    assert done == {
        "toolu_edit": "completed",
        "toolu_ok": "completed",
        "toolu_no": "failed",
        "toolu_read": "completed",
        "toolu_guarded": "failed",
        "toolu_held": "failed",
    }
    said = [u["content"]["text"] for u in replayed if u["sessionUpdate"] == "agent_message_chunk"]
    assert "All done." in said and "Seen the picture and the notes." in said


def check_resume(report: dict[str, Any], *, pi_continued: bool) -> None:
    assert "user_message_chunk" not in report["afterResume"]  # resume: no replay
    assert report["results"]["name"] == {"stopReason": "end_turn"}
    titles = [u["title"] for u in updates(report, "session_info_update")]
    assert titles == ["From ACP", "From ACP"]  # after /name, and with the reload's replay
    said = "".join(u["content"]["text"] for u in updates(report, "agent_message_chunk"))
    assert "Session info" in said and "Messages:" in said
    assert report["results"]["compact"] == {"stopReason": "end_turn"}
    assert "Context compacted:" in said
    # the other way round: what LSP and pi wrote, replayed over ACP
    replayed = updates(report, "agent_message_chunk", report["beforeReload"])
    texts = [u["content"]["text"] for u in replayed]
    assert "Continued over LSP." in texts and any(text.startswith("_(compaction summary)_") for text in texts)
    if pi_continued:
        assert "Continued by pi." in texts
    users = [u["content"].get("text") for u in updates(report, "user_message_chunk", report["beforeReload"])]
    assert "go on over LSP" in users
