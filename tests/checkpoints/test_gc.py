"""``pi-lsp checkpoints gc``: what no session references goes, what one does (and undo data) stays."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from pi_lsp.checkpoints import restore as restores
from pi_lsp.checkpoints.entries import checkpoint_entry
from pi_lsp.checkpoints.gc import collect, note_session
from pi_lsp.checkpoints.snapshot import Limits, capture
from pi_lsp.checkpoints.store import WorkspaceStore


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
