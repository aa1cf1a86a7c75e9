"""The compaction service in process: the usage shortcut, lazy entries, settings, the API key,
and pi's auto-compaction decision (``_checkCompaction``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pi_lsp.compaction import CompactionSettings, TokenCache, context_usage_for_path, make_tokenizer
from pi_lsp.compaction.overflow import is_context_overflow
from pi_lsp.llm import auth
from pi_lsp.secrets import redact
from pi_lsp.service.build import build_service
from pi_lsp.service.compaction_config import RunConfig
from pi_lsp.service.model_choice import context_window
from pi_lsp.service.record_entries import RecordEntry, usage_path
from pi_lsp.service.settings import Settings
from pi_lsp.session import SessionManager
from pi_lsp.session.jsonl import dumps_compact
from pi_lsp.session.records import EntryRecord
from pi_lsp.session.view import build_view
from tests.compaction.gen import Gen


def records_of(path: list[dict[str, Any]]) -> list[EntryRecord]:
    return [EntryRecord(entry, dumps_compact(entry), 0) for entry in path]


def test_usage_shortcut_equals_the_whole_path() -> None:
    """``usage_path`` keeps only what ``context_usage_for_path`` looks at: same answer, every time."""
    tokenizers = [make_tokenizer("estimate"), make_tokenizer("tiktoken")]
    checked_unknown = checked_known = 0
    for seed in range(150):
        gen = Gen(seed)
        path = gen.branch(compaction_rate=0.12 if seed % 2 else 0.0)
        view = build_view(records_of(path))
        window = gen.rng.choice([0, 500, 5000, 200000])
        settings = CompactionSettings(enabled=seed % 5 != 0, reserve_tokens=gen.rng.choice([0, 100, 16384]))
        tokenizer = tokenizers[seed % 2]
        expected = context_usage_for_path(path, window, settings, tokenizer, TokenCache())
        shortcut = usage_path(view.path, view.compaction_index)
        assert len(shortcut) <= len(path) + 1
        assert context_usage_for_path(shortcut, window, settings, tokenizer, TokenCache()) == expected, seed
        if expected["tokens"] is None:
            checked_unknown += 1
        else:
            checked_known += 1
    assert checked_unknown > 5 and checked_known > 50


def test_record_entry_reads_lazily_and_like_a_dict() -> None:
    entry = {"type": "message", "id": "a1", "parentId": "p0", "timestamp": "2026-01-01T00:00:00.000Z",
             "message": {"role": "user", "content": "hi", "timestamp": 1}, "extra": [1]}  # fmt: skip
    mapping = RecordEntry(records_of([entry])[0])
    assert mapping.get("type") == "message" and mapping["id"] == "a1" and mapping.get("parentId") == "p0"
    assert mapping._entry is None  # nothing parsed for the basics
    assert mapping["message"] == entry["message"] and mapping._entry is None
    assert dict(mapping) == entry and len(mapping) == len(entry) and "extra" in mapping
    assert "nope" not in mapping and mapping.get("nope", 7) == 7
    with pytest.raises(KeyError):
        mapping["nope"]
    odd = RecordEntry(records_of([{"type": "message", "id": "x", "message": "not an object"}])[0])
    assert odd.get("message") == "not an object"


def test_run_config_reads_pi_settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))
    settings = Settings(None)
    config = RunConfig.from_settings(settings, 200_000)
    assert config.context_window == 200_000
    assert (config.max_retries, config.base_delay, config.max_delay, config.timeout) == (3, 2.0, 60.0, 600.0)
    assert config.compaction == CompactionSettings() and config.model is None
    settings.set_initialization_options({"pi": {
        "model": "claude-a", "compaction": {"model": "claude-b", "keepRecentTokens": 5},
        "retry": {"baseDelayMs": 10,
                  "provider": {"maxRetries": 1, "timeoutMs": 1500, "maxRetryDelayMs": 2000}},
        "branchSummary": {"reserveTokens": 1000},
    }})  # fmt: skip
    config = RunConfig.from_settings(settings, 1_000_000, keep_recent_tokens=7)
    assert config.model == "claude-b" and config.compaction.keep_recent_tokens == 7
    assert (config.max_retries, config.base_delay, config.max_delay, config.timeout) == (1, 0.01, 2.0, 1.5)
    assert config.branch_reserve_tokens == 1000
    settings.set_client_configuration({"pi": {"retry": {"enabled": False}}})
    assert RunConfig.from_settings(settings, 200_000).max_retries == 0


def test_api_key_from_env_or_pi_auth_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    agent = tmp_path / "agent"
    agent.mkdir()
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(agent))
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    assert auth.anthropic_api_key() is None
    (agent / "auth.json").write_text("{not json")
    assert auth.anthropic_api_key() is None
    secret = "plain-secret-from-auth-file-42"
    (agent / "auth.json").write_text(json.dumps({"anthropic": {"type": "api_key", "key": secret}}))
    assert auth.anthropic_api_key() == secret
    assert secret not in redact(f"oops {secret}")  # registered for redaction
    monkeypatch.setenv("MY_KEY_VAR", "from-a-variable-123456")
    (agent / "auth.json").write_text(json.dumps({"anthropic": {"type": "api_key", "key": "MY_KEY_VAR"}}))
    assert auth.anthropic_api_key() == "from-a-variable-123456"
    for credential in ({"type": "api_key", "key": "!echo hi"}, {"type": "oauth", "access": "x"}, "junk"):
        (agent / "auth.json").write_text(json.dumps({"anthropic": credential}))
        assert auth.anthropic_api_key() is None
    monkeypatch.setenv("ANTHROPIC_API_KEY", "env-key-wins-1234567")
    assert auth.anthropic_api_key() == "env-key-wins-1234567"


def test_context_overflow_patterns() -> None:
    def error(text: str) -> dict[str, Any]:
        return {"role": "assistant", "stopReason": "error", "errorMessage": text, "usage": {}}

    for text in ("prompt is too long: 213462 tokens > 200000 maximum",
                 '413 {"error":{"type":"request_too_large","message":"Request exceeds the maximum size"}}',
                 "Your input exceeds the context window of this model", "413 status code (no body)",
                 "prompt too long; exceeded max context length by 12 tokens",
                 "Too many tokens in input"):  # fmt: skip
        assert is_context_overflow(error(text)), text
    for text in ("Throttling error: Too many tokens, please wait", "rate limit: too many tokens",
                 "Service unavailable: prompt is too long", "overloaded_error", ""):  # fmt: skip
        assert not is_context_overflow(error(text)), text
    usage = {"input": 190000, "cacheRead": 20000, "output": 5}
    assert is_context_overflow({"stopReason": "stop", "usage": usage}, 200000)
    assert not is_context_overflow({"stopReason": "stop", "usage": usage}, 0)
    assert is_context_overflow({"stopReason": "length", "usage": {"input": 199000, "output": 0}}, 200000)
    assert not is_context_overflow({"stopReason": "length", "usage": {"input": 199000}}, 200000)


# ---------------------------------------------------------------------------- the auto check


USAGE = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0}


def assistant(
    total: int, *, stop: str = "stop", timestamp: int | None = None, **extra: Any
) -> dict[str, Any]:
    message: dict[str, Any] = {
        "role": "assistant", "content": [{"type": "text", "text": "answer"}], "api": "anthropic-messages",
        "provider": "anthropic", "model": "claude-test", "usage": {**USAGE, "totalTokens": total},
        "stopReason": stop, **extra,
    }  # fmt: skip
    if timestamp is not None:
        message["timestamp"] = timestamp
    return message


def checker(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, **pi: Any
) -> tuple[Any, SessionManager, RunConfig]:
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))
    service = build_service(workers=1)
    manager = SessionManager.in_memory(str(tmp_path))
    settings = Settings(None)
    settings.set_initialization_options(
        {"pi": {"contextWindow": 10000, "compaction": {"reserveTokens": 2000}, **pi}}
    )
    return service.compaction, manager, RunConfig.from_settings(settings, context_window(manager, settings))


def test_threshold_decision(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    compaction, manager, config = checker(tmp_path, monkeypatch)
    manager.append_message({"role": "user", "content": "hi", "timestamp": 1})
    below = manager.append_message(assistant(8000, timestamp=2))
    assert compaction.check(manager, config, below) is None  # strictly above window - reserve
    above = manager.append_message(assistant(8001, timestamp=3))
    assert compaction.check(manager, config, above).reason == "threshold"
    tool = manager.append_message(assistant(9000, stop="toolUse", timestamp=4))
    assert compaction.check(manager, config, tool) is None  # not the end of an agent run
    aborted = manager.append_message(assistant(9000, stop="aborted", timestamp=5))
    assert compaction.check(manager, config, aborted) is None
    # an error message uses the last successful usage plus pi's estimate of what follows
    error = manager.append_message(assistant(0, stop="error", timestamp=6, errorMessage="overloaded"))
    assert compaction.check(manager, config, error).reason == "threshold"
    manager.append_compaction("summary", above, 9000)
    stale = manager.append_message(assistant(9999, timestamp=7))  # older than the compaction
    assert compaction.check(manager, config, stale) is None
    error_after = manager.append_message(assistant(0, stop="error", errorMessage="overloaded"))
    assert compaction.check(manager, config, error_after) is None  # only pre-compaction usage exists
    fresh = manager.append_message(assistant(9999))
    assert compaction.check(manager, config, fresh).reason == "threshold"
    manager.set_leaf(below)
    assert compaction.check(manager, config, fresh) is None  # no longer on the current branch


def test_overflow_decision_recovers_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    compaction, manager, config = checker(tmp_path, monkeypatch)
    manager.append_message({"role": "user", "content": "hi"})
    overflow = {"errorMessage": "prompt is too long: 213462 tokens > 200000 maximum"}
    first = manager.append_message(assistant(0, stop="error", **overflow))
    decision = compaction.check(manager, config, first)
    assert decision.reason == "overflow" and decision.will_retry and not decision.exhausted
    second = manager.append_message(assistant(0, stop="error", **overflow))
    assert compaction.check(manager, config, second).exhausted
    ok = manager.append_message(assistant(10))  # a successful reply resets the flag
    assert compaction.check(manager, config, ok) is None
    third = manager.append_message(assistant(0, stop="error", **overflow))
    assert not compaction.check(manager, config, third).exhausted
    _, disabled_manager, disabled = checker(tmp_path, monkeypatch, compaction={"enabled": False})
    disabled_manager.append_message({"role": "user", "content": "hi"})
    entry = disabled_manager.append_message(assistant(0, stop="error", **overflow))
    assert compaction.check(disabled_manager, disabled, entry) is None
