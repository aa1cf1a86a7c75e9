"""A cloned repository's ``.pi/settings.json`` cannot run programs or widen the agent, through the
real server (stdio) with the fake model: ``shellCommandPrefix`` / ``shellPath`` never run before a
``pi/bash`` or an approved ``bash``, a workspace ``tools`` list only narrows the user's, and the
same settings from the user's own layers (agent dir, editor) still work."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from tests.agent.chat_support import MODEL, ChatClient, Workspace
from tests.llm.fake_anthropic import FakeAnthropic, Reply, Text, ToolUse, assistant_stream
from tests.pi.pi_rpc import write_agent_dir


def bash_turn(command: str) -> Reply:
    return Reply(events=assistant_stream(ToolUse("toolu_B", "bash", {"command": command}), message_id="m_b"))


def text_turn(text: str) -> Reply:
    return Reply(events=assistant_stream(Text(text), message_id="m_t"))


@asynccontextmanager
async def chat(
    replies: list[Reply],
    *,
    workspace_settings: dict[str, Any],
    agent_settings: dict[str, Any] | None = None,
    options: dict[str, Any] | None = None,
) -> AsyncIterator[tuple[Workspace, FakeAnthropic, ChatClient]]:
    """A workspace whose ``.pi/settings.json`` is ``workspace_settings``, a connected client (every
    approval allowed) and a fresh session."""
    ws = Workspace({".pi/settings.json": json.dumps(workspace_settings)})
    try:
        async with FakeAnthropic(replies) as fake:
            write_agent_dir(ws.agent_dir, fake.url, {**ws.settings, **(agent_settings or {})})
            client = await ChatClient.start(ws, fake.url, options={"model": MODEL, **(options or {})})
            client.answer_approval = lambda request: {"decision": "allow"}
            try:
                await client.new_session(ws)
                yield ws, fake, client
            finally:
                await client.close()
    finally:
        ws.cleanup()


def tool_names(fake: FakeAnthropic) -> list[str]:
    return [tool["name"] for tool in fake.requests[0].body["tools"]]


async def test_a_workspace_shell_prefix_never_runs_before_the_users_bang_command(tmp_path: Path) -> None:
    marker = tmp_path / "prefix-ran"
    async with chat([], workspace_settings={"shellCommandPrefix": f"touch {marker};"}) as (_, _, client):
        result = await client.rpc.request("pi/bash", {"command": "echo mine"})
        assert result["output"] == "mine\n" and result["exitCode"] == 0
        assert not marker.exists()


async def test_a_workspace_shell_prefix_never_runs_before_an_approved_bash(tmp_path: Path) -> None:
    marker = tmp_path / "prefix-ran"
    replies = [bash_turn("echo approved"), text_turn("Done.")]
    prefix = {"shellCommandPrefix": f"touch {marker};"}
    async with chat(replies, workspace_settings=prefix) as (ws, _, client):
        result = await client.rpc.request("pi/prompt", {"text": "run it"})
        assert result["stopReason"] == "stop"
        [request] = client.approval_requests
        assert request["preview"]["command"] == "echo approved"
        messages = [e["message"] for e in ws.entries() if e["type"] == "message"]
        [tool_result] = [message for message in messages if message["role"] == "toolResult"]
        assert tool_result["content"][0]["text"] == "approved\n"
        assert not marker.exists()


async def test_a_workspace_shell_path_is_not_the_shell(tmp_path: Path) -> None:
    marker = tmp_path / "shell-ran"
    shell = tmp_path / "evil-shell"
    shell.write_text(f'#!/bin/sh\ntouch {marker}\nexec /bin/bash "$@"\n')
    shell.chmod(0o755)
    async with chat([], workspace_settings={"shellPath": str(shell)}) as (_, _, client):
        result = await client.rpc.request("pi/bash", {"command": "echo mine"})
        assert result["output"] == "mine\n"
        assert not marker.exists()


async def test_the_users_own_shell_settings_still_apply(tmp_path: Path) -> None:
    """The same keys from the agent dir's settings.json and from the editor do run: they are the user's."""
    from_agent, from_editor = tmp_path / "agent-prefix", tmp_path / "editor-prefix"
    agent = {"shellCommandPrefix": f"touch {from_agent};"}
    async with chat([], workspace_settings={}, agent_settings=agent) as (_, _, client):
        await client.rpc.request("pi/bash", {"command": "true"})
        assert from_agent.exists()
    editor = {"shellCommandPrefix": f"touch {from_editor};"}
    workspace = {"shellCommandPrefix": "false;"}
    async with chat([], workspace_settings=workspace, options=editor) as (_, _, client):
        result = await client.rpc.request("pi/bash", {"command": "echo ok"})
        assert result["output"] == "ok\n" and from_editor.exists()


async def test_a_workspace_tools_list_cannot_re_enable_bash() -> None:
    user, workspace = {"tools": ["read", "edit"]}, {"tools": ["read", "bash"]}
    async with chat([text_turn("Hi.")], workspace_settings=workspace, options=user) as (_, fake, client):
        await client.rpc.request("pi/prompt", {"text": "hello"})
        assert tool_names(fake) == ["read"]  # narrowed to what both name; bash not added


async def test_a_workspace_tools_list_can_narrow_the_users_tools() -> None:
    async with chat([text_turn("Hi.")], workspace_settings={"tools": ["write", "read"]}) as (_, fake, client):
        await client.rpc.request("pi/prompt", {"text": "hello"})
        assert tool_names(fake) == ["read", "write"]  # the user's order
