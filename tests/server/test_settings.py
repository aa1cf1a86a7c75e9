"""Settings layering and the session-folder precedence (in process; no server needed)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pi_lsp.service.settings import Settings, deep_merge


def test_deep_merge() -> None:
    assert deep_merge({"a": {"b": 1, "c": 2}, "x": [1]}, {"a": {"c": 3}, "x": [2]}) == {
        "a": {"b": 1, "c": 3},
        "x": [2],
    }


def test_layers_and_defaults(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    agent = tmp_path / "agent"
    agent.mkdir()
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(agent))
    monkeypatch.delenv("PI_CODING_AGENT_SESSION_DIR", raising=False)
    project = tmp_path / "project"
    (project / ".pi").mkdir(parents=True)
    (agent / "settings.json").write_text(
        json.dumps({"compaction": {"reserveTokens": 1000, "enabled": False}})
    )
    (project / ".pi" / "settings.json").write_text(json.dumps({"compaction": {"keepRecentTokens": 5}}))
    settings = Settings(str(project))
    assert (
        settings.context_window == 200_000
        and settings.summarizer == "auto"
        and settings.tokenizer == "tiktoken"
    )
    assert settings.compaction.reserve_tokens == 1000 and settings.compaction.keep_recent_tokens == 5
    assert settings.compaction.enabled is False
    settings.set_initialization_options({"pi": {"contextWindow": 1234, "compaction": {"enabled": True}}})
    assert settings.context_window == 1234 and settings.compaction.enabled is True
    assert settings.compaction.reserve_tokens == 1000  # nested keys merge
    assert settings.set_client_configuration({"pi": {"contextWindow": "big", "tokenizer": "estimate"}})
    assert settings.context_window == 200_000 and settings.tokenizer == "estimate"  # wrong type → default
    assert not settings.set_client_configuration({"other": {}})
    assert settings.tokenizer == "estimate"


def test_session_dir_precedence(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))
    monkeypatch.delenv("PI_CODING_AGENT_SESSION_DIR", raising=False)
    settings = Settings(None)
    default = settings.resolve_session_dir("/work/project")
    assert default == tmp_path / "agent" / "sessions" / "--work-project--"
    settings.set_initialization_options({"pi": {"sessionDir": "rel"}})
    assert settings.resolve_session_dir("/work/project") == Path("/work/project/rel")
    monkeypatch.setenv("PI_CODING_AGENT_SESSION_DIR", str(tmp_path / "env"))
    assert settings.resolve_session_dir("/work/project") == tmp_path / "env"
    assert settings.resolve_session_dir("/work/project", str(tmp_path / "req")) == tmp_path / "req"
