"""``pi-lsp checkpoints gc``: what no session references goes, what one does (and undo data) stays."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

from pi_lsp.checkpoints import restore as restores
from pi_lsp.checkpoints.entries import checkpoint_entry
from pi_lsp.checkpoints.gc import KEEP_REF, collect, note_session, prune_if_due
from pi_lsp.checkpoints.snapshot import Limits, capture
from pi_lsp.checkpoints.store import WorkspaceStore
from tests.checkpoints.support import open_chat


def test_gc_keeps_referenced_snapshots_and_undo_data_and_prunes_the_rest(tmp_path: Path) -> None:
    cwd, agent = tmp_path / "ws", tmp_path / "agent"
    cwd.mkdir()
    store = WorkspaceStore(str(cwd), agent)
    trees = []
    for number in range(3):
        (cwd / "file.txt").write_text(f"version {number}\n" * 1000)
        trees.append(capture(store, Limits()))
    (cwd / "file.txt").write_text("by hand\n")
    undo = restores.apply(store, restores.plan_restore(store, trees[2], trees[1]), force=True)
    hand_blob = json.loads((store.folder / f"undo/{undo['undoId']}.json").read_text())["files"][0]["before"][
        1
    ]
    custom = tmp_path / "elsewhere" / "s.jsonl"  # a session outside pi's sessions folder
    custom.parent.mkdir()
    entry = {"id": "c1", "parentId": None, "timestamp": "t", **checkpoint_entry(trees[0], [])}
    custom.write_text(json.dumps({"type": "session", "id": "s"}) + "\n" + json.dumps(entry) + "\n")
    note_session(store, str(custom))

    [dry] = collect(agent, [], dry_run=True)
    assert dry.snapshots == 1 and dry.bytes_after == dry.bytes_before
    env = {**os.environ, "PI_CODING_AGENT_DIR": str(agent)}
    done = subprocess.run(
        [sys.executable, "-m", "pi_lsp", "checkpoints", "gc", "--json"],
        env=env,
        capture_output=True,
        check=True,
    )
    [report] = json.loads(done.stdout)["stores"]
    assert (
        report["workspace"] == str(cwd.resolve()) and report["snapshots"] == 1 and report["undo_records"] == 1
    )
    assert store.exists(trees[0]) and store.exists(hand_blob) and store.exists(trees[1])  # within the grace
    assert collect(agent, [], grace="now")[0].snapshots == 1
    assert store.exists(trees[0]) and store.exists(hand_blob)
    assert not store.exists(trees[1])  # referenced by no session: pruned
    store.git(["fsck", "--no-progress", "--connectivity-only"])


def test_a_gc_keeps_what_the_next_snapshot_builds_on(tmp_path: Path) -> None:
    """The store's index is the stat cache of the next snapshot: the files it names must survive a
    gc even when no session references any snapshot (a deleted session). git's gc counts the index
    (ours, by ``GIT_INDEX_FILE``) as a root: this guards that."""
    cwd, agent = tmp_path / "ws", tmp_path / "agent"
    cwd.mkdir()
    (cwd / "a.txt").write_text("a\n")
    (cwd / "kept.txt").write_text("unchanged\n")
    store = WorkspaceStore(str(cwd), agent)
    capture(store, Limits())
    [report] = collect(agent, [], grace="now")
    assert report.snapshots == 0
    (cwd / "a.txt").write_text("a, later\n")
    tree = capture(store, Limits())
    store.git(["fsck", "--no-progress", "--no-dangling"])
    files = {change.path: change.after for change in store.diff(None, tree)}
    assert set(files) == {"a.txt", "kept.txt"}
    assert store.read_blobs([files["kept.txt"][1]]) == {files["kept.txt"][1]: b"unchanged\n"}  # type: ignore[index]


def test_the_automatic_prune_runs_once_per_period_and_keeps_live_snapshots(tmp_path: Path) -> None:
    cwd, agent = tmp_path / "ws", tmp_path / "agent"
    cwd.mkdir()
    store = WorkspaceStore(str(cwd), agent)
    trees = []
    for number in range(3):
        (cwd / "file.txt").write_text(f"version {number}\n")
        trees.append(capture(store, Limits()))
    (cwd / "file.txt").write_text("now\n")
    assert prune_if_due(store, [], live=[], grace="now") is None  # a new store: the period starts
    assert store.exists(trees[1])
    os.utime(store.folder / "pruned", (0, 0))
    report = prune_if_due(store, [], live=[trees[0]], grace="now")
    assert report is not None and report.snapshots == 1
    assert store.exists(trees[0]) and not store.exists(trees[1])
    assert store.exists(trees[2])  # the index's state: the next snapshot builds on it
    assert prune_if_due(store, [], live=[], grace="now") is None  # not again within the period
    assert store.exists(trees[0])
    os.utime(store.folder / "pruned", (0, 0))
    assert prune_if_due(store, [], live=[], grace="now") is not None
    assert not store.exists(trees[0])
    store.git(["fsck", "--no-progress", "--no-dangling"])


async def test_the_server_prunes_a_due_store_and_keeps_its_unwritten_sessions_snapshots() -> None:
    """A store last pruned long ago is pruned at the server's first snapshot of it, in the
    background; a snapshot linked into a session whose file is not written yet (no reply so far)
    is kept."""
    async for chat in open_chat([], {"a.txt": "a\n"}):
        store = WorkspaceStore(str(chat.ws.cwd), chat.ws.agent_dir)
        store.folder.mkdir(parents=True)
        (store.folder / "pruned").touch()
        os.utime(store.folder / "pruned", (0, 0))
        await chat.request("pi/bash", command="printf 1 > b.txt")
        [checkpoint] = await chat.checkpoints()
        assert chat.ws.session_files() == []  # pi writes the file with the first reply
        for _ in range(200):
            if (store.folder / "pruned").stat().st_mtime > 0 and store.git(["for-each-ref"]):
                break
            await asyncio.sleep(0.05)
        kept = store.git(["ls-tree", KEEP_REF]).decode()
        assert f"t{checkpoint['data']['snapshot']}" in kept
