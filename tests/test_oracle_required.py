"""A test that needs pi is skipped with its reason where pi is missing, and fails where CI requires pi.

Each case runs pytest in a child process with ``PI_ORACLE_DIR`` pointing at an empty folder, so pi
is missing there whatever this machine has installed.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.oracle import REPO_ROOT, REQUIRE_ENV

pytestmark = pytest.mark.oracle  # runs pytest on oracle tests in subprocesses

ORACLE_TEST = "tests/compaction/test_cut_point.py::test_random_branches_match_pi"

DIRECT_SKIP = """
import pytest


def test_skips_itself() -> None:
    pytest.skip("pi oracle unavailable: made up for this test")
"""


def _pytest(tmp_path: Path, *args: str, required: bool) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PI_ORACLE_DIR=str(tmp_path / "no-pi-here"))
    env.pop(REQUIRE_ENV, None)
    if required:
        env[REQUIRE_ENV] = "1"
    plugins = ("-p", "no:cacheprovider", "-p", "no:xdist")
    command = [sys.executable, "-m", "pytest", "-q", "-rfEs", *plugins, *args]
    return subprocess.run(command, cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=120)


def test_missing_pi_is_a_reported_skip(tmp_path: Path) -> None:
    run = _pytest(tmp_path, ORACLE_TEST, required=False)
    assert run.returncode == 0, run.stdout
    assert "1 skipped" in run.stdout
    assert "SKIPPED [1]" in run.stdout and "pi oracle unavailable: pi npm package not installed" in run.stdout


def test_missing_pi_fails_where_required(tmp_path: Path) -> None:
    run = _pytest(tmp_path, ORACLE_TEST, required=True)
    assert run.returncode == 1, run.stdout
    assert "1 error" in run.stdout and "skipped" not in run.stdout
    assert f"{REQUIRE_ENV} is set" in run.stdout


def test_any_oracle_skip_fails_where_required(tmp_path: Path) -> None:
    test_file = tmp_path / "test_direct_skip.py"
    test_file.write_text(DIRECT_SKIP, encoding="utf-8")
    args = ("-p", "tests.conftest", "--rootdir", str(tmp_path), str(test_file))
    assert "1 skipped" in _pytest(tmp_path, *args, required=False).stdout
    run = _pytest(tmp_path, *args, required=True)
    assert run.returncode == 1, run.stdout
    assert "1 failed" in run.stdout and "made up for this test" in run.stdout
