""":PiChat in a real headless Neovim against the real server and the loopback fake Messages API:
a streamed reply lands in the chat buffer, a bash call is approved through (a stubbed)
``vim.ui.select``, the user's cursor stays where they read, and :PiStop aborts a stalled reply."""

from __future__ import annotations

from pathlib import Path

from tests.agent.chat_support import MODEL, Workspace
from tests.llm.fake_anthropic import FakeAnthropic, Reply, Text, ToolUse, assistant_stream
from tests.nvim.headless import run_lua
from tests.pi.pi_rpc import write_agent_dir

SCRIPT = Path(__file__).with_name("chat_e2e.lua")


def _text(reply: str, message_id: str) -> Reply:
    return Reply(events=assistant_stream(Text(reply), message_id=message_id))


async def test_chat_streams_approves_and_stops(tmp_path: Path, nvim: str) -> None:
    partial = assistant_stream(Text("Partial reply that never ends"), message_id="m_slow")
    stalled = Reply(events=partial, stall_after=5)  # the connection stays open: only an abort ends it
    call = ToolUse("toolu_B", "bash", {"command": "echo approved-run"})
    bash = Reply(events=assistant_stream(call, message_id="m_b"))
    replies = [_text("Hello from the fake model.", "m_1"), bash, _text("Done.", "m_2"), stalled]
    ws = Workspace({"hello.txt": "line one\n"})
    try:
        async with FakeAnthropic(replies) as fake:
            write_agent_dir(ws.agent_dir, fake.url, ws.settings)
            settings = {"model": MODEL, "sessionDir": str(ws.sessions)}
            seen = await run_lua(nvim, SCRIPT, tmp_path, ws.cwd, ws.server_env(fake.url), settings, 90)
            requests = len(fake.requests)
        messages = [e["message"] for e in ws.entries() if e["type"] == "message"]
    finally:
        ws.cleanup()

    assert seen["filetype"] == "markdown"
    first = seen["first"]
    assert first[:4] == ["## You", "", "hello", ""]
    assert "Hello from the fake model." in first and first[-2].startswith("---- prompt")
    # the approval went through vim.ui.select with the three answers, and the command ran
    assert [a["items"] for a in seen["asked"]] == [["Allow", "Allow always", "Deny"]]
    # the whole command is shown in a scratch split while the question is asked
    assert {"filetype": "sh", "lines": ["echo approved-run"]} in seen["asked"][0]["windows"]
    assert "echo approved-run" in seen["asked"][0]["prompt"]
    second = "\n".join(seen["second"])
    assert "## You\n\nrun it" in second and "> result bash: approved-run" in second and "Done." in second
    assert seen["cursor"] == [1, 2]  # replies streamed in below without moving the reader's cursor
    # :PiStop aborted the stalled reply; the partial text is kept
    assert seen["partial"] and "Partial reply that never ends".startswith(seen["partial"])
    assert any(line.startswith("_(aborted") for line in seen["third"])
    assert requests == 4
    assert [m["role"] for m in messages] == [
        "user", "assistant", "user", "assistant", "toolResult", "assistant", "user", "assistant",
    ]  # fmt: skip
    assert messages[4]["content"][0]["text"].strip() == "approved-run" and not messages[4]["isError"]
    assert messages[-1]["stopReason"] == "aborted"
