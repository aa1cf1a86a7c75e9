"""pi's chars/4 estimator, usage arithmetic, thresholds and context usage, unit and vs the oracle."""

from __future__ import annotations

from typing import Any

import pytest

from pi_lsp.compaction import CompactionSettings
from pi_lsp.compaction.tokens import (
    IMAGE_TOKENS,
    TokenCache,
    calculate_context_tokens,
    context_usage,
    context_usage_for_path,
    count_message_tokens,
    estimate_context_tokens,
    estimate_message_tokens,
    estimate_path_context_tokens,
    get_last_assistant_usage,
    should_compact,
)
from pi_lsp.session.context import build_session_context
from tests.compaction.gen import Gen
from tests.oracle import PiOracle

ROLES = [
    "user",
    "assistant",
    "toolResult",
    "bashExecution",
    "custom",
    "branchSummary",
    "compactionSummary",
    "x",
]
IMAGE = {"type": "image", "data": "AAAA", "mimeType": "image/png"}


def usage(total: int = 0, **parts: int) -> dict[str, int]:
    base = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": total}
    return {**base, **parts}


def assistant(text: str = "", stop: str = "stop", use: dict[str, int] | None = None) -> dict[str, Any]:
    return {"role": "assistant", "content": [{"type": "text", "text": text}], "usage": use or usage(),
            "stopReason": stop}  # fmt: skip


class TestEstimator:
    def test_user_text_and_images(self) -> None:
        assert estimate_message_tokens({"role": "user", "content": "abcde"}) == 2
        blocks = [{"type": "text", "text": "abcd"}, IMAGE, {"type": "text", "text": "ef"}]
        assert estimate_message_tokens({"role": "user", "content": blocks}) == 2  # user images count 0

    def test_tool_result_and_custom_images_cost_1200(self) -> None:
        for role in ("toolResult", "custom"):
            message = {"role": role, "content": [{"type": "text", "text": "abc"}, IMAGE]}
            assert estimate_message_tokens(message) == 1201  # ceil((3 + 4800) / 4)
        assert IMAGE_TOKENS == 1200

    def test_assistant_counts_text_thinking_and_tool_calls(self) -> None:
        content = [
            {"type": "text", "text": "12345678"},
            {"type": "thinking", "thinking": "1234"},
            {"type": "toolCall", "id": "c", "name": "read", "arguments": {"path": "a.ts", "limit": 1.0}},
        ]
        # 8 + 4 + len("read") + len('{"path":"a.ts","limit":1}')
        assert estimate_message_tokens({"role": "assistant", "content": content}) == -(-(8 + 4 + 4 + 25) // 4)

    def test_astral_characters_count_twice(self) -> None:
        assert estimate_message_tokens({"role": "user", "content": "😀😀"}) == 1  # 4 UTF-16 units

    def test_other_roles(self) -> None:
        assert estimate_message_tokens({"role": "bashExecution", "command": "ls", "output": "abcdef"}) == 2
        assert estimate_message_tokens({"role": "compactionSummary", "summary": "x" * 9}) == 3
        assert estimate_message_tokens({"role": "branchSummary", "summary": ""}) == 0
        assert estimate_message_tokens({"role": "mystery", "content": "abc"}) == 0


class TestUsage:
    def test_calculate_context_tokens(self) -> None:
        assert calculate_context_tokens(usage(500, input=1, output=2)) == 500
        assert calculate_context_tokens(usage(0, input=1, output=2, cacheRead=3, cacheWrite=4)) == 10

    def test_should_compact_is_strict_and_respects_enabled(self) -> None:
        settings = CompactionSettings(reserve_tokens=10000)
        assert should_compact(95000, 100000, settings)
        assert not should_compact(90000, 100000, settings)
        assert not should_compact(89000, 100000, settings)
        assert not should_compact(95000, 100000, CompactionSettings(enabled=False, reserve_tokens=10000))

    def test_estimate_context_tokens_uses_last_valid_usage(self) -> None:
        messages = [
            {"role": "user", "content": "x" * 40},
            assistant("a", use=usage(1000)),
            {"role": "user", "content": "y" * 8},
            assistant("b", stop="error", use=usage(9999)),
            {"role": "user", "content": "z" * 4},
        ]
        result = estimate_context_tokens(messages)
        assert result == {
            "tokens": 1000 + 2 + 1 + 1,
            "usageTokens": 1000,
            "trailingTokens": 4,
            "lastUsageIndex": 1,
        }
        no_usage = estimate_context_tokens(messages[:1])
        assert no_usage == {"tokens": 10, "usageTokens": 0, "trailingTokens": 10, "lastUsageIndex": None}

    def test_context_usage_shape(self) -> None:
        messages = [assistant("a", use=usage(150000)), {"role": "user", "content": "x" * 4000}]
        result = context_usage(messages, 200000, 16384)
        assert (
            result["tokens"] == 151000
            and result["usageTokens"] == 150000
            and result["trailingTokens"] == 1000
        )
        assert result["percent"] == pytest.approx(75.5)
        assert result["shouldCompact"] is False
        assert context_usage(messages, 160000, 16384)["shouldCompact"] is True
        assert context_usage(messages, 0, 16384)["percent"] is None


def _entry(i: int, message: dict[str, Any], kind: str = "message") -> dict[str, Any]:
    parent = f"e{i - 1}" if i else None
    return {"type": kind, "id": f"e{i}", "parentId": parent, "timestamp": "2026-01-01T00:00:00.000Z",
            "message": message}  # fmt: skip


class TestPathUsage:
    def test_unknown_right_after_compaction(self) -> None:
        path = [_entry(0, {"role": "user", "content": "hi"}), _entry(1, assistant("a", use=usage(5000)))]
        compaction = {"type": "compaction", "id": "e2", "parentId": "e1", "timestamp": "2026-01-01T00:00:01Z",
                      "summary": "s" * 40, "firstKeptEntryId": "e1", "tokensBefore": 5000}  # fmt: skip
        path.append(compaction)
        settings = CompactionSettings()
        after = context_usage_for_path(path, 200000, settings)
        assert after["tokens"] is None and after["percent"] is None and after["shouldCompact"] is False
        path.append({**_entry(3, assistant("b", use=usage(700))), "parentId": "e2"})
        known = context_usage_for_path(path, 200000, settings)
        assert known["tokens"] == 700 and known["percent"] == pytest.approx(0.35)

    def test_path_estimate_matches_build_session_context(self) -> None:
        for seed in range(60):
            path = Gen(seed).branch()
            expected = estimate_context_tokens(build_session_context(path)["messages"])
            assert estimate_path_context_tokens(path, TokenCache())["tokens"] == expected["tokens"], seed


class CountingTokenizer:
    name = "counting"

    def __init__(self) -> None:
        self.calls = 0

    def count(self, text: str) -> int:
        self.calls += 1
        return len(text.split())


class TestTokenCache:
    def test_counts_each_entry_once_per_tokenizer(self) -> None:
        path = Gen(3).branch(40)
        cache, tokenizer = TokenCache(), CountingTokenizer()
        cache.warm(path, tokenizer)
        calls = tokenizer.calls
        cache.warm(path, tokenizer)
        assert tokenizer.calls == calls
        for entry in path:
            assert cache.entry_tokens(entry) == cache.entry_tokens(entry, None)  # estimate namespace
        assert len(cache) >= calls

    def test_invalidate_and_bounded_size(self) -> None:
        cache = TokenCache(max_entries=3)
        entries = [_entry(i, {"role": "user", "content": "x" * (4 * i)}) for i in range(5)]
        assert [cache.entry_tokens(e) for e in entries] == [0, 1, 2, 3, 4]
        assert len(cache) <= 3
        cache.invalidate("e4")
        assert cache.entry_tokens(entries[4]) == 4

    def test_tokenizer_count_for_messages(self) -> None:
        message = {"role": "toolResult", "content": [{"type": "text", "text": "a b c"}, IMAGE]}
        assert count_message_tokens(message, CountingTokenizer()) == 3 + IMAGE_TOKENS
        assert count_message_tokens(message) == estimate_message_tokens(message)


@pytest.mark.oracle
def test_estimate_matches_pi_on_generated_messages(pi_oracle: PiOracle) -> None:
    total = 0
    for seed in range(60):
        gen = Gen(seed)
        messages = [gen.message(role) for role in ROLES * 3]
        result = pi_oracle.result("estimate", messages=messages)
        assert [estimate_message_tokens(m) for m in messages] == result["perMessage"], seed
        assert estimate_context_tokens(messages) == result["context"], seed
        total += len(messages)
    assert total >= 1000


@pytest.mark.oracle
def test_usage_functions_match_pi(pi_oracle: PiOracle) -> None:
    for seed in range(40):
        gen = Gen(500 + seed)
        use = gen.usage()
        window = gen.rng.choice([0, 100000, 200000])
        tokens = gen.rng.randint(0, 250000)
        settings = CompactionSettings(
            enabled=gen.rng.random() < 0.8, reserve_tokens=gen.rng.randint(0, 30000)
        )
        entries = gen.branch(gen.rng.randint(0, 20))
        result = pi_oracle.result(
            "tokens", usage=use, contextTokens=tokens, contextWindow=window, settings=settings.as_pi(),
            entries=entries,
        )  # fmt: skip
        assert calculate_context_tokens(use) == result["calculateContextTokens"]
        assert should_compact(tokens, window, settings) == result["shouldCompact"]
        assert get_last_assistant_usage(entries) == result.get("getLastAssistantUsage")
