"""One streamed call through the real ``anthropic`` SDK against the loopback fake, folded into pi's
AssistantMessage and events — the happy path, every fault, and abort."""

from __future__ import annotations

import asyncio
import json
import socket
from typing import Any

import pytest

from pi_lsp.llm.anthropic_client import create_async_client
from pi_lsp.llm.models import find_model
from pi_lsp.llm.request import MessagesRequest, build_messages_request
from pi_lsp.llm.stream import is_context_overflow, is_retryable_error, stream_assistant_message
from tests.llm.fake_anthropic import (
    FakeAnthropic,
    Redacted,
    Reply,
    Text,
    Thinking,
    ToolUse,
    assistant_stream,
    error_event,
    error_reply,
    sse,
)

KEY = "sk-ant-api03-streamtest-0123456789"
SONNET = find_model("claude-sonnet-4-5")
assert SONNET is not None


def _request() -> MessagesRequest:
    user = {"role": "user", "content": [{"type": "text", "text": "hi"}], "timestamp": 1}
    return build_messages_request(
        model=SONNET, system_prompt="sys", messages=[user], tools=[], thinking_level="medium"
    )


async def _call(
    fake: FakeAnthropic,
    *,
    abort: asyncio.Event | None = None,
    max_retries: int = 0,
    timeout: float = 30.0,
    base_url: str | None = None,
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    client = create_async_client(KEY, base_url or fake.url, max_retries=max_retries, timeout=timeout)
    events: list[dict[str, Any]] = []
    try:
        message = await stream_assistant_message(
            client, _request(), SONNET, abort=abort or asyncio.Event(), on_event=events.append
        )
    finally:
        await client.close()
    return message, events


async def test_full_reply_is_pis_message_with_pis_event_sequence() -> None:
    frames = assistant_stream(
        Thinking("Let me look.", signature="SIG_abc123"),
        Text("I will run tools."),
        ToolUse("toolu_01A", "bash", {"command": "ls -la"}),
        ToolUse("toolu_01B", "read", {"path": "a.txt", "offset": 2}),
        message_id="msg_01",
        input_tokens=1500,
        output_tokens=120,
        cache_write=1400,
    )
    async with FakeAnthropic([Reply(events=frames)]) as fake:
        message, events = await _call(fake)
    assert list(message) == [
        "role", "content", "api", "provider", "model", "usage", "stopReason", "timestamp", "responseId",
    ]  # fmt: skip
    assert message["content"] == [
        {"type": "thinking", "thinking": "Let me look.", "thinkingSignature": "SIG_abc123"},
        {"type": "text", "text": "I will run tools."},
        {"type": "toolCall", "id": "toolu_01A", "name": "bash", "arguments": {"command": "ls -la"}},
        {"type": "toolCall", "id": "toolu_01B", "name": "read", "arguments": {"path": "a.txt", "offset": 2}},
    ]
    assert message["usage"] == {
        "input": 1500, "output": 120, "cacheRead": 0, "cacheWrite": 1400, "totalTokens": 3020,
        "cost": {"input": 0.0045000000000000005, "output": 0.0018, "cacheRead": 0, "cacheWrite": 0.00525,
                 "total": 0.011550000000000001},  # node prints the same doubles
    }  # fmt: skip
    assert message["stopReason"] == "toolUse"
    assert message["responseId"] == "msg_01"
    assert (message["api"], message["provider"], message["model"]) == (
        "anthropic-messages", "anthropic", "claude-sonnet-4-5",
    )  # fmt: skip
    kinds = [e["type"] for e in events]
    assert kinds[0] == "start" and kinds[-1] == "done"
    assert kinds[1:4] == ["thinking_start", "thinking_delta", "thinking_delta"]
    assert "thinking_end" in kinds and kinds.count("toolcall_end") == 2
    assert kinds.index("text_start") > kinds.index("thinking_end")
    ends = [e for e in events if e["type"] == "toolcall_end"]
    assert [e["contentIndex"] for e in ends] == [2, 3]
    assert ends[0]["toolCall"] == message["content"][2]
    deltas = "".join(e["delta"] for e in events if e["type"] == "toolcall_delta" and e["contentIndex"] == 2)
    assert deltas == '{"command": "ls -la"}'
    assert events[-1] == {"type": "done", "reason": "toolUse"}
    assert all("partial" not in e for e in events)


async def test_request_carries_pis_headers_and_body() -> None:
    async with FakeAnthropic([Reply(events=assistant_stream(Text("ok")))]) as fake:
        await _call(fake)
        recorded = fake.requests[0]
    assert recorded.path == "/v1/messages"
    assert recorded.headers["x-api-key"] == KEY
    assert "authorization" not in recorded.headers
    assert recorded.headers["anthropic-version"] == "2023-06-01"
    assert recorded.headers["anthropic-beta"] == "interleaved-thinking-2025-05-14"
    assert recorded.headers["anthropic-dangerous-direct-browser-access"] == "true"
    assert recorded.headers["accept"] == "application/json"
    assert recorded.body == _request().body


async def test_redacted_thinking_and_stop_reason_mapping() -> None:
    frames = assistant_stream(Redacted("OPAQUE"), Text("done"), stop_reason="max_tokens")
    async with FakeAnthropic([Reply(events=frames)]) as fake:
        message, _ = await _call(fake)
    assert message["content"][0] == {
        "type": "thinking", "thinking": "[Reasoning redacted]", "thinkingSignature": "OPAQUE",
        "redacted": True,
    }  # fmt: skip
    assert message["stopReason"] == "length"
    assert "errorMessage" not in message


async def test_refusal_ends_as_error_with_pis_text() -> None:
    frames = assistant_stream(Text("no"), stop_reason="refusal")
    async with FakeAnthropic([Reply(events=frames)]) as fake:
        message, events = await _call(fake)
    assert message["stopReason"] == "error"
    assert message["errorMessage"] == "An unknown error occurred"
    assert message["content"] == [{"type": "text", "text": "no"}]
    assert events[-1] == {"type": "error", "reason": "error"}


@pytest.mark.parametrize(
    ("status", "kind", "text", "retryable"),
    [
        (529, "overloaded_error", "Overloaded", True),
        (500, "api_error", "Internal server error", True),
        (400, "invalid_request_error", "prompt is too long: 213462 tokens > 200000 maximum", False),
        (401, "authentication_error", "invalid x-api-key", False),
    ],
)
async def test_http_errors_end_the_message_with_the_js_sdk_text(
    status: int, kind: str, text: str, retryable: bool
) -> None:
    async with FakeAnthropic([error_reply(status, kind, text)]) as fake:
        message, events = await _call(fake)
    expected = f'{status} {{"type":"error","error":{{"type":"{kind}","message":"{text}"}}}}'
    assert message["errorMessage"] == expected
    assert message["stopReason"] == "error"
    assert message["content"] == []
    assert events == [{"type": "error", "reason": "error"}]  # no start: the response never began
    assert is_retryable_error(message, SONNET.context_window) is retryable
    assert is_context_overflow(message, SONNET.context_window) is ("too long" in text)


async def test_error_body_that_is_not_json_and_empty() -> None:
    null_body = Reply(kind="json", status=503, body=None)
    async with FakeAnthropic([null_body]) as fake:
        message, _ = await _call(fake)
    assert message["errorMessage"] == "503 null"  # JSON null is falsy: the SDK falls back to the text


async def test_sdk_retries_429_after_retry_after_then_succeeds() -> None:
    replies = [error_reply(429, "rate_limit_error", "slow down", retry_after=0.05),
               Reply(events=assistant_stream(Text("fine")))]  # fmt: skip
    async with FakeAnthropic(replies) as fake:
        message, _ = await _call(fake, max_retries=2)
        assert len(fake.requests) == 2
    assert message["stopReason"] == "stop"
    assert message["content"] == [{"type": "text", "text": "fine"}]


async def test_overloaded_error_event_mid_stream_keeps_partial_content() -> None:
    frames = assistant_stream(Text("partial answer"))
    frames = [*frames[:5], error_event("overloaded_error", "Overloaded")]
    async with FakeAnthropic([Reply(events=frames)]) as fake:
        message, events = await _call(fake)
    assert message["stopReason"] == "error"
    assert message["errorMessage"] == (  # the raw data of the SSE error event, as sent
        '{"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}'
    )
    assert message["content"] == [{"type": "text", "text": "partial answer"}]
    assert message["usage"]["input"] == 100
    assert events[0] == {"type": "start"} and events[-1] == {"type": "error", "reason": "error"}
    assert is_retryable_error(message)


async def test_connection_cut_mid_body_is_terminated_and_retryable() -> None:
    async with FakeAnthropic([Reply(events=assistant_stream(Text("abcdef")), cut_after=4)]) as fake:
        message, _ = await _call(fake)
    assert message["stopReason"] == "error"
    assert message["errorMessage"] == "terminated"
    assert is_retryable_error(message)


async def test_clean_end_before_message_stop() -> None:
    frames = assistant_stream(Text("abc"))[:-2]
    async with FakeAnthropic([Reply(events=frames)]) as fake:
        message, _ = await _call(fake)
    assert message["errorMessage"] == "Anthropic stream ended before message_stop"
    assert message["content"] == [{"type": "text", "text": "abc"}]
    assert not is_retryable_error(message)  # pi's pattern has "ended without", not "ended before"


async def test_malformed_event_names_the_event_and_its_data() -> None:
    frames = assistant_stream(Text("abc"))
    frames.insert(3, "event: content_block_delta\ndata: {not json\n\n")
    async with FakeAnthropic([Reply(events=frames)]) as fake:
        message, _ = await _call(fake)
    assert message["stopReason"] == "error"
    assert message["errorMessage"].startswith("Could not parse Anthropic SSE event content_block_delta: ")
    assert "data={not json; raw=event: content_block_delta\\ndata: {not json" in message["errorMessage"]
    assert not is_retryable_error(message)


async def test_timeout_waiting_for_the_response() -> None:
    async with FakeAnthropic([Reply(kind="hang")]) as fake:
        message, _ = await _call(fake, timeout=0.3)
    assert message["errorMessage"] == "Request timed out."
    assert is_retryable_error(message)


async def test_connection_refused() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    async with FakeAnthropic() as fake:
        message, events = await _call(fake, base_url=f"http://127.0.0.1:{port}")
    assert message["errorMessage"] == "Connection error."
    assert events == [{"type": "error", "reason": "error"}]
    assert is_retryable_error(message)


async def test_abort_while_streaming_closes_the_stream_and_keeps_the_partial_reply() -> None:
    frames = assistant_stream(Text("first half, second half", chunks=2))
    abort = asyncio.Event()
    async with FakeAnthropic([Reply(events=frames, stall_after=4)]) as fake:
        task = asyncio.ensure_future(_call(fake, abort=abort))
        await asyncio.wait_for(fake.first_frames_sent.wait(), 5)
        await asyncio.sleep(0.05)
        abort.set()
        message, events = await asyncio.wait_for(task, 5)
        await asyncio.wait_for(fake.client_disconnected.wait(), 5)
    assert message["stopReason"] == "aborted"
    assert message["errorMessage"] == "This operation was aborted"
    assert message["content"] == [{"type": "text", "text": "first half, "}]
    assert message["usage"]["input"] == 100 and message["usage"]["totalTokens"] == 101
    assert events[-1] == {"type": "error", "reason": "aborted"}
    assert not is_retryable_error(message)


async def test_abort_before_the_response_arrives() -> None:
    abort = asyncio.Event()
    async with FakeAnthropic([Reply(kind="hang")]) as fake:
        task = asyncio.ensure_future(_call(fake, abort=abort))
        while not fake.requests:
            await asyncio.sleep(0.01)
        abort.set()
        message, events = await asyncio.wait_for(task, 5)
        await asyncio.wait_for(fake.client_disconnected.wait(), 5)
    assert message["errorMessage"] == "Request was aborted."
    assert message["stopReason"] == "aborted"
    assert events == [{"type": "error", "reason": "aborted"}]


async def test_abort_already_set_sends_nothing() -> None:
    abort = asyncio.Event()
    abort.set()
    async with FakeAnthropic() as fake:
        message, _ = await _call(fake, abort=abort)
        assert fake.requests == []
    assert (message["stopReason"], message["errorMessage"]) == ("aborted", "Request was aborted.")
    assert message["usage"]["totalTokens"] == 0


async def test_partial_tool_arguments_while_streaming() -> None:
    seen: list[Any] = []
    frames = assistant_stream(ToolUse("toolu_1", "write", {"path": "a.py", "content": "x = 1\n"}, chunks=6))
    async with FakeAnthropic([Reply(events=frames)]) as fake:
        client = create_async_client(KEY, fake.url, max_retries=0)
        model = SONNET

        def watch(event: dict[str, Any]) -> None:
            if event["type"] == "toolcall_delta":
                seen.append(event["delta"])

        message = await stream_assistant_message(
            client, _request(), model, abort=asyncio.Event(), on_event=watch
        )
        await client.close()
    assert len(seen) >= 3
    assert message["content"][0]["arguments"] == {"path": "a.py", "content": "x = 1\n"}


def test_overflow_and_retry_classification_match_pis_rules() -> None:
    def message(stop: str, error: str | None = None, **usage: int) -> dict[str, Any]:
        base = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0}
        return {"stopReason": stop, "errorMessage": error, "usage": {**base, **usage}}

    assert is_context_overflow(message("error", "prompt is too long: 213462 tokens > 200000 maximum"), 200000)
    assert is_context_overflow(message("error", '413 {"error":{"type":"request_too_large"}}'), 0)
    assert not is_context_overflow(message("error", "429 rate limit: too many tokens"), 200000)
    assert is_context_overflow(message("stop", input=150000, cacheRead=60000), 200000)
    assert not is_context_overflow(message("stop", input=150000, cacheRead=60000), 0)
    assert is_context_overflow(message("length", input=198000, output=0), 200000)
    assert not is_context_overflow(message("length", input=198000, output=5), 200000)
    assert is_retryable_error(message("error", "Connection error."))
    assert is_retryable_error(message("error", "fetch failed"))
    assert not is_retryable_error(message("error", "prompt is too long: 5 > 4"))
    assert not is_retryable_error(message("aborted", "This operation was aborted"))
    assert not is_retryable_error(message("error", "400 invalid_request_error"))
    assert sse("x", {"a": 1}) == 'event: x\ndata: {"a": 1}\n\n'


async def test_the_key_never_reaches_the_message_or_events() -> None:
    echo = error_reply(401, "authentication_error", f"invalid x-api-key {KEY}")
    mid_stream = Reply(events=[*assistant_stream(Text("x"))[:3], error_event("api_error", f"bad key {KEY}")])
    for reply in (echo, mid_stream):
        async with FakeAnthropic([reply]) as fake:
            message, events = await _call(fake)
            assert fake.requests[0].headers["x-api-key"] == KEY  # it was sent, to the API only
        assert message["stopReason"] == "error"
        assert KEY not in repr(message) and KEY not in repr(events)
        assert "[redacted]" in message["errorMessage"]


def test_event_json_is_read_as_javascript_reads_it() -> None:
    """orjson reads the events; what it refuses falls back to ``json`` (whose errors carry the place)."""
    from pi_lsp.llm.partial_json import js_json_loads

    assert js_json_loads('{"a":[1,2.5,"\\u00e9"]}') == {"a": [1, 2.5, "é"]}
    assert js_json_loads("123456789012345678901234567890") == 1.2345678901234568e29  # a double, as in JS
    assert js_json_loads('"\\ud800 lone"') == "\ud800 lone"  # refused by orjson, read by json
    for bad in ("NaN", '{"a":', "[1,]"):
        with pytest.raises(json.JSONDecodeError if bad != "NaN" else ValueError):
            js_json_loads(bad)


def _raw_unicode(frame: str, line_end: str) -> str:
    """A frame with its JSON's non-ASCII characters unescaped (as a server may send them) and its
    lines ended by ``line_end``."""
    lines = frame.split("\n")
    lines = [
        "data: " + json.dumps(json.loads(line[6:]), ensure_ascii=False) if line.startswith("data: ") else line
        for line in lines
    ]
    return line_end.join(lines)


@pytest.mark.parametrize("line_end", ["\n", "\r\n", "\r"], ids=["LF", "CRLF", "CR"])
async def test_a_reply_holding_unicode_line_separators_streams_whole(line_end: str) -> None:
    # JSON may carry these unescaped; only \n, \r\n and \r end an SSE line (httpx's aiter_lines,
    # which splits as str.splitlines does, cut the data line at each of them).
    text = "one\u2028two\u2029three\x85four\x1cfive\x0bsix\x0cseven"
    frames = [_raw_unicode(frame, line_end) for frame in assistant_stream(Text(text, chunks=3))]
    assert any("\u2028" in frame for frame in frames)
    async with FakeAnthropic([Reply(events=frames)]) as fake:
        message, events = await _call(fake)
    assert "errorMessage" not in message, message.get("errorMessage")
    assert message["content"] == [{"type": "text", "text": text}]
    assert "".join(e["delta"] for e in events if e["type"] == "text_delta") == text
