"""A session an ACP client holds gets what other processes append to it, live, through the SDK.

The language server (another process) writes a conversation; an ACP process loads it; the
server's next prompt (a bash call and a reply) reaches the ACP client as ``session/update``s, as
``load`` would replay them, each once, schema-valid. The ACP client's own prompt (its
``usage_update`` sized by the user's ``contextWindow`` setting) is not sent back to it when the
server, after noticing it, goes on.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from pi_lsp.client.rpc_client import RpcClient, server_command
from tests.acp.sdk_support import require_sdk, run_client, updates
from tests.agent.chat_support import MODEL, workspace
from tests.llm.fake_anthropic import FakeAnthropic, Reply, Text, ToolUse, assistant_stream
from tests.pi.pi_rpc import write_agent_dir

WINDOW = 123_456  # the user's contextWindow setting: not any model's own window


def replies() -> list[Reply]:
    return [
        Reply(events=assistant_stream(Text("First reply."))),
        Reply(events=assistant_stream(ToolUse("toolu_live", "bash", {"command": "echo live-command"}))),
        Reply(events=assistant_stream(Text("Second reply from LSP."))),
        Reply(events=assistant_stream(Text("ACP reply."))),
        Reply(events=assistant_stream(Text("Third reply from LSP."))),
    ]


async def until_file(path: Path) -> None:
    while not path.exists():
        await asyncio.sleep(0.05)


async def caught_up(lsp: RpcClient, session_id: str, file: Path) -> None:
    """Until the server has read every line of ``file`` (its leaf is the file's last entry), so
    that its next prompt continues the branch rather than starting one beside it."""
    last = json.loads(file.read_text().splitlines()[-1])["id"]
    while (await lsp.request("pi/getSessionState", {"sessionId": session_id}))["leafId"] != last:
        await asyncio.sleep(0.05)


def texts(found: list[dict[str, Any]]) -> list[str]:
    return [update["content"]["text"] for update in found]


async def test_what_another_process_appends_streams_to_the_acp_client_once() -> None:
    require_sdk()
    with workspace() as ws:
        async with FakeAnthropic(replies()) as fake:
            write_agent_dir(ws.agent_dir, fake.url, {**ws.settings, "model": MODEL, "contextWindow": WINDOW})
            lsp = await RpcClient.start(server_command(), env=ws.server_env(fake.url), quiet=True)
            try:
                await lsp.initialize(str(ws.cwd), {"pi": {"model": MODEL, "approval": "auto"}})
                state = await lsp.request("pi/newSession", {"cwd": str(ws.cwd)})
                session_id = state["sessionId"]
                answer = await lsp.request("pi/prompt", {"sessionId": session_id, "text": "first over LSP"})
                assert answer["stopReason"] == "stop"
                loaded, prompted = ws.root / "loaded", ws.root / "prompted"

                async def meanwhile() -> None:
                    await until_file(loaded)
                    lsp.drain_notifications()
                    await lsp.request("pi/prompt", {"sessionId": session_id, "text": "second over LSP"})
                    await until_file(prompted)
                    await caught_up(lsp, session_id, Path(state["file"]))  # the ACP side's entries
                    await lsp.request("pi/prompt", {"sessionId": session_id, "text": "third over LSP"})

                markers = {"loadedMarker": str(loaded), "promptedMarker": str(prompted)}
                texts_used = {"promptText": "from ACP", "untilText": "Second reply from LSP.",
                              "untilText2": "Third reply from LSP."}  # fmt: skip
                client = run_client(
                    ws, fake.url, "live", during=meanwhile, sessionId=session_id, **markers, **texts_used
                )
                report = await asyncio.wait_for(client, 120)
            finally:
                await lsp.close()

    assert "untilText" not in report["errors"] and "untilText2" not in report["errors"], report["errors"]
    loaded_at, live_end, prompt_end = report["afterLoad"], report["afterLive"], report["afterPrompt"]
    assert texts(updates(report, "user_message_chunk", 0, loaded_at)) == ["first over LSP"]
    assert texts(updates(report, "agent_message_chunk", 0, loaded_at)) == ["First reply."]

    # the server's second prompt, live: the user's text, the bash call and its result, the reply
    assert texts(updates(report, "user_message_chunk", loaded_at, live_end)) == ["second over LSP"]
    calls = updates(report, "tool_call", loaded_at, live_end)
    assert [(call["toolCallId"], call["kind"]) for call in calls] == [("toolu_live", "execute")]
    results = updates(report, "tool_call_update", loaded_at, live_end)
    outcome = [(result["toolCallId"], result["status"]) for result in results]
    assert outcome == [("toolu_live", "completed")], results
    assert "live-command" in results[0]["content"][0]["content"]["text"]
    assert texts(updates(report, "agent_message_chunk", loaded_at, live_end)) == ["Second reply from LSP."]

    # the ACP client's own prompt: its gauge is sized by the contextWindow setting
    assert report["results"]["prompt"] == {"stopReason": "end_turn"}
    usage = updates(report, "usage_update", live_end, prompt_end)
    assert usage and all(update["size"] == WINDOW for update in usage), usage

    # then only what the server appended: nothing of the ACP process's own entries comes back
    assert texts(updates(report, "user_message_chunk", prompt_end)) == ["third over LSP"]
    assert texts(updates(report, "agent_message_chunk", prompt_end)) == ["Third reply from LSP."]
    assert updates(report, "tool_call", prompt_end) == []
