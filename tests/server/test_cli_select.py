"""``pi-lsp`` as a person types it: sessions named by ``latest`` or an id prefix, clear "nothing
found" messages, the note on a terminal, and ``--stdio`` as editors' launchers pass it."""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import time
from pathlib import Path

import orjson

from pi_lsp.client.rpc_client import RpcClient
from pi_lsp.session.paths import default_session_dir
from tests.server.support import SERVER, run_cli, server_env

OLD_ID = "0197b000-0000-7000-8000-00000000aaaa"
NEW_ID = "0197b000-0000-7000-8000-00000000bbbb"
OTHER_ID = "5e55e55e-0000-7000-8000-000000000001"


def write_session(directory: Path, session_id: str, cwd: Path, text: str, when_ms: int) -> Path:
    """A small v3 session file of ``cwd`` whose only message is ``text`` at ``when_ms``."""
    header = {"type": "session", "version": 3, "id": session_id, "timestamp": "2026-01-01T00:00:00.000Z"}
    message = {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": when_ms}
    entry = {"type": "message", "id": "m1", "parentId": None, "timestamp": "2026-01-01T00:00:01.000Z"}
    file = directory / f"2026-01-01T00-00-00-000Z_{session_id}.jsonl"
    lines = [{**header, "cwd": str(cwd)}, {**entry, "message": message}]
    file.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))
    return file


def project_with_sessions(tmp_path: Path) -> tuple[Path, dict[str, Path]]:
    """A project folder whose sessions live where pi keeps them (under the test's agent dir)."""
    project = tmp_path / "project"
    project.mkdir()
    directory = default_session_dir(str(project), tmp_path / "agent")
    files = {
        "old": write_session(directory, OLD_ID, project, "the old question", 1_767_225_601_000),
        "new": write_session(directory, NEW_ID, project, "the new question", 1_767_312_001_000),
        "other": write_session(directory, OTHER_ID, project, "another question", 1_767_000_000_000),
    }
    return project, files


def test_latest_and_id_prefixes_name_sessions_of_the_current_project(tmp_path: Path) -> None:
    project, _ = project_with_sessions(tmp_path)
    latest = run_cli(tmp_path, "context", "latest", cwd=project)
    assert latest.returncode == 0, latest.stderr
    assert "the new question" in latest.stdout and "the old question" not in latest.stdout
    by_prefix = run_cli(tmp_path, "tree", "--json", "5e55", cwd=project)
    assert by_prefix.returncode == 0, by_prefix.stderr
    assert json.loads(by_prefix.stdout)["leafId"] == "m1"
    assert "another question" in run_cli(tmp_path, "tree", "5e55", cwd=project).stdout
    old = run_cli(tmp_path, "context", OLD_ID[:-2], cwd=project)
    assert old.returncode == 0 and "the old question" in old.stdout
    # --cwd names the project from anywhere
    elsewhere = run_cli(tmp_path, "context", "latest", "--cwd", str(project))
    assert "the new question" in elsewhere.stdout


def test_an_ambiguous_prefix_lists_the_candidates(tmp_path: Path) -> None:
    project, _ = project_with_sessions(tmp_path)
    result = run_cli(tmp_path, "tree", "0197b", cwd=project)
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr.startswith("pi-lsp: error: '0197b' starts 2 session ids; give more of one:")
    assert NEW_ID in result.stderr and OLD_ID in result.stderr and OTHER_ID not in result.stderr
    assert "the new question" in result.stderr  # each candidate says which conversation it is


def test_no_match_differs_from_no_sessions(tmp_path: Path) -> None:
    project, _ = project_with_sessions(tmp_path)
    unknown = run_cli(tmp_path, "context", "zzz", cwd=project)
    assert unknown.returncode == 1
    assert "no file named 'zzz' and no session of" in unknown.stderr and "3 sessions" in unknown.stderr
    empty = tmp_path / "empty-project"
    empty.mkdir()
    nothing = run_cli(tmp_path, "tree", "latest", cwd=empty)
    assert nothing.returncode == 1 and f"no sessions of {empty}" in nothing.stderr

    listed = run_cli(tmp_path, "sessions", "zebra", cwd=project)
    assert listed.returncode == 0 and listed.stdout.startswith("no match for 'zebra' among 3 sessions of")
    none = run_cli(tmp_path, "sessions", cwd=empty)
    assert none.returncode == 0 and none.stdout.startswith(f"no sessions of {empty}")
    assert "no match" not in none.stdout


def test_a_file_argument_still_wins(tmp_path: Path) -> None:
    project, files = project_with_sessions(tmp_path)
    named_latest = project / "latest"
    named_latest.write_bytes(files["old"].read_bytes())  # a file called "latest" is that file
    result = run_cli(tmp_path, "context", "latest", cwd=project)
    assert result.returncode == 0 and "the old question" in result.stdout


def _read_until(fd: int, needle: bytes, timeout: float) -> bytes:
    seen = b""
    deadline = time.monotonic() + timeout
    while needle not in seen and time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.2)
        if ready:
            chunk = os.read(fd, 4096)
            if not chunk:
                break
            seen += chunk
    return seen


def test_bare_pi_lsp_on_a_terminal_says_what_it_is(tmp_path: Path) -> None:
    leader, follower = pty.openpty()
    process = subprocess.Popen(
        SERVER,
        stdin=follower,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=server_env(tmp_path / "agent"),
        cwd=tmp_path,
    )
    os.close(follower)
    try:
        assert process.stderr is not None
        said = _read_until(process.stderr.fileno(), b"--help", 30)
        assert b"Language Server Protocol on stdin/stdout" in said and b"pi-lsp --help" in said
        assert process.poll() is None  # and then it serves
    finally:
        process.kill()
        process.wait(timeout=10)
        os.close(leader)
        if process.stderr is not None:
            process.stderr.close()


def test_no_note_when_an_editor_starts_it(tmp_path: Path) -> None:
    result = subprocess.run(
        SERVER, stdin=subprocess.DEVNULL, capture_output=True, env=server_env(tmp_path / "agent"), timeout=60
    )
    assert b"Language Server Protocol on stdin/stdout" not in result.stderr


async def test_stdio_flag_is_accepted(tmp_path: Path) -> None:
    """vscode-languageclient's stdio transport appends ``--stdio`` to the server command."""
    client = await RpcClient.start([*SERVER, "--stdio"], env=server_env(tmp_path / "agent"), quiet=True)
    try:
        info = await client.initialize(str(tmp_path))
        assert info["serverInfo"]["name"] == "pi-lsp"
        assert (await client.request("pi/listSessions", {"cwd": str(tmp_path)}))["sessions"] == []
    finally:
        await client.close()
    conflicting = run_cli(tmp_path, "--stdio", "--tcp", "127.0.0.1:0")
    assert conflicting.returncode == 2 and "not allowed with" in conflicting.stderr
