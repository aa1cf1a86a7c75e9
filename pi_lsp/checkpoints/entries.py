"""Checkpoints in a session's tree: the ``custom`` entry that links a snapshot, and the state of an
entry (the snapshot of the nearest checkpoint on the path from the root to it).

pi skips ``custom`` entries when it builds the context, so these entries change nothing pi reads.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pi_lsp.checkpoints.store import Change
from pi_lsp.session.records import EntryRecord

CUSTOM_TYPE = "pi-lsp/checkpoint"


def checkpoint_entry(snapshot: str, changes: Sequence[Change]) -> dict[str, Any]:
    """The entry to append (the session assigns id, parentId and timestamp)."""
    files = [{"path": change.path, "change": change.kind} for change in changes]
    return {"type": "custom", "customType": CUSTOM_TYPE, "data": {"snapshot": snapshot, "files": files}}


def snapshot_of(record: EntryRecord) -> str | None:
    """The snapshot a record links, when it is a checkpoint entry."""
    if record.type != "custom":
        return None
    entry = record.entry()
    if entry.get("customType") != CUSTOM_TYPE:
        return None
    data = entry.get("data")
    snapshot = data.get("snapshot") if isinstance(data, dict) else None
    return snapshot if isinstance(snapshot, str) and _is_object_id(snapshot) else None


def state_on_path(path: Sequence[EntryRecord]) -> str | None:
    """The snapshot of the last checkpoint entry on ``path`` (root first), or None."""
    for record in reversed(path):
        snapshot = snapshot_of(record)
        if snapshot is not None:
            return snapshot
    return None


def snapshots_in_line(line: bytes) -> str | None:
    """The snapshot of one raw session line, for scans over files (``gc``)."""
    if CUSTOM_TYPE.encode() not in line:
        return None
    import json

    try:
        entry = json.loads(line)
    except ValueError:
        return None
    if not isinstance(entry, dict) or entry.get("type") != "custom" or entry.get("customType") != CUSTOM_TYPE:
        return None
    data = entry.get("data")
    snapshot = data.get("snapshot") if isinstance(data, dict) else None
    return snapshot if isinstance(snapshot, str) and _is_object_id(snapshot) else None


def _is_object_id(value: str) -> bool:
    return len(value) in (40, 64) and all(c in "0123456789abcdef" for c in value)
