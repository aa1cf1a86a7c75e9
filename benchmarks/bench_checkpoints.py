"""Checkpoint benchmarks: the engine (``pi_lsp.checkpoints``) on a generated workspace.

* **Snapshot after a tool batch**: a workspace of ``--files`` files (nested folders, 1–4 KB of
  text each) already captured once; each round changes ``--changed`` files, then times
  :func:`capture` (git's stat cache finds them; the target is p50 < 100 ms at 10,000 files).
  Printed beside the floor: ``git add -A && git write-tree`` in a throwaway repository of the same
  files after the same changes.
* **Restore**: writing 10 and 1,000 changed files back (plan + apply: disk hashes, undo saved,
  atomic writes).
* **Store growth over a long session**: this repository's files (``git ls-files``) copied into a
  workspace, then ``--turns`` turns (500) each editing a few files (a line changed in three
  source files, a new file every tenth turn) and snapshotting; the store's size after them, then
  after ``git gc`` (what ``pi-lsp checkpoints gc`` and the daily prune do, every snapshot kept).

Run: ``python benchmarks/bench_checkpoints.py [--files 10000] [--changed 5] [--rounds 15]``;
``--smoke`` runs a small, fast version (the test suite runs it). Everything happens in a temporary
folder; nothing touches ``~/.pi``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pi_lsp.checkpoints import restore as restores  # noqa: E402
from pi_lsp.checkpoints.gc import prune_store, size_of  # noqa: E402
from pi_lsp.checkpoints.snapshot import Limits, capture  # noqa: E402
from pi_lsp.checkpoints.store import WorkspaceStore  # noqa: E402


def make_workspace(folder: Path, count: int) -> list[Path]:
    """``count`` text files in nested folders (about 20 per folder), like a source tree."""
    files = []
    for number in range(count):
        path = folder / f"pkg{number // 400}" / f"mod{number // 20}" / f"file{number}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"# file {number}\n" + "x = 1\n" * (200 + number % 500))
        files.append(path)
    (folder / ".gitignore").write_text("__pycache__/\n*.pyc\n")
    return files


def touch(files: list[Path], round_number: int, changed: int) -> None:
    for offset in range(changed):
        path = files[(round_number * 7919 + offset * 104729) % len(files)]
        with open(path, "a") as handle:
            handle.write(f"# round {round_number}\n")


def git_floor(folder: Path) -> float:
    """``git add -A && git write-tree`` in a plain repository of the workspace: the floor."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("GIT_")}
    env.update(GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull)
    started = time.perf_counter()
    subprocess.run(["git", "add", "-A"], cwd=folder, env=env, check=True)
    subprocess.run(["git", "write-tree"], cwd=folder, env=env, check=True, capture_output=True)
    return time.perf_counter() - started


def snapshot_times(
    folder: Path, files: list[Path], changed: int, rounds: int
) -> tuple[list[float], list[float], float]:
    """(snapshot seconds per round, floor seconds per round, first capture seconds)."""
    store = WorkspaceStore(str(folder / "ws"), folder / "agent")
    started = time.perf_counter()
    capture(store, Limits())
    first = time.perf_counter() - started
    floor_copy = folder / "floor"
    shutil.copytree(folder / "ws", floor_copy, symlinks=True)
    floor_files = [floor_copy / path.relative_to(folder / "ws") for path in files]
    env = {key: value for key, value in os.environ.items() if not key.startswith("GIT_")}
    subprocess.run(["git", "init", "-q"], cwd=floor_copy, env=env, check=True)
    git_floor(floor_copy)
    ours, floor = [], []
    for number in range(rounds):
        touch(files, number, changed)
        touch(floor_files, number, changed)
        started = time.perf_counter()
        capture(store, Limits())
        ours.append(time.perf_counter() - started)
        floor.append(git_floor(floor_copy))
    return ours, floor, first


def restore_time(folder: Path, files: list[Path], count: int) -> float:
    """Seconds to restore ``count`` changed files to the previous snapshot (plan + apply)."""
    store = WorkspaceStore(str(folder / "ws"), folder / "agent")
    before = capture(store, Limits())
    for path in files[:count]:
        with open(path, "a") as handle:
            handle.write("# changed for the restore\n")
    after = capture(store, Limits())
    started = time.perf_counter()
    result = restores.apply(store, restores.plan_restore(store, after, before), force=False)
    elapsed = time.perf_counter() - started
    assert len(result["restored"]) == count and not result["conflicts"], result
    return elapsed


def store_growth(folder: Path, turns: int) -> tuple[int, int, int, int, float]:
    """(workspace bytes, store bytes after the first snapshot, after ``turns`` turns, after gc,
    median seconds per turn's snapshot) for a copy of this repository."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("GIT_")}
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, env=env, capture_output=True, check=True)
    workspace = folder / "repo"
    sources = []
    for name in filter(None, listed.stdout.decode().split("\0")):
        source = ROOT / name
        if not source.is_file() or source.is_symlink():
            continue
        target = workspace / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
        if name.endswith(".py"):
            sources.append(target)
    store = WorkspaceStore(str(workspace), folder / "growth-agent")
    trees = [capture(store, Limits())]
    first = size_of(store.folder)
    times = []
    for turn in range(turns):
        for offset in range(3):
            path = sources[(turn * 31 + offset * 97) % len(sources)]
            lines = path.read_text().splitlines(keepends=True)
            where = (turn * 13 + offset) % max(len(lines), 1)
            lines[where : where + 1] = [f"# turn {turn}: a line the agent changed\n"]
            path.write_text("".join(lines))
        if turn % 10 == 0:
            (workspace / "notes" / f"turn{turn}.md").parent.mkdir(exist_ok=True)
            (workspace / "notes" / f"turn{turn}.md").write_text(f"# notes of turn {turn}\n" * 20)
        started = time.perf_counter()
        trees.append(capture(store, Limits()))
        times.append(time.perf_counter() - started)
    grown = size_of(store.folder)
    prune_store(store, set(trees))
    return size_of(workspace), first, grown, size_of(store.folder), statistics.median(times)


def mib(count: int) -> str:
    return f"{count / 1024 / 1024:.1f} MiB"


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--changed", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--restores", type=int, nargs="+", default=[10, 1000])
    parser.add_argument("--turns", type=int, default=500, help="turns of the store-growth run (0: none)")
    parser.add_argument("--smoke", action="store_true", help="a small fast run (for the test suite)")
    args = parser.parse_args(argv)
    if args.smoke:
        args.files, args.rounds, args.restores, args.turns = 300, 3, [10, 50], 3
    with tempfile.TemporaryDirectory(prefix="pi-lsp-bench-checkpoints-") as name:
        folder = Path(name)
        (folder / "ws").mkdir()
        files = make_workspace(folder / "ws", args.files)
        ours, floor, first = snapshot_times(folder, files, args.changed, args.rounds)
        print(f"workspace: {args.files} files; first capture {ms(first)}")
        print(
            f"snapshot after a batch ({args.changed} files changed), {args.rounds} rounds:"
            f" p50 {ms(statistics.median(ours))}, max {ms(max(ours))}"
            f" | floor git add -A && git write-tree: p50 {ms(statistics.median(floor))}"
        )
        for count in args.restores:
            print(f"restore of {count} files: {ms(restore_time(folder, files, min(count, len(files))))}")
        if args.turns:
            workspace, first, grown, packed, turn = store_growth(folder, args.turns)
            print(
                f"store growth, this repository ({mib(workspace)} of files), {args.turns} turns:"
                f" {mib(first)} after the first snapshot, {mib(grown)} after the turns,"
                f" {mib(packed)} after gc (all snapshots kept); snapshot p50 {ms(turn)}"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
