"""``pi/compact`` when the Messages API misbehaves: after every failure or cancellation the session
file is byte-identical, the error code and data are right, no key leaks, and the server stays up."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

from tests.llm.fake_anthropic import FakeAnthropic, Reply, error_json, sse, text_stream
from tests.server.compaction_support import (
    KEY,
    Script,
    cancel,
    configure,
    events,
    lsp_server,
    new_session_with_turns,
    send,
)
from tests.server.support import call, call_error

RETRY = {"baseDelayMs": 10, "provider": {"maxRetries": 1, "maxRetryDelayMs": 3000, "timeoutMs": 5000}}
SETTINGS = {"compaction": {"keepRecentTokens": 100}, "retry": RETRY}


def malformed() -> list[str]:
    start = text_stream("x")[0]
    bad_delta = sse("content_block_delta", {"type": "content_block_delta", "index": 5,
                                            "delta": {"type": "text_delta", "text": "orphan"}})  # fmt: skip
    return [start, bad_delta, sse("message_stop", {"type": "message_stop"})]


async def test_faults_write_nothing_and_keep_the_server_up(tmp_path: Path) -> None:
    script = Script()
    async with (
        FakeAnthropic(route=script) as fake,
        lsp_server(tmp_path, base_url=fake.url, settings=SETTINGS) as client,
    ):
        state = await new_session_with_turns(client, 3, call)
        file = Path(state["file"])
        original = file.read_bytes()
        failures = 0

        async def fails(code: int, data: dict[str, Any], requests: int) -> Any:
            nonlocal failures
            fake.requests.clear()
            error = await call_error(client, "pi/compact", {})
            assert (error.code, error.data) == (code, data), error.message
            assert KEY not in error.message and KEY not in str(error.data)
            assert len(fake.requests) == requests
            assert file.read_bytes() == original
            await call(client, "pi/getSessionState", {})  # still serving
            failures += 1
            ended = events(client, "pi/compactionEnded")
            assert len(ended) == failures and "result" not in ended[-1]
            assert ended[-1]["error"].startswith("Compaction failed: ") and KEY not in ended[-1]["error"]
            assert ended[-1]["errorCode"] == code
            return error

        # 500 twice (one retry), the body even echoes the key: scrubbed
        api_error = Reply("json", status=500, body=error_json("api_error", f"boom {KEY}"))
        script.set(then=api_error)
        error = await fails(-32004, {"status": 500, "retryable": True}, 2)
        assert "Summarization failed: Anthropic API error 500" in error.message

        overloaded = Reply("json", status=529, body=error_json("overloaded_error", "Overloaded"))
        script.set(then=overloaded)
        await fails(-32004, {"status": 529, "retryable": True}, 2)

        # a stream cut off mid-way (retried once, then given up)
        script.set(then=Reply(events=text_stream("never complete"), cut_after=4))
        await fails(-32004, {"retryable": True}, 2)

        # malformed events are not retried
        script.set(then=Reply(events=malformed()))
        error = await fails(-32004, {"retryable": False}, 1)
        assert "Malformed" in error.message

        # a request that never answers runs into the per-attempt timeout
        configure(client, {**SETTINGS, "retry": {"provider": {"maxRetries": 0, "timeoutMs": 700}}})
        script.set(then=Reply("hang"))
        started = time.monotonic()
        error = await fails(-32004, {"retryable": True}, 1)
        assert "timed out" in error.message and time.monotonic() - started < 5
        configure(client, SETTINGS)

        # cancellation in the middle of the stream
        script.set(then=Reply(events=text_stream("slow"), stall_after=3))
        fake.requests.clear()
        msg_id, answer = send(client, "pi/compact", {})
        await asyncio.wait_for(fake.first_frames_sent.wait(), 10)
        cancel(client, msg_id)
        (outcome,) = await asyncio.wait_for(asyncio.gather(answer, return_exceptions=True), 10)
        assert getattr(outcome, "code", None) == -32800
        await asyncio.wait_for(fake.client_disconnected.wait(), 5)
        assert file.read_bytes() == original
        ended = events(client, "pi/compactionEnded")
        assert len(ended) == failures + 1 and ended[-1]["aborted"] is True and "error" not in ended[-1]

        # 429 with retry-after, then success: written once
        limited = Reply("json", status=429, body=error_json("rate_limit_error", "slow down"),
                        headers={"retry-after": "1"})  # fmt: skip
        script.set(limited, then=Reply(events=text_stream("RECOVERED SUMMARY")))
        fake.requests.clear()
        started = time.monotonic()
        result = await call(client, "pi/compact", {})
        assert time.monotonic() - started >= 0.9 and len(fake.requests) == 2
        assert result["summary"].startswith("RECOVERED SUMMARY")
        lines = file.read_bytes().splitlines()
        assert file.read_bytes().startswith(original) and len(lines) == len(original.splitlines()) + 1
        assert events(client, "pi/compactionEnded")[-1]["result"] == result

    log_text = client.log_file.read_text()  # type: ignore[attr-defined]
    assert "retry 1" in log_text and KEY not in log_text
    assert KEY not in file.read_text()
