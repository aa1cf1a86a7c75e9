"""Differential: pi's own agent and ``build_messages_request`` send the same Messages API request.

pi (``tests/pi/agent_run.mjs``) runs a scripted conversation against the loopback fake; for every
model call we take the agent messages pi converted, its tools and system prompt, build our request
for the same context and compare it with the body the fake received from pi — whole, as JSON.
Headers are compared by sending our request through our client to the same fake.
"""

from __future__ import annotations

import asyncio
import base64
from pathlib import Path
from typing import Any

import pytest

from pi_lsp.llm.anthropic_client import create_async_client
from pi_lsp.llm.models import find_model
from pi_lsp.llm.request import MessagesRequest, build_messages_request
from pi_lsp.llm.stream import stream_assistant_message
from tests.llm.fake_anthropic import FakeAnthropic, Recorded, Reply, Text, Thinking, ToolUse, assistant_stream
from tests.llm.pi_agent import FAKE_KEY, PiRun, run_pi_agent, session_file
from tests.oracle import require_oracle

pytestmark = pytest.mark.oracle

PNG = base64.b64encode(
    bytes.fromhex(
        "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
        "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082"
    )
).decode()
PI_HEADERS = ("accept", "anthropic-version", "anthropic-beta", "anthropic-dangerous-direct-browser-access",
              "content-type", "x-api-key")  # fmt: skip


@pytest.fixture(autouse=True)
def _needs_pi() -> None:
    require_oracle()


def _ours(run: PiRun, index: int) -> MessagesRequest:
    model = find_model(run.model)
    assert model is not None
    return build_messages_request(
        model=model,
        system_prompt=run.system_prompt,
        messages=run.contexts[index],
        tools=run.tools,
        thinking_level=run.thinking_level,
    )


def _assert_same_requests(run: PiRun, requests: list[Recorded], sent: list[bytes]) -> None:
    """Equal as JSON, and byte for byte as sent (key order, escapes, numbers)."""
    assert len(run.contexts) == len(requests) == len(sent) > 0
    for index, recorded in enumerate(requests):
        ours = _ours(run, index)
        assert ours.body == recorded.body, f"request {index + 1} differs"
        assert ours.body_bytes() == sent[index], f"request {index + 1} differs in its bytes"


@pytest.mark.parametrize(
    ("model_id", "level"),
    [
        ("claude-sonnet-4-5", "off"),
        ("claude-sonnet-4-5", "low"),
        ("claude-sonnet-4-5", "high"),
        ("claude-sonnet-4-6", "high"),
        ("claude-opus-4-6", "xhigh"),
        ("claude-opus-4-7", "minimal"),
        ("claude-opus-4-1", "high"),
        ("claude-3-5-haiku-latest", "medium"),
    ],
)
async def test_plain_prompt_request_equals_pis(tmp_path: Path, model_id: str, level: str) -> None:
    async with FakeAnthropic([Reply(events=assistant_stream(Text("Hello!"), model=model_id))]) as fake:
        run = await run_pi_agent(fake, tmp_path, model_id=model_id, thinking_level=level,
                                 prompts=[{"text": "Say hello"}])  # fmt: skip
        requests = list(fake.requests)
    _assert_same_requests(run, requests, fake.request_bytes)
    model = find_model(model_id)
    assert model is not None
    # the level pi settled on is ours too (clamped as pi clamps)
    from pi_lsp.llm.models import clamp_thinking_level

    assert clamp_thinking_level(model, level) == run.thinking_level


async def test_tool_loop_requests_equal_pis(tmp_path: Path) -> None:
    """Thinking with a signature, text, two tool calls run by pi, their merged results, then text."""
    (tmp_path / "work").mkdir()
    (tmp_path / "work" / "notes.txt").write_text("line one\nline two\n")
    first = assistant_stream(
        Thinking("Let me look at the file.", signature="SIG_abc123"),
        Text("I will read it and list the folder."),
        ToolUse("toolu_01A", "read", {"path": "notes.txt"}),
        ToolUse("toolu_01B", "bash", {"command": "echo from-bash"}),
        message_id="msg_01", cache_write=1400,
    )  # fmt: skip
    second = assistant_stream(Text("Done: two lines."), message_id="msg_02", cache_read=1400)
    replies = [Reply(events=first), Reply(events=second)]
    async with FakeAnthropic(replies) as fake:
        run = await run_pi_agent(fake, tmp_path, model_id="claude-sonnet-4-5", thinking_level="medium",
                                 prompts=[{"text": "Check notes.txt"}])  # fmt: skip
        requests = list(fake.requests)
    assert len(requests) == 2
    last_user = requests[1].body["messages"][-1]
    assert [block["type"] for block in last_user["content"]] == ["tool_result", "tool_result"]
    _assert_same_requests(run, requests, fake.request_bytes)


async def test_history_with_aborted_reply_images_summaries_and_foreign_model(tmp_path: Path) -> None:
    """A resumed session: compaction summary, aborted and errored replies, an orphaned tool call, a
    reply from another model (thinking → text, odd tool-call id), branch summary, custom message,
    a user's shell command, an image; then a new prompt with an image."""
    cwd = tmp_path / "work"
    cwd.mkdir()
    usage = {"input": 10, "output": 5, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 15,
             "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}}  # fmt: skip

    def assistant(content: list[dict[str, Any]], stop: str = "stop", model: str = "claude-sonnet-4-5",
                  **extra: Any) -> dict[str, Any]:  # fmt: skip
        return {"message": {"role": "assistant", "content": content, "api": "anthropic-messages",
                             "provider": "anthropic", "model": model, "usage": usage, "stopReason": stop,
                             "timestamp": 1767225600000, **extra}}  # fmt: skip

    def user(content: Any) -> dict[str, Any]:
        return {"message": {"role": "user", "content": content, "timestamp": 1767225600000}}

    def tool_result(call_id: str, name: str, text: str, is_error: bool = False) -> dict[str, Any]:
        return {"message": {"role": "toolResult", "toolCallId": call_id, "toolName": name,
                             "content": [{"type": "text", "text": text}], "isError": is_error,
                             "timestamp": 1767225600000}}  # fmt: skip

    entries: list[dict[str, Any]] = [
        {"type": "model_change", "provider": "anthropic", "modelId": "claude-sonnet-4-5"},
        {"type": "thinking_level_change", "thinkingLevel": "medium"},
        {"id": "old-user", **user([{"type": "text", "text": "an old question"}])},
        assistant([{"type": "text", "text": "an old answer"}]),
        {"id": "kept", **user("kept question as a plain string")},
        assistant([{"type": "text", "text": "kept answer"}]),
        {"type": "compaction", "summary": "## Goal\nEarlier work", "firstKeptEntryId": "kept",
         "tokensBefore": 5000},
        user([{"type": "text", "text": "Explain"}]),
        assistant([{"type": "thinking", "thinking": "half a thought"}, {"type": "text", "text": "partial"}],
                  stop="aborted", errorMessage="This operation was aborted"),
        user([{"type": "text", "text": "Look at this"},
              {"type": "image", "data": PNG, "mimeType": "image/png"}]),
        assistant([], stop="error", errorMessage='529 {"type":"error"}'),
        assistant([{"type": "thinking", "thinking": "foreign thought", "thinkingSignature": "SIG_other"},
                   {"type": "text", "text": "Running it"},
                   {"type": "toolCall", "id": "call|weird.id/1", "name": "bash",
                    "arguments": {"command": "ls"}}],
                  stop="toolUse", model="claude-opus-4-5"),
        tool_result("call|weird.id/1", "bash", "a\nb"),
        assistant([{"type": "toolCall", "id": "toolu_orphan", "name": "read", "arguments": {"path": "x"}},
                   {"type": "text", "text": "   "}], stop="toolUse"),
        {"type": "branch_summary", "fromId": "kept", "summary": "Tried approach A."},
        {"type": "custom_message", "customType": "note", "content": "extension note", "display": True},
        {"message": {"role": "bashExecution", "command": "git status", "output": "clean", "exitCode": 1,
                     "cancelled": False, "truncated": False, "timestamp": 1767225600000}},
        {"message": {"role": "bashExecution", "command": "secret", "output": "x", "exitCode": 0,
                     "cancelled": False, "truncated": False, "timestamp": 1767225600000,
                     "excludeFromContext": True}},
        assistant([{"type": "thinking", "thinking": "signed", "thinkingSignature": "SIG_same"},
                   {"type": "thinking", "thinking": "[Reasoning redacted]", "thinkingSignature": "DATA",
                    "redacted": True},
                   {"type": "text", "text": "ok"}]),
    ]  # fmt: skip
    path = session_file(tmp_path / "sessions" / "resumed.jsonl", cwd, entries)
    prompt = {"text": "Continue, see image", "images": [{"data": PNG, "mimeType": "image/png"}]}
    async with FakeAnthropic([Reply(events=assistant_stream(Text("Continuing.")))]) as fake:
        run = await run_pi_agent(fake, tmp_path, model_id="claude-sonnet-4-5", thinking_level="medium",
                                 prompts=[prompt], session_file=path)  # fmt: skip
        requests = list(fake.requests)
    sent = requests[0].body["messages"]
    texts = [str(message["content"]) for message in sent]
    assert not any("partial" in text for text in texts)  # the aborted reply is skipped
    assert any("No result provided" in text for text in texts)  # the orphan was filled
    _assert_same_requests(run, requests, fake.request_bytes)


async def test_runs_of_tool_results_across_skipped_replies_and_orphans(tmp_path: Path) -> None:
    """How results group into user messages: a call left unanswered gets its stand-in result at the
    end of the run before the next reply, an aborted or errored reply between results does not
    split the run (it is left out), a user message does; an orphan before a user message too."""
    cwd = tmp_path / "work"
    cwd.mkdir()
    usage = {"input": 10, "output": 5, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 15,
             "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}}  # fmt: skip

    def assistant(content: list[dict[str, Any]], stop: str = "toolUse") -> dict[str, Any]:
        return {"message": {"role": "assistant", "content": content, "api": "anthropic-messages",
                             "provider": "anthropic", "model": "claude-sonnet-4-5", "usage": usage,
                             "stopReason": stop, "timestamp": 1767225600000}}  # fmt: skip

    def call(call_id: str) -> dict[str, Any]:
        return {"type": "toolCall", "id": call_id, "name": "read", "arguments": {"path": call_id}}

    def user(text: str) -> dict[str, Any]:
        return {"message": {"role": "user", "content": [{"type": "text", "text": text}],
                             "timestamp": 1767225600000}}  # fmt: skip

    def tool_result(call_id: str) -> dict[str, Any]:
        return {"message": {"role": "toolResult", "toolCallId": call_id, "toolName": "read",
                             "content": [{"type": "text", "text": f"text of {call_id}"}], "isError": False,
                             "timestamp": 1767225600000}}  # fmt: skip

    entries: list[dict[str, Any]] = [
        user("start"),
        assistant([call("toolu_a1"), call("toolu_a2"), call("toolu_a3")]),
        tool_result("toolu_a1"),
        tool_result("toolu_a3"),
        assistant([{"type": "text", "text": "cut"}, call("toolu_b1")], stop="aborted"),
        tool_result("toolu_b1"),
        assistant([], stop="error"),
        tool_result("toolu_a2"),
        user("next"),
        assistant([call("toolu_c1"), call("toolu_c2")]),
        tool_result("toolu_c2"),
        user("again"),
        assistant([call("toolu_d1")]),
        assistant([{"type": "text", "text": "done"}], stop="stop"),
    ]
    path = session_file(tmp_path / "sessions" / "runs.jsonl", cwd, entries)
    async with FakeAnthropic([Reply(events=assistant_stream(Text("Continuing.")))]) as fake:
        run = await run_pi_agent(fake, tmp_path, model_id="claude-sonnet-4-5", thinking_level="off",
                                 prompts=[{"text": "Go on"}], session_file=path)  # fmt: skip
        requests = list(fake.requests)
    sent = requests[0].body["messages"]
    # stand-ins for a2 (its late result follows), c1 and d1, each in its run of results
    assert sum("No result provided" in str(message["content"]) for message in sent) == 3
    _assert_same_requests(run, requests, fake.request_bytes)


async def test_tool_results_with_images_and_two_prompts(tmp_path: Path) -> None:
    """pi's read tool returns an image; the next request carries it as tool_result blocks."""
    (tmp_path / "work").mkdir()
    (tmp_path / "work" / "dot.png").write_bytes(base64.b64decode(PNG))
    replies = [
        Reply(events=assistant_stream(ToolUse("toolu_img", "read", {"path": "dot.png"}))),
        Reply(events=assistant_stream(Text("A dot."))),
        Reply(events=assistant_stream(Text("Second answer."))),
    ]
    async with FakeAnthropic(replies) as fake:
        run = await run_pi_agent(fake, tmp_path, model_id="claude-haiku-4-5", thinking_level="off",
                                 prompts=[{"text": "What is in dot.png?"}, {"text": "   "}])  # fmt: skip
        requests = list(fake.requests)
    assert len(requests) == 3
    _assert_same_requests(run, requests, fake.request_bytes)


@pytest.mark.parametrize("model_id", ["claude-sonnet-4-5", "claude-sonnet-4-6"])
async def test_headers_equal_pis(tmp_path: Path, model_id: str) -> None:
    async with FakeAnthropic([Reply(events=assistant_stream(Text("Hi")))]) as fake:
        run = await run_pi_agent(fake, tmp_path, model_id=model_id, thinking_level="medium",
                                 prompts=[{"text": "Hi"}])  # fmt: skip
        model = find_model(model_id)
        assert model is not None
        ours = build_messages_request(model=model, system_prompt=run.system_prompt, messages=run.contexts[0],
                                      tools=run.tools, thinking_level=run.thinking_level)  # fmt: skip
        client = create_async_client(FAKE_KEY, fake.url, max_retries=0)
        await stream_assistant_message(client, ours, model, abort=asyncio.Event(), on_event=lambda _e: None)
        await client.close()
        pi_request, our_request = fake.requests
    pi_headers = {h: pi_request.headers.get(h) for h in PI_HEADERS}
    assert pi_headers == {h: our_request.headers.get(h) for h in PI_HEADERS}
    assert pi_headers["x-api-key"] == FAKE_KEY
    assert our_request.body == pi_request.body
    pi_bytes, our_bytes = fake.request_bytes
    assert our_bytes == pi_bytes  # what our client sends is pi's body byte for byte


async def test_settings_budgets_blocked_images_and_long_cache_equal_pis(tmp_path: Path) -> None:
    """pi's ``thinkingBudgets`` and ``blockImages`` settings and ``PI_CACHE_RETENTION=long``."""
    settings = {"thinkingBudgets": {"medium": 5000, "low": 100}, "images": {"blockImages": True}}
    prompt = {"text": "Look", "images": [{"data": PNG, "mimeType": "image/png"},
                                          {"data": PNG, "mimeType": "image/png"}]}  # fmt: skip
    async with FakeAnthropic([Reply(events=assistant_stream(Text("ok")))]) as fake:
        run = await run_pi_agent(fake, tmp_path, model_id="claude-sonnet-4-5", thinking_level="medium",
                                 prompts=[prompt], settings=settings,
                                 env={"PI_CACHE_RETENTION": "long"})  # fmt: skip
        requests = list(fake.requests)
    model = find_model(run.model)
    assert model is not None
    ours = build_messages_request(
        model=model, system_prompt=run.system_prompt, messages=run.contexts[0], tools=run.tools,
        thinking_level=run.thinking_level, thinking_budgets=settings["thinkingBudgets"],
        block_images=True, cache_retention="long",
    ).body  # fmt: skip
    body = requests[0].body
    assert body["thinking"]["budget_tokens"] == 5000 and body["system"][0]["cache_control"]["ttl"] == "1h"
    assert ours == body
