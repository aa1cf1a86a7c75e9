"""``benchmarks/bench_agent.py --smoke`` runs end to end (every scenario at tiny sizes, against pi where
pi is installed), so the benchmark keeps working as the server changes. No timing is asserted."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.oracle import REPO_ROOT, optional_checks_run

pytestmark = pytest.mark.agent  # the agent benchmark runs agents through servers


def test_the_agent_benchmark_runs_in_smoke_mode() -> None:
    command = [sys.executable, str(REPO_ROOT / "benchmarks" / "bench_agent.py"), "--smoke"]
    with_pi = optional_checks_run()
    if not with_pi:
        command.append("--no-pi")
    run = subprocess.run(command, cwd=REPO_ROOT, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "| CPU per turn, ms (3 turns) |" in run.stdout
    assert "mix: 4 prompts, every third reads 2 KB" in run.stdout
    lines = run.stdout.splitlines()
    first = next(line for line in lines if "first prompt 0 s after start: first token" in line)
    assert float(first.split("|")[2]) > 0  # a fresh server's first prompt was answered and timed
    mix_row = next(line for line in run.stdout.splitlines() if line.startswith("| 1 (") and "CPU, s" in line)
    cells = [cell.strip() for cell in mix_row.split("|")]
    assert float(cells[3]) > 0  # ours measured
    if with_pi:
        assert float(cells[4]) > 0 and float(cells[5]) > 0  # pi measured, and the ratio
