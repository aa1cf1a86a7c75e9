"""Every Neovim test runs on each version of ``tests.nvim.binaries.VERSIONS`` (the ``nvim`` fixture)."""

from __future__ import annotations

import pytest

from tests.nvim.binaries import VERSIONS, require_nvim


@pytest.fixture(scope="session", params=VERSIONS, ids=[f"nvim{v}" for v in VERSIONS])
def nvim(request: pytest.FixtureRequest) -> str:
    """The path of the Neovim binary of this parameter's version."""
    return require_nvim(str(request.param))
