"""The ``pi-lsp`` command as a subprocess: inspection commands and errors (the demo: test_demo.py)."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from pi_lsp.cli import _parser, editor_stdio_options
from tests.server.support import PI_FIXTURES, copy_fixture, run_cli


def test_version(tmp_path: Path) -> None:
    result = run_cli(tmp_path, "--version")
    assert result.returncode == 0 and result.stdout.startswith("pi-lsp ")


def test_tree_and_context(tmp_path: Path) -> None:
    file = copy_fixture(tmp_path)
    before = file.read_bytes()
    tree = run_cli(tmp_path, "tree", str(file))
    assert tree.returncode == 0, tree.stderr
    lines = tree.stdout.splitlines()
    assert "Branched demo" in lines[0]
    assert any("e4 user: try approach A  [A-start]" in line for line in lines)
    assert any(line.endswith("e17 custom: ext-state  ← leaf") for line in lines)
    assert any(line.startswith("├─ ") for line in lines) and any(line.startswith("└─ ") for line in lines)
    data = json.loads(run_cli(tmp_path, "tree", "--json", str(file)).stdout)
    assert data["leafId"] == "e17" and data["roots"][0]["id"] == "e1"
    flat = json.loads(run_cli(tmp_path, "tree", "--json", "--flat", str(file)).stdout)
    assert len(flat["nodes"]) == 17
    context = run_cli(tmp_path, "context", str(file))
    assert (
        context.returncode == 0 and "7 messages" in context.stdout and "compactionSummary" in context.stdout
    )
    branch = json.loads(run_cli(tmp_path, "context", "--json", "--leaf", "e6", str(file)).stdout)
    assert [m["role"] for m in branch["messages"]] == ["user", "assistant", "user", "assistant", "toolResult"]
    assert branch["thinkingLevel"] == "high"
    assert file.read_bytes() == before


def test_v1_files_are_not_migrated_on_disk(tmp_path: Path) -> None:
    file = copy_fixture(tmp_path, PI_FIXTURES / "large-session.jsonl")
    before = file.read_bytes()
    result = run_cli(tmp_path, "context", "--json", str(file))
    assert result.returncode == 0 and len(json.loads(result.stdout)["messages"]) == 914
    assert file.read_bytes() == before


def test_sessions(tmp_path: Path) -> None:
    project = tmp_path / "project"
    sessions = tmp_path / "sessions"
    sessions.mkdir()
    copy_fixture(sessions)
    listed = run_cli(tmp_path, "sessions", "--session-dir", str(sessions), "--json", cwd=project.parent)
    assert listed.returncode == 0, listed.stderr
    infos = json.loads(listed.stdout)["sessions"]
    assert [info["name"] for info in infos] == ["Branched demo"]
    human = run_cli(tmp_path, "sessions", "--session-dir", str(sessions))
    assert "Branched demo" in human.stdout and "branched-v3.jsonl" in human.stdout
    none = run_cli(tmp_path, "sessions", "--session-dir", str(sessions), "zebra")
    assert none.returncode == 0 and "no match for 'zebra' among 1 session of" in none.stdout
    assert json.loads(run_cli(tmp_path, "sessions", "--all", "--json").stdout) == {"sessions": []}


def test_errors_go_to_stderr_with_a_non_zero_exit(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text("garbage\n")
    for args in (
        ("tree", str(tmp_path / "missing.jsonl")),
        ("tree", str(bad)),
        ("context", "--leaf", "nope", str(copy_fixture(tmp_path))),
    ):
        result = run_cli(tmp_path, *args)
        assert (
            result.returncode == 1 and result.stdout == "" and result.stderr.startswith("pi-lsp: error:")
        ), args
    assert bad.read_text() == "garbage\n"
    usage = run_cli(tmp_path, "tree")
    assert usage.returncode == 2 and "usage" in usage.stderr


def test_log_file_is_private(tmp_path: Path) -> None:
    """At debug level the log holds conversation text: a new log file is made 0600 whatever the
    umask, an existing one of ours is tightened to 0600 and keeps its content, one that belongs to
    another user is refused before anything is written to it."""
    fresh = tmp_path / "fresh.log"
    served = run_cli(tmp_path, "--log-file", str(fresh), "--log-level", "debug")  # stdin at its end: exits
    assert "Traceback" not in served.stderr and fresh.read_text()  # the server did log
    assert stat.S_IMODE(fresh.stat().st_mode) == 0o600
    old = tmp_path / "old.log"
    old.write_text("earlier run\n")
    old.chmod(0o644)
    run_cli(tmp_path, "--log-file", str(old), "--log-level", "debug")
    assert stat.S_IMODE(old.stat().st_mode) == 0o600
    assert old.read_text().startswith("earlier run\n") and len(old.read_text()) > len("earlier run\n")
    if os.geteuid() == 0:  # only root can give a file away
        theirs = tmp_path / "theirs.log"
        theirs.write_text("")
        theirs.chmod(0o666)
        os.chown(theirs, 65534, 65534)
        refused = run_cli(tmp_path, "--log-file", str(theirs))
        assert refused.returncode == 1 and "belongs to another user" in refused.stderr
        assert theirs.read_text() == "" and stat.S_IMODE(theirs.stat().st_mode) == 0o666
    missing = run_cli(tmp_path, "--log-file", str(tmp_path / "no-such-folder" / "x.log"))
    assert missing.returncode == 1 and "No such file or directory" in missing.stderr
    assert "Traceback" not in missing.stderr


EDITOR_COMMAND_LINES = (
    [],
    ["--stdio"],
    ["serve"],
    ["serve", "--stdio"],
    ["--stdio", "--log-file", "pi.log"],
    ["--log-level", "debug", "--stdio", "--log-file", "pi.log"],
    ["serve", "--log-file", "", "--log-level", "error"],
)


@pytest.mark.parametrize("arguments", EDITOR_COMMAND_LINES)
def test_editor_command_lines_are_read_as_the_parser_reads_them(arguments: list[str]) -> None:
    """What editors start the server with is read without building the parser (its imports are
    ~8 ms of every start): the options must be exactly those the parser gives."""
    parsed = vars(_parser().parse_args(arguments))
    assert parsed.pop("command") in (None, "serve")
    fast = editor_stdio_options(arguments)
    assert fast is not None and vars(fast) == parsed


@pytest.mark.parametrize(
    "arguments",
    [
        ["--tcp", "127.0.0.1:0"],
        ["--stdio", "--stdio"],
        ["--log-level", "loud"],
        ["--log-file"],
        ["--log-file", "--stdio"],
        ["--log-file=pi.log"],
        ["-h"],
        ["--version"],
        ["sessions"],
        ["--stdio", "serve"],
    ],
)
def test_any_other_command_line_goes_to_the_parser(arguments: list[str]) -> None:
    """Anything else (another transport, a repeated or malformed option, help, a command) is the
    parser's, which serves it or reports it as before."""
    assert editor_stdio_options(arguments) is None


def test_a_bad_log_level_is_still_reported_by_the_parser(tmp_path: Path) -> None:
    refused = run_cli(tmp_path, "--stdio", "--log-level", "loud")
    assert refused.returncode == 2 and "invalid choice: 'loud'" in refused.stderr
