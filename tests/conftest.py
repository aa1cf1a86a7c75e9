"""Shared fixtures: the pi oracle co-process and paths to the shared fixtures."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.oracle import PiOracle, unavailable_reason


@pytest.fixture(scope="session")
def pi_oracle() -> Iterator[PiOracle]:
    """The pi oracle; tests using it are skipped (with the reason) where node or pi is missing."""
    reason = unavailable_reason()
    if reason is not None:
        pytest.skip(f"pi oracle unavailable: {reason}")
    oracle = PiOracle()
    yield oracle
    oracle.close()
