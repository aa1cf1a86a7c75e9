"""Crash safety and concurrent writers, with real processes.

(a) A child process appends entries and prints each id after ``append_*`` returned; the parent
    kills it with SIGKILL at random moments, several rounds on one file. Every acknowledged id must
    be in the file, the file must load (ours and pi's), and the next append must start on a fresh
    line even after a torn write. A torn write is also made by hand.
(b) Two processes append hundreds of entries to one file at the same time: nothing is lost or
    interleaved, ids are unique, and each manager's ``refresh()`` returns exactly the other's ids.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from itertools import pairwise
from pathlib import Path
from typing import IO, Any

import orjson
import pytest

from pi_lsp.session import SessionManager
from tests.oracle import REPO_ROOT, PiOracle, optional_checks_run
from tests.session.helpers import assistant_msg, user_msg

CHILD_APPEND = r"""
import random, sys
from pi_lsp.session import SessionManager

path, seed = sys.argv[1], int(sys.argv[2])
rng = random.Random(seed)
manager = SessionManager.open(path)
sys.stdout.write("ready\n"); sys.stdout.flush()
i = 0
while True:
    size = rng.choice([10, 100, 5000, 200_000, 1_000_000])
    kind = rng.random()
    text = f"{seed}-{i} " + "x" * size
    if kind < 0.6:
        entry_id = manager.append_message({"role": "user", "content": text, "timestamp": i})
    elif kind < 0.8:
        entry_id = manager.append_custom_entry("blob", {"text": text})
    else:
        entry_id = manager.append_custom_message_entry("note", text, True)
    sys.stdout.write(entry_id + "\n"); sys.stdout.flush()
    i += 1
"""

CHILD_CONCURRENT = r"""
import json, random, sys, time
from pi_lsp.session import SessionManager

path, seed, count, other = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
rng = random.Random(seed)
manager = SessionManager.open(path)
sys.stdout.write("ready\n"); sys.stdout.flush()
assert sys.stdin.readline().strip() == "go"
ids = []
for i in range(count):
    if i == count // 3:  # wait for the other writer, so the two really overlap however fast we are
        deadline = time.monotonic() + 30
        while f'"p{other}-'.encode() not in open(path, "rb").read() and time.monotonic() < deadline:
            time.sleep(0.001)
    size = rng.choice([1, 50, 500, 5000, 70_000])
    text = f"p{seed}-{i} " + "y" * size
    ids.append(manager.append_message({"role": "user", "content": text, "timestamp": i}))
sys.stdout.write(json.dumps({"ids": ids}) + "\n"); sys.stdout.flush()
assert sys.stdin.readline().strip() == "refresh"
new = manager.refresh()
entries = manager.get_entries()
sys.stdout.write(json.dumps({"refreshed": new, "total": len(entries), "leaf": manager.leaf_id,
                             "unique": len({e["id"] for e in entries})}) + "\n")
sys.stdout.flush()
"""


def _spawn(code: str, *args: str) -> subprocess.Popen[bytes]:
    env = dict(os.environ, PYTHONPATH=str(REPO_ROOT))
    return subprocess.Popen(
        [sys.executable, "-c", code, *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        cwd=REPO_ROOT,
    )


def _readline(stream: IO[bytes] | None) -> bytes:
    assert stream is not None
    return stream.readline()


def _new_session_file(directory: Path) -> Path:
    manager = SessionManager.create("/proj/crash", directory)
    manager.append_message(user_msg("start"))
    manager.append_message(assistant_msg("ok"))
    assert manager.session_file is not None
    return Path(manager.session_file)


def _lines(path: Path) -> list[bytes]:
    data = path.read_bytes()
    return data.split(b"\n")


def _parsed_ids(path: Path) -> tuple[list[str], int]:
    """Ids of the valid entry lines and the number of malformed (torn) lines."""
    ids: list[str] = []
    torn = 0
    for line in _lines(path):
        if not line.strip():
            continue
        try:
            obj = orjson.loads(line)
        except orjson.JSONDecodeError:
            torn += 1
            continue
        if obj.get("type") != "session":
            ids.append(obj["id"])
    return ids, torn


@pytest.mark.slow
def test_sigkill_during_appends_loses_no_acknowledged_entry(
    session_dir: Path, request: pytest.FixtureRequest
) -> None:
    path = _new_session_file(session_dir)
    rng = random.Random(20260)
    acknowledged: list[str] = []
    kills = 0
    for round_number in range(5):
        child = _spawn(CHILD_APPEND, str(path), str(round_number))
        ready = _readline(child.stdout)
        assert ready == b"ready\n", (ready, child.stderr.read() if child.stderr else b"")
        for _ in range(rng.randrange(1, 15)):
            line = _readline(child.stdout)
            assert line, child.stderr.read() if child.stderr else b""
            acknowledged.append(line.decode().strip())
        time.sleep(rng.random() * 0.004)
        child.send_signal(signal.SIGKILL)
        kills += 1  # noqa: SIM113 (counted where the kill happens)
        rest, _ = child.communicate(timeout=30)
        acknowledged.extend(line for line in rest.decode().split("\n") if line)
        assert child.returncode == -signal.SIGKILL

        # after every crash: all acknowledged ids are there, the file opens, nothing else is broken
        ids, torn = _parsed_ids(path)
        assert set(acknowledged) <= set(ids)
        assert len(ids) == len(set(ids))
        assert torn <= kills
        manager = SessionManager.open(path)
        assert set(acknowledged) <= {e["id"] for e in manager.get_entries()}

    # a torn last line written by hand, then an append through the manager
    with path.open("ab") as handle:
        if not path.read_bytes().endswith(b"\n"):  # the last kill may have torn a line already
            handle.write(b"\n")
        handle.write(b'{"type":"message","id":"torn0001","parentId":null,"timestamp":"2026-01-')
    manager = SessionManager.open(path)
    torn_line = len(_lines(path))
    assert any(d.get("line") == torn_line and d["severity"] == "warning" for d in manager.diagnostics)
    new_id = manager.append_message(user_msg("after the torn line"))
    lines = _lines(path)
    assert lines[-1] == b""
    assert lines[-3].startswith(b'{"type":"message","id":"torn0001"') and not lines[-3].endswith(b"}")
    assert orjson.loads(lines[-2])["id"] == new_id
    reopened = SessionManager.open(path)
    assert reopened.leaf_id == new_id
    assert any(d.get("line") == torn_line for d in reopened.diagnostics)
    ids, _ = _parsed_ids(path)
    assert [e["id"] for e in reopened.get_entries()] == ids

    # pi reads the same file (malformed lines skipped) to the same entries and context
    if not optional_checks_run():
        return  # the crash checks above do not need the oracle
    pi_oracle: PiOracle = request.getfixturevalue("pi_oracle")
    pi = pi_oracle.result("load", path=str(path), treeFormat="none")
    assert [e["id"] for e in pi["entries"]] == ids
    assert pi["leafId"] == new_id
    assert pi["context"] == reopened.build_session_context()


def test_torn_complete_json_without_newline_is_kept_and_terminated(session_dir: Path) -> None:
    """A crash can cut a line right before its newline: the entry is valid and kept."""
    path = _new_session_file(session_dir)
    entry = {
        "type": "custom",
        "customType": "x",
        "id": "nolf0001",
        "parentId": None,
        "timestamp": "2026-01-01T00:00:00Z",
    }
    with path.open("ab") as handle:
        handle.write(orjson.dumps(entry))
    manager = SessionManager.open(path)
    assert manager.leaf_id == "nolf0001"
    assert any(d["severity"] == "info" for d in manager.diagnostics)
    new_id = manager.append_message(user_msg("next"))
    lines = _lines(path)
    assert orjson.loads(lines[-3])["id"] == "nolf0001"
    assert orjson.loads(lines[-2])["parentId"] == "nolf0001" and orjson.loads(lines[-2])["id"] == new_id


def test_append_after_torn_line_written_by_another_process_meanwhile(session_dir: Path) -> None:
    """Our manager is open while someone else leaves a torn line: our append isolates it."""
    path = _new_session_file(session_dir)
    manager = SessionManager.open(path)
    with path.open("ab") as handle:
        handle.write(b'{"type":"message","id":"half"')
    new_id = manager.append_message(user_msg("mine"))
    lines = _lines(path)
    assert lines[-3] == b'{"type":"message","id":"half"'
    assert orjson.loads(lines[-2])["id"] == new_id
    assert manager.refresh() == []
    assert [d for d in manager.diagnostics if d["severity"] == "warning"]
    assert SessionManager.open(path).leaf_id == new_id


@pytest.mark.slow
def test_two_processes_append_concurrently(session_dir: Path) -> None:
    path = _new_session_file(session_dir)
    initial, _ = _parsed_ids(path)
    count = 300
    children = [
        _spawn(CHILD_CONCURRENT, str(path), str(seed), str(count), str(other))
        for seed, other in ((1, 2), (2, 1))
    ]
    for child in children:
        assert _readline(child.stdout) == b"ready\n", child.stderr.read() if child.stderr else b""
    for child in children:
        assert child.stdin is not None
        child.stdin.write(b"go\n")
        child.stdin.flush()
    appended: list[list[str]] = []
    for child in children:
        line = _readline(child.stdout)
        assert line, child.stderr.read() if child.stderr else b""
        appended.append(orjson.loads(line)["ids"])

    data = path.read_bytes()
    assert data.endswith(b"\n")
    objects: list[dict[str, Any]] = [
        orjson.loads(line) for line in data.split(b"\n") if line
    ]  # all valid JSON
    ids = [o["id"] for o in objects[1:]]
    assert [o["type"] for o in objects].count("session") == 1
    assert len(ids) == len(set(ids)) == len(initial) + 2 * count
    assert set(appended[0]) | set(appended[1]) | set(initial) == set(ids)
    # each writer's entries stay in its own order and chain
    by_id = {o["id"]: o for o in objects[1:]}
    for mine in appended:
        assert [i for i in ids if i in set(mine)] == mine
        assert all(by_id[b]["parentId"] == a for a, b in pairwise(mine))
    interleaved = sum(1 for a, b in pairwise(ids) if (a in appended[0]) != (b in appended[0]))
    assert interleaved > 1  # the two writers really overlapped

    reports = []
    for child in children:
        assert child.stdin is not None
        child.stdin.write(b"refresh\n")
        child.stdin.flush()
        reports.append(orjson.loads(_readline(child.stdout)))
        child.wait(timeout=30)
        assert child.returncode == 0, child.stderr.read() if child.stderr else b""
    for index, report in enumerate(reports):
        other = appended[1 - index]
        assert report["refreshed"] == other  # exactly the other's ids, in file order
        assert report["total"] == report["unique"] == len(ids)
        assert report["leaf"] == appended[index][-1]  # the leaf does not jump to the other branch
    reopened = SessionManager.open(path)
    assert [e["id"] for e in reopened.get_entries()] == ids
    assert reopened.diagnostics == []


def test_refresh_picks_up_external_appends_and_follows_the_leaf(session_dir: Path) -> None:
    path = _new_session_file(session_dir)
    ours = SessionManager.open(path)
    theirs = SessionManager.open(path)
    a = theirs.append_message(user_msg("from them"))
    b = theirs.append_message(assistant_msg("reply"))
    assert ours.refresh() == [a, b]
    assert ours.leaf_id == b  # continued from our leaf, so the leaf follows
    assert ours.refresh() == []
    mine = ours.append_message(user_msg("mine"))
    assert theirs.refresh() == [mine]
    assert theirs.leaf_id == mine
    # an entry that does not continue from the leaf does not move it
    theirs.branch(a)
    side = theirs.append_message(user_msg("side branch"))
    assert ours.refresh() == [side]
    assert ours.leaf_id == mine
    assert ours.build_session_context()["messages"][-1]["content"] == "mine"
    # a file replaced on disk (e.g. rewritten by a migration elsewhere) is reloaded whole
    data = path.read_bytes()
    replacement = path.with_suffix(".tmp")
    replacement.write_bytes(
        data
        + orjson.dumps(
            {
                "type": "custom",
                "customType": "x",
                "id": "ext00001",
                "parentId": side,
                "timestamp": "2026-01-01T00:00:00Z",
            }
        )
        + b"\n"
    )
    os.replace(replacement, path)
    assert ours.refresh() == ["ext00001"]
    assert ours.leaf_id == mine


NOATIME = pytest.mark.skipif(not hasattr(os, "O_NOATIME"), reason="O_NOATIME is Linux's")


@NOATIME
def test_appends_leave_the_access_time_alone(session_dir: Path) -> None:
    """The header check of each append reads the file; that read must not update the access time
    (with ``relatime`` it would, after every write, and dirty the inode once more per append)."""
    manager = SessionManager.create("/proj", session_dir)
    manager.append_message(user_msg("q", 1))
    manager.append_message(assistant_msg("a", timestamp=2))
    path = Path(manager.session_file or "")
    os.utime(path, ns=(1_000_000_000, time.time_ns()))  # an access time older than the last write
    for number in range(3):
        manager.append_message(user_msg(f"more {number}", 3 + number))
    assert path.stat().st_atime_ns == 1_000_000_000


@NOATIME
def test_appends_work_where_the_kernel_refuses_o_noatime(
    session_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only a file's owner may open it with O_NOATIME; anyone else gets it opened as usual."""
    from pi_lsp.session import writer

    real_open = os.open
    refused: list[str] = []

    def owner_only(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        if flags & writer._NOATIME:
            refused.append(str(path))
            raise PermissionError(1, "Operation not permitted", str(path))
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(writer.os, "open", owner_only)
    manager = SessionManager.create("/proj", session_dir)
    manager.append_message(user_msg("q", 1))
    manager.append_message(assistant_msg("a", timestamp=2))
    manager.append_message(user_msg("again", 3))
    path = Path(manager.session_file or "")
    assert refused == [str(path)]
    assert [entry["message"]["timestamp"] for entry in SessionManager.open(path).get_entries()] == [1, 2, 3]
