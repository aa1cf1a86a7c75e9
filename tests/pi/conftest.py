from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.register_assert_rewrite("tests.pi.differential")

from tests.pi.pi_tools import PiTools, pi_or_skip, prepare_agent_dir  # noqa: E402


@pytest.fixture(scope="session")
def tools_agent_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One agent dir (``<dir>/bin`` is where pi and we look for rg/fd first) for both sides."""
    agent_dir = tmp_path_factory.mktemp("agent-dir")
    prepare_agent_dir(agent_dir)
    return agent_dir


@pytest.fixture(autouse=True)
def _same_agent_dir(tools_agent_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tools_agent_dir))


@pytest.fixture(scope="session")
def pi_tools(tools_agent_dir: Path) -> Iterator[PiTools]:
    pi_or_skip()
    driver = PiTools(tools_agent_dir)
    yield driver
    driver.close()
