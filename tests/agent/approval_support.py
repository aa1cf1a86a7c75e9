"""Helpers of the approval tests: a chat whose editor declares approvals, and its tool results."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable
from typing import Any

from tests.agent.chat_support import MODEL, ChatClient, Workspace
from tests.llm.fake_anthropic import FakeAnthropic, Reply, Text, ToolUse, assistant_stream
from tests.pi.pi_rpc import write_agent_dir


def batch(*calls: ToolUse) -> list[Reply]:
    """One turn calling ``calls`` together, then a closing text turn."""
    return [
        Reply(events=assistant_stream(*calls, message_id="m_tools")),
        Reply(events=assistant_stream(Text("Done."), message_id="m_done")),
    ]


@contextlib.asynccontextmanager
async def chat(
    replies: Callable[[Workspace], list[Reply]], *, options: dict[str, Any] | None = None,
    setup: Callable[[Workspace], dict[str, str]] | None = None,
) -> AsyncIterator[tuple[Workspace, ChatClient]]:  # fmt: skip
    """A workspace (``setup`` makes its files and returns extra server environment), the fake
    model scripted with ``replies(ws)``, and a connected client declaring approvals."""
    ws = Workspace({"hello.txt": "line one\n"})
    try:
        env = setup(ws) if setup is not None else {}
        async with FakeAnthropic(replies(ws)) as fake:
            write_agent_dir(ws.agent_dir, fake.url, ws.settings)
            options = {"model": MODEL, **(options or {})}
            client = await ChatClient.start(ws, fake.url, options=options, env=env)
            try:
                yield ws, client
            finally:
                await client.close()
    finally:
        ws.cleanup()


def tool_results(ws: Workspace) -> dict[str, dict[str, Any]]:
    messages = [e["message"] for e in ws.entries() if e["type"] == "message"]
    return {m["toolCallId"]: m for m in messages if m["role"] == "toolResult"}


def result_text(message: dict[str, Any]) -> str:
    return str(message["content"][0]["text"])
