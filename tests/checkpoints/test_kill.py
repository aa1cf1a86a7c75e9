"""kill -9 in the middle of a snapshot and of a restore: a real process running the engine is
killed (its whole process group, git included) at varied moments, several times. Each time the
store stays usable (the next snapshot and restore work, ``git fsck`` is clean), every workspace file
is whole (its old bytes or its new ones, never a mix), and no temp file is left in the workspace or
captured by the next snapshot."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from pi_lsp.checkpoints import restore as restores
from pi_lsp.checkpoints.snapshot import Limits, capture
from pi_lsp.checkpoints.store import WorkspaceStore

ROOT = Path(__file__).resolve().parents[2]
FILES = 300
TRIES = 30  # at most; each test stops once it has killed in the middle often enough (about 1 in 4)
WANTED_HITS = 2

SNAPSHOTS = f"""
import os, sys
from pathlib import Path
from pi_lsp.checkpoints.snapshot import Limits, capture
from pi_lsp.checkpoints.store import WorkspaceStore
cwd, agent = sys.argv[1], sys.argv[2]
store = WorkspaceStore(cwd, Path(agent))
round = 0
while True:
    round += 1
    for number in range({FILES}):  # every file changes: a long update-index
        Path(cwd, f"f{{number:04}}.txt").write_text(f"{{os.getpid()}} {{round}} {{number}}\\n" * 50)
    print("capturing", flush=True)
    capture(store, Limits())
"""

RESTORES = """
import sys
from pathlib import Path
from pi_lsp.checkpoints import restore as restores
from pi_lsp.checkpoints.store import WorkspaceStore
cwd, agent, one, two = sys.argv[1:5]
store = WorkspaceStore(cwd, Path(agent))
current, target = one, two
while True:
    print("restoring", flush=True)
    restores.apply(store, restores.plan_restore(store, current, target), force=True)
    current, target = target, current
"""


def content(number: int, side: str) -> bytes:
    return f"{side} {number}\n".encode() * 40


def kill_after(code: str, args: list[str], delay: float) -> None:
    """Start ``code`` in its own process group, wait for its first line, let it work ``delay``
    seconds, then SIGKILL the whole group (git children included)."""
    child = subprocess.Popen(
        [sys.executable, "-c", code, *args],
        stdout=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        start_new_session=True,
    )
    assert child.stdout is not None
    child.stdout.readline()
    time.sleep(delay)
    os.killpg(child.pid, signal.SIGKILL)
    child.wait()
    child.stdout.close()


def temp_files(cwd: Path) -> list[str]:
    return sorted(name for name in os.listdir(cwd) if name.endswith(".tmp"))


def test_kill_9_during_snapshots_leaves_the_store_usable(tmp_path: Path) -> None:
    cwd = tmp_path / "ws"
    cwd.mkdir()
    for number in range(FILES):
        (cwd / f"f{number:04}.txt").write_bytes(content(number, "start"))
    hits = 0
    for attempt in range(TRIES):
        kill_after(SNAPSHOTS, [str(cwd), str(tmp_path / "agent")], 0.02 + (0.037 * attempt) % 0.23)
        store = WorkspaceStore(str(cwd), tmp_path / "agent")
        hits += (store.index.parent / "index.lock").exists()  # killed inside git's index update
        tree = capture(store, Limits())  # the next snapshot works
        (cwd / "f0001.txt").write_bytes(b"after the kill\n")
        later = capture(store, Limits())
        assert [change.path for change in store.diff(tree, later)] == ["f0001.txt"]
        assert len(store.diff(None, later)) == FILES
        store.git(["fsck", "--no-progress", "--no-dangling"])
        result = restores.apply(store, restores.plan_restore(store, later, tree), force=False)
        assert result["restored"] == [{"path": "f0001.txt", "change": "modify"}]
        if hits >= WANTED_HITS:
            break
    assert hits >= 1, "no kill landed inside git's index update"


def test_kill_9_during_restores_leaves_whole_files_and_a_usable_store(tmp_path: Path) -> None:
    cwd = tmp_path / "ws"
    cwd.mkdir()
    for number in range(FILES):
        (cwd / f"f{number:04}.txt").write_bytes(content(number, "one"))
    store = WorkspaceStore(str(cwd), tmp_path / "agent")
    one = capture(store, Limits())
    for number in range(FILES):
        (cwd / f"f{number:04}.txt").write_bytes(content(number, "two"))
    two = capture(store, Limits())
    hits = 0
    for attempt in range(TRIES):
        kill_after(RESTORES, [str(cwd), str(tmp_path / "agent"), two, one], 0.1 + 0.13 * attempt % 1.2)
        sides = set()
        for number in range(FILES):
            data = (cwd / f"f{number:04}.txt").read_bytes()
            assert data in (content(number, "one"), content(number, "two")), f"f{number:04}.txt is torn"
            sides.add(data.split()[0])
        hits += len(sides) == 2 or bool(temp_files(cwd))  # killed while writing
        store = WorkspaceStore(str(cwd), tmp_path / "agent")
        now = capture(store, Limits())  # recovers: the temp files of the killed restore go
        assert temp_files(cwd) == []
        assert not any(change.path.endswith(".tmp") for change in store.diff(None, now))
        store.git(["fsck", "--no-progress", "--no-dangling"])
        result = restores.apply(store, restores.plan_restore(store, now, one), force=False)
        assert result["conflicts"] == []
        assert all((cwd / f"f{n:04}.txt").read_bytes() == content(n, "one") for n in range(FILES))
        if result["undoId"] is not None:  # None: the kill came when every file was at "one"
            moves = restores.undo_moves(store, result["undoId"])
            undo_plan = restores.plan(store.cwd, moves, restores.read_written(store))
            undone = restores.apply(store, undo_plan, force=False, record_undo=False)
            assert undone["conflicts"] == []
        assert capture(store, Limits()) == now  # the undo put the killed state back, file by file
        if hits >= WANTED_HITS:
            break
    assert hits >= 1, "no kill landed while files were being written"


ONE_RESTORE = """
import sys
from pathlib import Path
from pi_lsp.checkpoints import restore as restores
from pi_lsp.checkpoints.store import WorkspaceStore
cwd, agent, current, target = sys.argv[1:5]
store = WorkspaceStore(cwd, Path(agent))
planned = restores.plan_restore(store, current, target)
print("restoring", flush=True)
restores.apply(store, planned, force=False)
print("done", flush=True)
"""


def test_a_restore_killed_halfway_makes_no_false_conflicts_from_either_state(tmp_path: Path) -> None:
    """``pi/navigate`` with ``restoreFiles`` moves the leaf, then restores; killed halfway, the next
    restore starts from the new leaf's state while some files still hold the old one: those are
    the server's own doing, not conflicts."""
    cwd = tmp_path / "ws"
    cwd.mkdir()
    store = WorkspaceStore(str(cwd), tmp_path / "agent")
    states = {}
    for side in ("one", "three", "two"):
        for number in range(FILES):
            (cwd / f"f{number:04}.txt").write_bytes(content(number, side))
        states[side] = capture(store, Limits())
    for attempt in range(TRIES):
        kill_after(
            ONE_RESTORE, [str(cwd), str(tmp_path / "agent"), states["two"], states["one"]], 0.01 * attempt
        )
        sides = {(cwd / f"f{number:04}.txt").read_bytes().split()[0] for number in range(FILES)}
        store = WorkspaceStore(str(cwd), tmp_path / "agent")
        if sides == {b"one", b"two"}:
            # the leaf is at "one" now: every file, at "one" or still at "two", is the server's
            result = restores.apply(
                store, restores.plan_restore(store, states["one"], states["three"]), force=False
            )
            assert result["conflicts"] == []
            assert all((cwd / f"f{n:04}.txt").read_bytes() == content(n, "three") for n in range(FILES))
            return
        restores.apply(store, restores.plan_restore(store, states["one"], states["two"]), force=False)
        assert {(cwd / f"f{n:04}.txt").read_bytes().split()[0] for n in range(FILES)} == {b"two"}
    raise AssertionError("no kill landed among the file writes")


CREATIONS = """
import sys
from pathlib import Path
from pi_lsp.checkpoints.store import WorkspaceStore
cwd, agents = sys.argv[1], Path(sys.argv[2])
print("creating", flush=True)
number = 0
while True:
    with WorkspaceStore(cwd, agents / str(number)).locked():
        number += 1
"""


def test_kill_9_while_stores_are_created_leaves_each_whole_or_absent(tmp_path: Path) -> None:
    """A store is created (``git init``, our config) at a workspace's first snapshot: a kill then
    leaves no half store that every later snapshot would fail on."""
    cwd = tmp_path / "ws"
    cwd.mkdir()
    (cwd / "a.txt").write_text("a\n")
    for attempt in range(3):
        agents = tmp_path / f"agents{attempt}"
        kill_after(CREATIONS, [str(cwd), str(agents)], 0.3 + 0.2 * attempt)
        created = sorted(agents.iterdir(), key=lambda path: int(path.name))
        assert len(created) > 2
        for agent in created:
            store = WorkspaceStore(str(cwd), agent)
            tree = capture(store, Limits())
            assert [change.path for change in store.diff(None, tree)] == ["a.txt"]
            assert store.git(["config", "core.bare"]).strip() == b"false"
