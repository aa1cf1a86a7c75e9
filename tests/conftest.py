"""Fixtures for every test: the pi oracle co-process, the rule that CI never skips it, the lane
marks (``tests/lanes.py``) that ``make test-fast`` selects by, and the protocol shape check of every
message the tests receive from a server (``tests/shape_check.py``)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests import shape_check
from tests.lanes import mark_lanes
from tests.oracle import REQUIRE_ENV, SKIP_PREFIX, PiOracle, oracle_required, require_oracle

shape_check.install()


@pytest.fixture(scope="session")
def pi_oracle() -> Iterator[PiOracle]:
    """The pi oracle; tests using it are skipped (with the reason) where node or pi is missing."""
    require_oracle()
    oracle = PiOracle()
    yield oracle
    oracle.close()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """Where pi is required (CI), any test skipped for want of pi counts as failed."""
    outcome = yield
    report: pytest.TestReport = outcome.get_result()
    if report.skipped and oracle_required() and isinstance(report.longrepr, tuple):
        reason = str(report.longrepr[2])
        if SKIP_PREFIX.strip() in reason:
            report.outcome = "failed"
            report.longrepr = f"{reason} ({REQUIRE_ENV} is set: pi must run here)"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark each test with the lanes of what it starts (server, agent, oracle, editor)."""
    mark_lanes(items)


@pytest.fixture(autouse=True)
def server_answers_have_declared_shapes() -> Iterator[None]:
    """Fail a test whose server sent a result, notification or event the protocol does not declare."""
    shape_check.take_problems()
    yield
    problems = shape_check.take_problems()
    assert not problems, "the server's messages differ from pi_lsp/protocol:\n" + "\n".join(problems[:10])
