"""The Anthropic client against a loopback fake: requests, retries, faults, cancellation, secrets."""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

import pytest

from pi_lsp.llm.anthropic_client import (
    AnthropicClient,
    ModelError,
    RetryPolicy,
    plan_output,
    thinking_budget,
)
from pi_lsp.secrets import redact
from tests.llm.fake_anthropic import FakeAnthropic, Reply, error_json, message_json, sse, text_stream

KEY = "sk-ant-test-SECRET-123"
FAST = RetryPolicy(max_retries=2, base_delay=0.01, max_delay=2.0)


def client(fake: FakeAnthropic, **options: Any) -> AnthropicClient:
    options.setdefault("retry", FAST)
    options.setdefault("timeout", 5.0)
    return AnthropicClient("claude-test", api_key=KEY, base_url=fake.url, **options)


async def call(c: AnthropicClient, **options: Any) -> Any:
    try:
        return await c.complete(system="sys", prompt="hello", max_tokens=100, **options)
    finally:
        await c.aclose()


def sent_key(headers: dict[str, str]) -> str | None:
    """The credential a request carried (this SDK version sends it as a bearer token)."""
    if "x-api-key" in headers:
        return headers["x-api-key"]
    auth = headers.get("authorization", "")
    return auth.removeprefix("Bearer ") if auth.startswith("Bearer ") else None


def assert_no_key(error: BaseException, caplog: pytest.LogCaptureFixture | None = None) -> None:
    for text in (str(error), repr(error), *map(str, error.args)):
        assert KEY not in text
    if caplog is not None:
        assert KEY not in caplog.text


# -- planning -------------------------------------------------------------------------------------


def test_thinking_budgets() -> None:
    assert thinking_budget("off") is None and thinking_budget(None) is None
    assert [thinking_budget(x) for x in ("minimal", "low", "medium", "high", "xhigh")] == [
        1024, 2048, 8192, 16384, 16384,
    ]  # fmt: skip
    assert plan_output(13107, "high", 64000) == (29491, 16384)
    assert plan_output(13107, "off", 64000) == (13107, None)
    assert plan_output(8192, "high", 16000) == (16000, 14976)  # capped: budget shrinks to leave 1024
    assert plan_output(500, "minimal", 1024) == (500, None)  # nothing left for thinking → off
    assert plan_output(100000, None, 64000) == (64000, None)


def test_redact() -> None:
    text = f"key {KEY} and x-api-key: abcdefgh1234 and Authorization: Bearer tok_987654321 sk-ant-other-XYZ"
    cleaned = redact(text)
    assert KEY not in cleaned and "abcdefgh1234" not in cleaned and "tok_987654321" not in cleaned
    assert "sk-ant-other" not in cleaned
    assert KEY not in repr(AnthropicClient("m", api_key=KEY))


# -- success paths --------------------------------------------------------------------------------


async def test_streamed_request_and_response() -> None:
    async with FakeAnthropic([Reply(events=text_stream("first block", "second"))]) as fake:
        result = await call(client(fake), thinking_level="medium")
    assert result.text == "first block\nsecond"  # text blocks joined by newlines, thinking ignored
    assert result.stop_reason == "end_turn" and result.model == "claude-test"
    assert result.usage["output_tokens"] == 42
    (request,) = fake.requests
    assert request.path == "/v1/messages" and sent_key(request.headers) == KEY
    assert "anthropic-version" in request.headers
    body = request.body
    assert body["stream"] is True and body["model"] == "claude-test" and body["system"] == "sys"
    assert body["messages"] == [{"role": "user", "content": [{"type": "text", "text": "hello"}]}]
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 8192}
    assert body["max_tokens"] == 100 + 8192


async def test_non_streamed_request() -> None:
    async with FakeAnthropic([Reply("json", body=message_json("alpha", "beta"))]) as fake:
        result = await call(client(fake, stream=False))
    assert result.text == "alpha\nbeta" and result.stop_reason == "end_turn"
    body = fake.requests[0].body
    assert "stream" not in body or body["stream"] is False
    assert "thinking" not in body and body["max_tokens"] == 100


async def test_model_without_thinking_support_sends_none() -> None:
    async with FakeAnthropic() as fake:
        await call(client(fake, supports_thinking=False), thinking_level="high")
    assert "thinking" not in fake.requests[0].body


# -- retries --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "failure",
    [
        Reply("json", status=500, body=error_json("api_error", "boom")),
        Reply("json", status=529, body=error_json("overloaded_error", "Overloaded")),
        Reply(
            events=[sse("error", error_json("overloaded_error", "Overloaded"))]
        ),  # error event in a 200 stream
        Reply(events=text_stream("partial answer"), cut_after=4),  # connection dropped mid-stream
        Reply(events=text_stream("partial answer")[:5]),  # stream ended without message_stop
    ],
    ids=["500", "529", "error-event", "cut", "no-stop"],
)
async def test_transient_failures_are_retried(failure: Reply) -> None:
    async with FakeAnthropic([failure, Reply(events=text_stream("recovered"))]) as fake:
        result = await call(client(fake))
    assert result.text == "recovered" and len(fake.requests) == 2


async def test_non_streamed_calls_are_retried_too() -> None:
    overloaded = Reply("json", status=529, body=error_json("overloaded_error", "Overloaded"))
    async with FakeAnthropic([overloaded, Reply("json", body=message_json("later"))]) as fake:
        result = await call(client(fake, stream=False))
    assert result.text == "later" and len(fake.requests) == 2


async def test_retry_after_is_honoured() -> None:
    limited = Reply(
        "json", status=429, body=error_json("rate_limit_error", "slow down"), headers={"retry-after": "0.4"}
    )
    async with FakeAnthropic([limited, Reply(events=text_stream("ok"))]) as fake:
        started = time.monotonic()
        result = await call(client(fake))
        elapsed = time.monotonic() - started
    assert result.text == "ok" and len(fake.requests) == 2
    assert elapsed >= 0.35  # base delay is 0.01 s: only retry-after explains the wait


async def test_retry_after_ms_and_exhaustion() -> None:
    limited = Reply(
        "json", status=429, body=error_json("rate_limit_error", "slow"), headers={"retry-after-ms": "50"}
    )
    async with FakeAnthropic([limited]) as fake:
        with pytest.raises(ModelError) as caught:
            await call(client(fake))
    assert caught.value.status == 429 and caught.value.retryable
    assert len(fake.requests) == FAST.max_retries + 1
    assert "slow" in caught.value.message


async def test_client_errors_are_not_retried() -> None:
    async with FakeAnthropic(
        [Reply("json", status=400, body=error_json("invalid_request_error", "bad"))]
    ) as fake:
        with pytest.raises(ModelError) as caught:
            await call(client(fake))
    assert caught.value.status == 400 and not caught.value.retryable and len(fake.requests) == 1


async def test_timeout() -> None:
    # Each attempt is bounded as a whole, so the SDK's first-use set-up counts against it; 1.5 s
    # leaves room for that on a loaded machine while both attempts still reach the hung server.
    async with FakeAnthropic([Reply("hang")]) as fake:
        started = time.monotonic()
        with pytest.raises(ModelError) as caught:
            await call(client(fake, timeout=1.5, retry=RetryPolicy(max_retries=1, base_delay=0.01)))
        elapsed = time.monotonic() - started
    assert caught.value.retryable and "timed out" in caught.value.message
    assert len(fake.requests) == 2 and 3 <= elapsed < 10


async def test_stalled_stream_times_out() -> None:
    async with FakeAnthropic([Reply(events=text_stream("x"), stall_after=3)]) as fake:
        with pytest.raises(ModelError, match="timed out"):
            await call(client(fake, timeout=0.3, retry=RetryPolicy(max_retries=0)))


# -- malformed data -------------------------------------------------------------------------------

START = text_stream("x")[0]


@pytest.mark.parametrize(
    "frames",
    [
        [START, "event: content_block_delta\ndata: {not json\n\n"],
        [START, sse("content_block_delta", {"type": "content_block_delta", "index": 0})],
        [
            START,
            sse(
                "content_block_delta",
                {"type": "content_block_delta", "delta": {"type": "text_delta", "text": "x"}},
            ),
        ],
        [
            START,
            sse(
                "content_block_delta",
                {"type": "content_block_delta", "index": 7, "delta": {"type": "text_delta", "text": "x"}},
            ),
        ],
        [START, sse("content_block_start", {"type": "content_block_start", "index": 0})],
    ],
    ids=["bad-json", "no-delta", "no-index", "unknown-block", "no-block"],
)
async def test_malformed_stream_events_raise_model_error(frames: list[str]) -> None:
    async with FakeAnthropic([Reply(events=frames)]) as fake:
        with pytest.raises(ModelError) as caught:
            await call(client(fake))
    assert "Malformed" in caught.value.message and not caught.value.retryable
    assert len(fake.requests) == 1


async def test_unknown_event_types_are_ignored() -> None:
    frames = text_stream("fine")
    frames.insert(1, sse("future_event", {"type": "future_event", "whatever": 1}))
    async with FakeAnthropic([Reply(events=frames)]) as fake:
        assert (await call(client(fake))).text == "fine"


async def test_malformed_plain_response() -> None:
    async with FakeAnthropic([Reply("json", body={"type": "message", "content": "not a list"})]) as fake:
        with pytest.raises(ModelError, match="Malformed"):
            await call(client(fake, stream=False))


# -- cancellation and secrets ---------------------------------------------------------------------


async def test_cancellation_mid_stream_returns_promptly() -> None:
    async with FakeAnthropic([Reply(events=text_stream("never finished"), stall_after=6)]) as fake:
        c = client(fake, timeout=30.0)
        task = asyncio.ensure_future(c.complete(system="s", prompt="p", max_tokens=10))
        await asyncio.wait_for(fake.first_frames_sent.wait(), 5)
        await asyncio.sleep(0.05)
        started = time.monotonic()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert time.monotonic() - started < 1.5
        await asyncio.wait_for(fake.client_disconnected.wait(), 2)  # the HTTP stream was closed
        assert len(fake.requests) == 1  # and nothing was retried
        await c.aclose()


async def test_missing_key_is_a_model_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    c = AnthropicClient("m", base_url="http://127.0.0.1:9")
    assert not c.has_api_key
    with pytest.raises(ModelError, match="No Anthropic API key") as caught:
        await c.complete(system="s", prompt="p", max_tokens=1)
    assert not caught.value.retryable


async def test_environment_configuration(monkeypatch: pytest.MonkeyPatch) -> None:
    async with FakeAnthropic() as fake:
        monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)
        c = AnthropicClient("claude-env", retry=FAST)
        assert (await call(c)).text == "ok"
    assert sent_key(fake.requests[0].headers) == KEY and fake.requests[0].body["model"] == "claude-env"


async def test_key_never_in_errors_or_logs(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    echo = Reply("json", status=401, body=error_json("authentication_error", f"invalid x-api-key {KEY}"),
                 headers={"x-echo-key": KEY})  # fmt: skip
    async with FakeAnthropic([echo]) as fake:
        with pytest.raises(ModelError) as caught:
            await call(client(fake))
    assert caught.value.status == 401 and not caught.value.retryable
    assert "invalid x-api-key" in caught.value.message
    assert_no_key(caught.value, caplog)
    assert caught.value.__cause__ is None

    caplog.clear()
    failures = [
        Reply("json", status=500, body=error_json("api_error", f"echo {KEY}"), headers={"x-echo": KEY})
    ]
    async with FakeAnthropic(failures) as fake:
        with pytest.raises(ModelError) as caught:
            await call(client(fake))
    assert_no_key(caught.value, caplog)
    assert "HTTP Response" in caplog.text  # the SDK did log the (scrubbed) response headers
