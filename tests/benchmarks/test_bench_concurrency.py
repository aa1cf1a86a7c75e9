"""The concurrency benchmark's smoke mode runs end to end (a real server, two connections, the
fake model), so the benchmark cannot rot; it asserts nothing about speed."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.server  # the benchmark starts a server

ROOT = Path(__file__).resolve().parents[2]


def test_bench_concurrency_smoke(capsys: pytest.CaptureFixture[str]) -> None:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import bench_concurrency
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    assert bench_concurrency.main(["--smoke"]) == 0
    out = capsys.readouterr().out
    assert "| 3 | 20 |" in out and "load average" in out
