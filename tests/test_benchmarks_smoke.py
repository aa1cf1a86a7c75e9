"""Every benchmark still runs: each one's ``--smoke`` mode (tiny sizes, one run, a few seconds), as a
real process, must exit 0 and print its table, so a benchmark broken by a change fails the suite
instead of at the next ``make bench``. Benchmarks that compare with pi do so in smoke mode too (and
are skipped, or fail where pi is required, without it: ``tests/oracle.py``). The numbers mean
nothing here and nothing is checked about speed.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.oracle import REPO_ROOT, require_oracle

pytestmark = pytest.mark.server  # the benchmarks start servers (and pi) in smoke mode

BENCHMARKS = REPO_ROOT / "benchmarks"
DOCS = REPO_ROOT / "docs" / "benchmarks.md"


def _case(script: str, *printed: str, pi: bool) -> object:
    """One benchmark, the lines its smoke run must print (its table's header first), whether it times pi."""
    marks = [pytest.mark.oracle] if pi else []
    return pytest.param(script, printed, pi, id=script.removesuffix(".py"), marks=marks)


CASES = [
    _case("bench_session.py", "| measurement ", "300: identical", "| list 5 session files", pi=True),
    _case(
        "bench_server.py",
        "| measure | p50 ms | p90 ms | max ms | runs |",
        "| request | p50 ms | p99 ms | response size | runs |",
        "| `pi/buildContext after appends` |",
        pi=False,
    ),
    _case(
        "bench_compaction.py",
        "prepare_compaction, warm cache:",
        "pi prepareCompaction via oracle:",
        "same answer as ours: True",
        pi=True,
    ),
    _case(
        "bench_prompt.py",
        "Save -> watcher callback",
        "Prompt rebuild, 100 skills",
        "resources + systemPrompt via oracle: median",
        pi=True,
    ),
    _case("bench_prompt_server.py", "| measure | p50 ms | p95 ms | max ms | runs |", pi=False),
    _case("bench_list.py", "| measurement ", "pi `SessionManager.list`:", pi=True),
    _case("bench_llm_stream.py", "| reply | side | CPU ms p50 ", "| pi-lsp |", "| pi |", pi=True),
    _case("bench_memory.py", "| measure | pi-lsp | pi | pi-lsp / pi |", "entries: ours 600, pi 600", pi=True),
    _case(
        "bench_acp.py",
        "| measure | LSP `pi/prompt` | ACP `session/prompt` | ACP − LSP |",
        "| 210 KB write",
        pi=False,
    ),
    _case("bench_blocking.py", "offline pi/compact of 300 messages", "read_lines of one 1 MB line", pi=False),
]


def _run(tmp_path: Path, script: str, *args: str) -> subprocess.CompletedProcess[str]:
    """The benchmark in its own process, with HOME and temporary files under ``tmp_path``."""
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    env = dict(os.environ, HOME=str(home), TMPDIR=str(tmp_path), PI_CODING_AGENT_DIR=str(home / "agent"))
    env.pop("ANTHROPIC_API_KEY", None)
    command = [sys.executable, str(BENCHMARKS / script), *args]
    return subprocess.run(command, cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=180)


@pytest.mark.parametrize(("script", "printed", "pi"), CASES)
def test_smoke_run_prints_its_table(tmp_path: Path, script: str, printed: tuple[str, ...], pi: bool) -> None:
    if pi:
        require_oracle()
    docs_before = DOCS.read_bytes()
    run = _run(tmp_path, script, "--smoke")
    output = f"stdout:\n{run.stdout}\nstderr (end):\n{run.stderr[-4000:]}"
    assert run.returncode == 0, f"{script} --smoke exited {run.returncode}\n{output}"
    for line in printed:
        assert line in run.stdout, f"{script} --smoke did not print {line!r}\n{output}"
    assert DOCS.read_bytes() == docs_before


@pytest.mark.parametrize(
    ("script", "option"),
    [
        ("bench_server.py", "--write-docs"),
        ("bench_prompt_server.py", "--write-docs"),
        ("bench_session.py", "--json=results.json"),
    ],
)
def test_smoke_numbers_are_never_written(tmp_path: Path, script: str, option: str) -> None:
    docs_before = DOCS.read_bytes()
    run = _run(tmp_path, script, "--smoke", option)
    assert run.returncode == 2 and "--smoke numbers mean nothing" in run.stderr, run.stderr
    assert DOCS.read_bytes() == docs_before
    assert not (REPO_ROOT / "results.json").exists()


@pytest.mark.oracle
def test_open_against_pi_smoke_run_prints_its_table(tmp_path: Path) -> None:
    """``bench_server.py --open-only`` (fresh servers against pi's open + context) runs too."""
    require_oracle()
    docs_before = DOCS.read_bytes()
    run = _run(tmp_path, "bench_server.py", "--smoke", "--open-only")
    assert run.returncode == 0, f"stdout:\n{run.stdout}\nstderr (end):\n{run.stderr[-4000:]}"
    assert "| file | ours: open + last 100 (`pi/getBranch`) |" in run.stdout, run.stdout
    assert "| 300 entries, " in run.stdout, run.stdout
    assert DOCS.read_bytes() == docs_before
