from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.agent.process_support import Markers


@pytest.fixture
def markers() -> Iterator[Markers]:
    """Unique sleep lengths for the daemons a test starts; those processes are killed at the end."""
    made = Markers()
    try:
        yield made
    finally:
        made.kill_all()
