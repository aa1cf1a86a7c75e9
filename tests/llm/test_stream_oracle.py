"""Differential: pi's Anthropic provider and ``stream_assistant_message`` read the same HTTP answers
into the same AssistantMessage and the same events — replies, stop reasons, every fault, abort.

Each scenario's answer is served by the loopback fake to pi (``tests/pi/stream_call.mjs``, pi-ai's
``streamSimple``) and then to us (the real ``anthropic`` SDK); only ``timestamp`` may differ.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from pi_lsp.llm.anthropic_client import create_async_client
from pi_lsp.llm.models import find_model
from pi_lsp.llm.request import build_messages_request
from pi_lsp.llm.stream import stream_assistant_message
from tests.llm.fake_anthropic import (
    FakeAnthropic,
    Recorded,
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
from tests.oracle import REPO_ROOT, oracle_dir, require_oracle

pytestmark = pytest.mark.oracle

STREAM_CALL = REPO_ROOT / "tests" / "pi" / "stream_call.mjs"
KEY = "sk-ant-api03-stream-oracle-000000000"
MODEL_ID = "claude-sonnet-4-5"
LEVEL = "medium"
CONTEXT = {
    "systemPrompt": "You are a test.",
    "messages": [{"role": "user", "content": [{"type": "text", "text": "Go"}], "timestamp": 1}],
}


@dataclass(frozen=True)
class Scenario:
    reply: Reply
    abort_on: tuple[str, int] | None = None


_SEPARATORS = "one\u2028two\u2029three\x85four\x1cfive\x0bsix\x0cseven"


def _unescaped(frame: str, line_end: str) -> str:
    """The frame with its JSON's non-ASCII unescaped and its lines ended by ``line_end``."""
    lines = [
        "data: " + json.dumps(json.loads(line[6:]), ensure_ascii=False) if line.startswith("data: ") else line
        for line in frame.split("\n")
    ]
    return line_end.join(lines)


def _full() -> list[str]:
    return assistant_stream(
        Thinking("Plan: read then run.", signature="SIG_1"),
        Text("Reading now."),
        ToolUse("toolu_A", "read", {"path": "a.txt", "limit": 10}, chunks=4),
        ToolUse("toolu_B", "bash", {"command": "echo 'hi'\nls"}, chunks=5),
        message_id="msg_full", input_tokens=1234, output_tokens=321, cache_read=55, cache_write=66,
    )  # fmt: skip


def _malformed(data: str = "{oops") -> list[str]:
    frames = assistant_stream(Text("abc"))
    frames.insert(3, f"event: content_block_delta\ndata: {data}\n\n")
    return frames


def _repairable() -> list[str]:
    frames = assistant_stream(Text("x"))
    # a raw control character inside a JSON string: pi repairs it
    frames.insert(4, 'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,'
                     '"delta":{"type":"text_delta","text":"tab\there"}}\n\n')  # fmt: skip
    return frames


def _proxy_usage() -> list[str]:
    frames = assistant_stream(Text("hi"))
    frames[-2] = sse("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn"},
                                       "usage": {"input_tokens": None, "output_tokens": 7,
                                                 "cache_read_input_tokens": 3}})  # fmt: skip
    return frames


_TRUNCATED_CALL = ToolUse("toolu_X", "write", {}, raw_json='{"path": "a", "content": "b')
_NESTED_CALL = ToolUse(
    "toolu_N", "edit",
    {"path": "src/a.py", "edits": [{"oldText": "x = 1\n", "newText": "x = 2\n"}], "flag": True, "n": -12.5e3,
     "none": None},
    chunks=12,
)  # fmt: skip
_OVERLOADED = error_event("overloaded_error", "Overloaded")

SCENARIOS: dict[str, Scenario] = {
    "full reply": Scenario(Reply(events=_full())),
    "redacted thinking, max_tokens": Scenario(
        Reply(events=assistant_stream(Redacted("OPAQUE=="), Text("cut"), stop_reason="max_tokens"))
    ),
    "refusal": Scenario(Reply(events=assistant_stream(Text("no"), stop_reason="refusal"))),
    "pause_turn": Scenario(Reply(events=assistant_stream(Text("wait"), stop_reason="pause_turn"))),
    "unknown stop reason": Scenario(Reply(events=assistant_stream(Text("?"), stop_reason="brand_new"))),
    "invalid tool json": Scenario(Reply(events=assistant_stream(_TRUNCATED_CALL, stop_reason="tool_use"))),
    "529 overloaded": Scenario(error_reply(529, "overloaded_error", "Overloaded")),
    "400 prompt too long": Scenario(
        error_reply(400, "invalid_request_error", "prompt is too long: 213462 tokens > 200000 maximum")
    ),
    "503 null body": Scenario(Reply(kind="json", status=503, body=None)),
    "500 text body": Scenario(Reply(kind="json", status=500, body={"message": "plain message"})),
    "error event mid-stream": Scenario(
        Reply(events=[*assistant_stream(Text("partial answer"))[:5], _OVERLOADED])
    ),
    "stream ends before message_stop": Scenario(Reply(events=assistant_stream(Text("abc"))[:-2])),
    "empty stream": Scenario(Reply(events=[])),
    "repairable json": Scenario(Reply(events=_repairable())),
    "proxy usage with nulls": Scenario(Reply(events=_proxy_usage())),
    "malformed event": Scenario(Reply(events=_malformed())),
    "malformed event, trailing comma": Scenario(Reply(events=_malformed('{"type":"ping", "a": [1, 2,]}'))),
    "null event": Scenario(Reply(events=_malformed("null"))),
    "non-object event is skipped": Scenario(Reply(events=_malformed("[1, 2]"))),
    "connection cut mid-body": Scenario(Reply(events=assistant_stream(Text("abcdef")), cut_after=4)),
    # JSON may carry these unescaped: only LF, CRLF and CR end an SSE line.
    **{
        f"unescaped line separators in the JSON, {name} line ends": Scenario(
            Reply(events=[_unescaped(frame, end) for frame in assistant_stream(Text(_SEPARATORS, chunks=3))])
        )
        for name, end in (("LF", "\n"), ("CRLF", "\r\n"), ("CR", "\r"))
    },
    **{
        f"abort mid tool call after {n} deltas": Scenario(
            Reply(events=assistant_stream(_NESTED_CALL), stall_after=3 + n), abort_on=("toolcall_delta", n)
        )
        for n in (1, 2, 3, 5, 8, 11)
    },
    "abort while streaming": Scenario(
        Reply(events=assistant_stream(Text("first half, second half")), stall_after=4),
        abort_on=("text_delta", 1),
    ),
}


def _system(name: str) -> str:
    return f"Scenario: {name}"


def _route(recorded: Recorded) -> Reply:
    text = recorded.body["system"][0]["text"]
    return SCENARIOS[text.removeprefix("Scenario: ")].reply


class _ThreadedFake:
    """The fake on its own event loop thread, so one pi process can serve every scenario."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.fake = FakeAnthropic(route=_route)
        asyncio.run_coroutine_threadsafe(self.fake.__aenter__(), self.loop).result(10)

    def requests_for(self, name: str) -> list[Recorded]:
        return [r for r in list(self.fake.requests) if r.body["system"][0]["text"] == _system(name)]

    def close(self) -> None:
        asyncio.run_coroutine_threadsafe(self.fake.__aexit__(None, None, None), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)


def _call(name: str, url: str) -> dict[str, Any]:
    scenario = SCENARIOS[name]
    context = {**CONTEXT, "systemPrompt": _system(name)}
    call: dict[str, Any] = {"baseUrl": url, "modelId": MODEL_ID, "apiKey": KEY, "context": context,
                            "reasoning": LEVEL}  # fmt: skip
    if scenario.abort_on:
        call["abortOnEvent"] = {"type": scenario.abort_on[0], "count": scenario.abort_on[1]}
    return call


@pytest.fixture(scope="module")
def pi_results() -> Iterator[tuple[_ThreadedFake, dict[str, dict[str, Any]]]]:
    require_oracle()
    served = _ThreadedFake()
    try:
        env = dict(os.environ, PI_ORACLE_DIR=str(oracle_dir()))
        env.pop("ANTHROPIC_API_KEY", None)
        calls = [_call(name, served.fake.url) for name in SCENARIOS]
        completed = subprocess.run(
            ["node", str(STREAM_CALL)], input=json.dumps({"calls": calls}), capture_output=True,
            text=True, env=env, timeout=120,
        )  # fmt: skip
        assert completed.returncode == 0, completed.stderr[-2000:]
        results = json.loads(completed.stdout)["results"]
        yield served, dict(zip(SCENARIOS, results, strict=True))
    finally:
        served.close()


async def _ours(url: str, name: str) -> dict[str, Any]:
    scenario = SCENARIOS[name]
    model = find_model(MODEL_ID)
    assert model is not None
    request = build_messages_request(model=model, system_prompt=_system(name), messages=CONTEXT["messages"],
                                     tools=[], thinking_level=LEVEL)  # fmt: skip
    abort = asyncio.Event()
    events: list[dict[str, Any]] = []
    seen = 0

    def on_event(event: dict[str, Any]) -> None:
        nonlocal seen
        events.append(json.loads(json.dumps(event)))
        if scenario.abort_on and event["type"] == scenario.abort_on[0]:
            seen += 1
            if seen == scenario.abort_on[1]:
                abort.set()

    client = create_async_client(KEY, url, max_retries=0)
    try:
        message = await stream_assistant_message(client, request, model, abort=abort, on_event=on_event)
    finally:
        await client.close()
    return {"events": events, "message": message}


def _comparable(result: dict[str, Any]) -> dict[str, Any]:
    message = dict(result["message"])
    message.pop("timestamp")
    return {"events": result["events"], "message": message}


@pytest.mark.parametrize("name", list(SCENARIOS))
async def test_stream_equals_pis(
    name: str, pi_results: tuple[_ThreadedFake, dict[str, dict[str, Any]]]
) -> None:
    served, results = pi_results
    ours = await _ours(served.fake.url, name)
    assert _comparable(ours) == _comparable(results[name])
    pi_request, our_request = served.requests_for(name)
    assert our_request.body == pi_request.body
