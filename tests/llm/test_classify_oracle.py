"""Differential: retry/overflow classification and streaming-JSON parsing equal pi's own functions
(pi-ai's ``isContextOverflow`` and ``parseStreamingJson``, pi's ``AgentSession._isRetryableError``)."""

from __future__ import annotations

import json
import subprocess
from typing import Any

import pytest

from pi_lsp.llm.partial_json import js_json_loads, parse_streaming_json, v8_json_error
from pi_lsp.llm.stream import is_context_overflow, is_retryable_error
from tests.oracle import oracle_dir, require_oracle

pytestmark = pytest.mark.oracle

_SCRIPT = r"""
import fs from "node:fs";
const root = process.argv[1] + "/node_modules/@mariozechner";
const ai = await import(root + "/pi-ai/dist/index.js");
const { AgentSession } = await import(root + "/pi-coding-agent/dist/core/agent-session.js");
const input = JSON.parse(fs.readFileSync(0, "utf8"));
const classify = input.messages.map(([message, window]) => ({
  overflow: ai.isContextOverflow(message, window),
  retryable: AgentSession.prototype._isRetryableError.call({ model: { contextWindow: window } }, message),
}));
const parsed = input.json.map((text) => ai.parseStreamingJson(text));
const errorOf = (text) => { try { JSON.parse(text); return null; } catch (e) { return e.message; } };
const errors = input.malformed.map(errorOf);
console.log(JSON.stringify({ classify, parsed, errors }));
"""

ERRORS = [
    'prompt is too long: 213462 tokens > 200000 maximum',
    '413 {"type":"error","error":{"type":"request_too_large","message":"Request exceeds the maximum size"}}',
    '529 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}',
    '429 {"type":"error","error":{"type":"rate_limit_error","message":"Too many request tokens"}}',
    "ThrottlingException: Too many tokens, please wait before trying again.",
    "Throttling error: too many tokens",
    "rate limit reached: too many tokens",
    "400 status code (no body)",
    "413 (no body)",
    "Connection error.", "Request timed out.", "terminated", "fetch failed", "socket hang up",
    "Anthropic stream ended before message_stop", "stream ended without message",
    "An unknown error occurred", "Unhandled stop reason: brand_new", "This operation was aborted",
    '401 {"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}',
    "Your input exceeds the context window of this model", "context_length_exceeded",
    "HTTP 503 Service Unavailable", "upstream connect error or disconnect/reset before headers",
    "Retry delay of 90s exceeds the maximum", "", "error 5000 in module",
]  # fmt: skip


def _messages() -> list[tuple[dict[str, Any], int]]:
    def message(stop: str, error: str | None, **usage: int) -> dict[str, Any]:
        base = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0}
        result: dict[str, Any] = {"role": "assistant", "stopReason": stop, "usage": {**base, **usage}}
        if error is not None:
            result["errorMessage"] = error
        return result

    cases: list[tuple[dict[str, Any], int]] = []
    for text in ERRORS:
        for stop in ("error", "aborted", "stop"):
            cases.append((message(stop, text), 200000))
    for window in (0, 200000):
        cases += [
            (message("stop", None, input=150000, cacheRead=50001), window),
            (message("stop", None, input=150000, cacheRead=50000), window),
            (message("length", None, input=198000), window),
            (message("length", None, input=197999), window),
            (message("length", None, input=199000, output=3), window),
            (message("error", None, input=250000), window),
        ]
    return cases


DOCUMENTS = [
    '{"path": "src/a.py", "edits": [{"oldText": "x = 1\\n", "newText": "y = \\"2\\"\\u00e9"}], "n": -12.5e3}',
    '{"command": "ls -la && echo \'done\'", "timeout": 30, "flags": [true, false, null], "o": {"k": []}}',
    '[1, 2.5, "three", {"four": 4}]',
    '{"raw": "tab\there", "bad": "\\q"}',
    '{"a": tru',
    '  {"x": 1}  ',
    '"just a string',
    "12",
]


MALFORMED = [
    "{oops", "", "   ", '{"a":1', '{"a" 1}', "[1,]", "nul", '{"a":1}x', '"abc', '{"a":tru}', "{,}",
    '{"a":1,}', "[1 2]", '{"a":1 "b":2}', '{"a":"b\nc"}', '"\\q"', "x", "[tr]", "-",
    '{"a":-}', "{", "[", '{"a":',
    '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text": x "hello world"}}',
    "[1,2,3,4,5,6,7,8,90,]", "[x,2,3,4,5,6,7,8,900,1234]", '{"a": [1, 2}', '[{"a": 1]', "falsy",
    '{"a": nulll}', "{'a': 1}", '{"a": 1}}', "[1", '[1, "a"', '{"a": [1, {"b": 2 x',
]  # fmt: skip


def _json_inputs() -> list[str]:
    inputs: list[str] = []
    for document in DOCUMENTS:
        inputs += [document[:end] for end in range(len(document) + 1)]
    return inputs


@pytest.fixture(scope="module")
def pi_answers() -> dict[str, Any]:
    require_oracle()
    payload = {"messages": _messages(), "json": _json_inputs(), "malformed": MALFORMED}
    completed = subprocess.run(
        ["node", "--input-type=module", "-e", _SCRIPT, str(oracle_dir())],
        input=json.dumps(payload), capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert completed.returncode == 0, completed.stderr[-2000:]
    result: dict[str, Any] = json.loads(completed.stdout)
    return result


def test_retry_and_overflow_classification_equal_pis(pi_answers: dict[str, Any]) -> None:
    ours = [
        {"overflow": is_context_overflow(message, window), "retryable": is_retryable_error(message, window)}
        for message, window in _messages()
    ]
    mismatches = [
        (case, mine, theirs)
        for case, mine, theirs in zip(_messages(), ours, pi_answers["classify"], strict=True)
        if mine != theirs
    ]
    assert mismatches == []


def test_streaming_json_equals_pis_for_every_prefix(pi_answers: dict[str, Any]) -> None:
    mismatches = [
        (text, parse_streaming_json(text), theirs)
        for text, theirs in zip(_json_inputs(), pi_answers["parsed"], strict=True)
        if parse_streaming_json(text) != theirs
    ]
    assert mismatches == []


def test_json_error_wording_equals_v8s(pi_answers: dict[str, Any]) -> None:
    mismatches = []
    for text, theirs in zip(MALFORMED, pi_answers["errors"], strict=True):
        try:
            js_json_loads(text)
            ours = None
        except json.JSONDecodeError as error:
            ours = v8_json_error(error)
        if ours != theirs:
            mismatches.append((text, ours, theirs))
    assert mismatches == []
