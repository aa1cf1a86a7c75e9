"""Fixtures for the session-store tests: every test gets its own agent dir (never ``~/.pi``)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def agent_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """``PI_CODING_AGENT_DIR`` points into the test's tmp dir, so leaf side files and default
    session folders never touch the real home directory."""
    directory = tmp_path / "agent"
    directory.mkdir()
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(directory))
    monkeypatch.delenv("PI_CODING_AGENT_SESSION_DIR", raising=False)
    yield directory


@pytest.fixture
def session_dir(tmp_path: Path) -> Path:
    directory = tmp_path / "sessions"
    directory.mkdir()
    return directory
