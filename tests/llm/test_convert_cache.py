"""The request's conversion: lone surrogates dropped (with a fast path for text that has none), and
the converted history cached per stored entry giving the same request bytes as no cache."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from pi_lsp.llm import convert
from pi_lsp.llm.convert import _LONE_SURROGATE, ConversionCache, sanitize_surrogates
from pi_lsp.llm.models import find_model
from pi_lsp.llm.request import build_messages_request
from pi_lsp.service.entry_keys import EntryKeys
from pi_lsp.session.store import SessionManager


def test_lone_surrogates_are_dropped_and_pairs_kept() -> None:
    assert sanitize_surrogates("plain ascii") == "plain ascii"
    assert sanitize_surrogates("café ünïcode — ok") == "café ünïcode — ok"
    assert sanitize_surrogates("rocket \ud83d\ude80 ok") == "rocket \ud83d\ude80 ok"  # a pair, as JSON gives
    assert sanitize_surrogates("bad \ud800 high") == "bad  high"
    assert sanitize_surrogates("bad \udc00 low") == "bad  low"
    assert sanitize_surrogates("\ude80\ud83d") == ""  # reversed: both lone


def test_the_fast_path_agrees_with_the_pattern_on_random_text() -> None:
    rng = random.Random(7)
    alphabet = ["a", " ", "é", "—", "😀", "\ud83d", "\ude00", "\ud800", "\udfff", "\n"]
    for _ in range(2000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12)))
        assert sanitize_surrogates(text) == _LONE_SURROGATE.sub("", text), ascii(text)


# ------------------------------------------------------------------ the converted-history cache

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgAAIAAAUAAXpeqz8AAAAASUVORK5CYII="
MODELS = ("claude-sonnet-4-5", "claude-opus-4-5", "claude-3-5-haiku-latest")
TEXTS = ("short", "café — ünïcode", "pair \ud83d\ude80 kept", "lone \ud800 dropped", "   ", "x" * 3000)


class Session:
    """A real session file; requests built through the server's path (``EntryKeys`` and one
    ``ConversionCache`` kept across requests) and without any cache, to be compared byte for byte."""

    def __init__(self, tmp_path: Path, rng: random.Random) -> None:
        self.rng = rng
        self.manager = SessionManager.create(str(tmp_path), tmp_path / "sessions")
        self.cache = ConversionCache()
        self.calls = 0

    def request(self, model_id: str, *, block_images: bool = False) -> tuple[bytes, bytes]:
        model = find_model(model_id)
        assert model is not None
        keys = EntryKeys()
        messages = keys.load(self.manager)
        cached = build_messages_request(
            model=model, system_prompt="system", messages=messages, tools=TOOLS, thinking_level="medium",
            block_images=block_images, keys=keys.keys(messages), conversions=self.cache,
        )  # fmt: skip
        fresh = self.manager.context_view().messages()
        plain = build_messages_request(
            model=model, system_prompt="system", messages=fresh, tools=TOOLS, thinking_level="medium",
            block_images=block_images,
        )  # fmt: skip
        assert messages == fresh  # the messages loaded with their keys are the context's
        return cached.body_bytes(), plain.body_bytes()

    def random_message(self) -> dict[str, Any]:
        rng, now = self.rng, 1767225600000
        kind = rng.choice(["user", "user_image", "assistant", "assistant_tools", "result", "bash"])
        text = rng.choice(TEXTS)
        if kind == "user":
            return {
                "role": "user",
                "content": rng.choice([text, [{"type": "text", "text": text}]]),
                "timestamp": now,
            }
        if kind == "user_image":
            content = [
                {"type": "text", "text": text},
                {"type": "image", "data": PNG, "mimeType": "image/png"},
            ]
            return {"role": "user", "content": content, "timestamp": now}
        if kind == "bash":
            return {"role": "bashExecution", "command": "ls", "output": text, "exitCode": rng.choice([0, 1]),
                    "cancelled": False, "truncated": False, "timestamp": now}  # fmt: skip
        if kind == "result":
            self.calls += 1
            content: list[dict[str, Any]] = [{"type": "text", "text": text}]
            if rng.random() < 0.3:
                content.append({"type": "image", "data": PNG, "mimeType": "image/png"})
            return {"role": "toolResult", "toolCallId": rng.choice([f"call|odd.{self.calls - 1}", "toolu_x"]),
                    "toolName": "read", "content": content, "isError": rng.random() < 0.2,
                    "timestamp": now}  # fmt: skip
        blocks: list[dict[str, Any]] = [
            {"type": "thinking", "thinking": text, "thinkingSignature": rng.choice(["", "SIG"])},
            {"type": "text", "text": text},
        ]
        if kind == "assistant_tools":
            blocks += [{"type": "toolCall", "id": f"call|odd.{self.calls}", "name": "read",
                        "arguments": {"path": text, "n": rng.choice([1, 2.5, -0.0, 1e21])}}]  # fmt: skip
        stop = rng.choice(["stop", "stop", "toolUse", "error", "aborted"])
        return {"role": "assistant", "content": blocks, "api": "anthropic-messages", "provider": "anthropic",
                "model": rng.choice(MODELS), "usage": {}, "stopReason": stop, "timestamp": now}  # fmt: skip


TOOLS = [{"name": "read", "description": "Read a file", "parameters": {"type": "object", "properties": {}}}]


def test_cached_requests_equal_uncached_ones_through_edits_compactions_and_branches(tmp_path: Path) -> None:
    rng = random.Random(2026)
    session = Session(tmp_path, rng)
    manager = session.manager
    for step in range(160):
        roll = rng.random()
        ids = [entry["id"] for entry in manager.get_branch()]
        if roll < 0.7 or len(ids) < 4:
            manager.append_message(session.random_message())
        elif roll < 0.78:  # an edit: back to an earlier entry, then on from there
            manager.branch(rng.choice(ids))
        elif roll < 0.84:
            manager.append_compaction("## Goal\nsummary", rng.choice(ids), 5000)
        elif roll < 0.88:
            manager.branch_with_summary(rng.choice(ids), "Tried another way.")
        elif roll < 0.92:
            manager.append_custom_message_entry("note", rng.choice(TEXTS), True)
        elif roll < 0.96:
            manager.append_model_change("anthropic", rng.choice(MODELS))
        else:
            manager.reset_leaf()
        cached, plain = session.request(rng.choice(MODELS), block_images=rng.random() < 0.2)
        assert cached == plain, f"step {step}"
    assert len(session.cache) > 0


def test_a_request_converts_only_the_messages_new_since_the_last(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    session = Session(tmp_path, random.Random(1))
    for _ in range(30):
        session.manager.append_message(session.random_message())
    session.request("claude-sonnet-4-5")
    converted: list[Any] = []
    real = convert.convert_one

    def counting(message: Any, *args: Any, **kwargs: Any) -> Any:
        converted.append(message)
        return real(message, *args, **kwargs)

    monkeypatch.setattr(convert, "convert_one", counting)
    model = find_model("claude-sonnet-4-5")
    assert model is not None
    keys = EntryKeys()
    messages = keys.load(session.manager)
    request = {"model": model, "system_prompt": "s", "tools": TOOLS, "thinking_level": "off"}
    build_messages_request(**request, messages=messages, keys=keys.keys(messages), conversions=session.cache)
    assert converted == []  # the whole branch came from the cache
    new = {"role": "user", "content": "and now?", "timestamp": 1}
    keys.append(session.manager, new)
    messages.append(new)
    build_messages_request(**request, messages=messages, keys=keys.keys(messages), conversions=session.cache)
    assert converted == [new]


def test_the_cache_keeps_to_its_byte_budget(tmp_path: Path) -> None:
    session = Session(tmp_path, random.Random(3))
    session.cache = ConversionCache(budget=20_000)
    for _ in range(40):
        session.manager.append_message({"role": "user", "content": "y" * 3000, "timestamp": 1})
    cached, plain = session.request("claude-sonnet-4-5")
    assert cached == plain
    assert session.cache.size <= 20_000 and 0 < len(session.cache) < 40
