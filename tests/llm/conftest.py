"""Fixtures of the model client's network tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.llm.loopback import make_certificate


@pytest.fixture(scope="module")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A self-signed certificate for localhost and its key (the openssl command makes them)."""
    return make_certificate(tmp_path_factory.mktemp("tls"))
