"""The checkpoint benchmark runs (its ``--smoke`` mode); it asserts no speed, only that it works."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_checkpoints.py"


def test_the_checkpoint_benchmark_smoke_run_completes() -> None:
    done = subprocess.run(
        [sys.executable, str(BENCH), "--smoke"], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert "snapshot after a batch" in done.stdout and "restore of 50 files" in done.stdout
