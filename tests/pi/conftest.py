from __future__ import annotations

from collections.abc import Iterator

import pytest

pytest.register_assert_rewrite("tests.pi.differential")

from tests.pi.pi_tools import PiTools, pi_or_skip  # noqa: E402


@pytest.fixture(scope="session")
def pi_tools() -> Iterator[PiTools]:
    pi_or_skip()
    driver = PiTools()
    yield driver
    driver.close()
