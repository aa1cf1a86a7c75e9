"""Settings layering and the session-folder precedence (in process; no server needed)."""

from __future__ import annotations

import asyncio
import json
import os
import threading
from pathlib import Path

import pytest

from pi_lsp.service import settings as settings_module
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


async def test_a_settings_read_that_hangs_is_abandoned(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A settings file on a hung mount: the read runs in a worker, and after the timeout the
    settings stay as they were (the event loop was never blocked)."""
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))
    release = threading.Event()
    real = settings_module.read_settings_files

    def hung(cwd: str | None) -> dict[str, object]:
        release.wait(10)
        return real(cwd)

    monkeypatch.setattr(settings_module, "read_settings_files", hung)
    settings = Settings(load=False)
    settings.set_initialization_options({"pi": {"contextWindow": 4321}})
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            await asyncio.sleep(0.01)

    running = asyncio.ensure_future(ticker())
    try:
        await settings.reload_files_async(timeout=0.3)
    finally:
        running.cancel()
        release.set()
    assert ticks >= 5  # the loop kept running while the read hung
    assert settings.context_window == 4321
    assert "took over" in caplog.text


async def test_a_fifo_project_settings_file_is_skipped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))
    (tmp_path / "agent").mkdir()
    (tmp_path / "agent" / "settings.json").write_text(json.dumps({"contextWindow": 777}))
    (tmp_path / "ws" / ".pi").mkdir(parents=True)
    os.mkfifo(tmp_path / "ws" / ".pi" / "settings.json")
    settings = Settings(load=False)
    await settings.set_cwd(str(tmp_path / "ws"))
    assert settings.context_window == 777  # the global file still applies
