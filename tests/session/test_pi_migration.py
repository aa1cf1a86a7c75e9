"""pi's migrations of old session files (behaviours 44–45).

The numbers are session spec §6's (pi's own session-manager tests); the rules for where pi's
versions or ours differ are in ``test_pi_build_context.py``.
"""

from __future__ import annotations

import re
from pathlib import Path

from pi_lsp.session import (
    SessionManager,
    migrate_entries,
)
from tests.session.helpers import (
    assistant_msg,
    read_objects,
    user_msg,
    write_jsonl,
)

# ---------------------------------------------------------------------------------------------
# migration.test.ts


def test_44_adds_ids_to_v1_entries() -> None:
    entries = [
        {"type": "session", "id": "sess-1", "timestamp": TS_V1, "cwd": "/tmp"},
        {"type": "message", "timestamp": TS_V1, "message": {"role": "user", "content": "hi", "timestamp": 1}},
        {
            "type": "message",
            "timestamp": TS_V1,
            "message": {"role": "assistant", "content": [], "timestamp": 2},
        },
    ]
    assert migrate_entries(entries) == 1
    assert entries[0]["version"] == 3
    assert re.fullmatch(r"[0-9a-f]{8}", entries[1]["id"]) and re.fullmatch(r"[0-9a-f]{8}", entries[2]["id"])
    assert entries[1]["parentId"] is None
    assert entries[2]["parentId"] == entries[1]["id"]
    assert list(entries[1])[-2:] == ["id", "parentId"]


TS_V1 = "2025-01-01T00:00:00Z"


def test_44b_v1_compaction_index_becomes_id_and_hook_message_is_renamed() -> None:
    entries = [
        {"type": "session", "id": "s", "timestamp": TS_V1, "cwd": "/tmp"},
        {"type": "message", "timestamp": TS_V1, "message": {"role": "user", "content": "a", "timestamp": 1}},
        {
            "type": "message",
            "timestamp": TS_V1,
            "message": {
                "role": "hookMessage",
                "customType": "x",
                "content": "h",
                "display": True,
                "timestamp": 2,
            },
        },
        {
            "type": "compaction",
            "timestamp": TS_V1,
            "summary": "s",
            "firstKeptEntryIndex": 2,
            "tokensBefore": 5,
        },
    ]
    migrate_entries(entries)
    assert entries[3]["firstKeptEntryId"] == entries[2]["id"]
    assert "firstKeptEntryIndex" not in entries[3]
    assert entries[2]["message"]["role"] == "custom"


def test_45_migration_is_idempotent_for_v2() -> None:
    entries = [
        {"type": "session", "version": 2, "id": "sess-1", "timestamp": TS_V1, "cwd": "/tmp"},
        {
            "type": "message",
            "id": "abc12345",
            "parentId": None,
            "timestamp": TS_V1,
            "message": {"role": "user", "content": "hi", "timestamp": 1},
        },
        {
            "type": "message",
            "id": "def67890",
            "parentId": "abc12345",
            "timestamp": TS_V1,
            "message": {"role": "assistant", "content": [], "timestamp": 2},
        },
    ]
    migrate_entries(entries)
    assert [(e.get("id"), e.get("parentId")) for e in entries[1:]] == [
        ("abc12345", None),
        ("def67890", "abc12345"),
    ]
    assert entries[0]["version"] == 3
    before = [dict(e) for e in entries]
    assert migrate_entries(entries) == 3
    assert entries == before


def test_44c_open_migrates_v1_file(session_dir: Path) -> None:
    path = write_jsonl(
        session_dir / "v1.jsonl",
        [
            {
                "type": "session",
                "id": "sess-1",
                "timestamp": TS_V1,
                "cwd": "/tmp",
                "branchedFrom": "/x.jsonl",
            },
            {"type": "message", "timestamp": TS_V1, "message": user_msg("hi", 1)},
            {"type": "message", "timestamp": TS_V1, "message": assistant_msg("yo", timestamp=2)},
        ],
    )
    manager = SessionManager.open(path)
    objects = read_objects(path)
    assert objects[0] == {
        "type": "session",
        "id": "sess-1",
        "timestamp": TS_V1,
        "cwd": "/tmp",
        "branchedFrom": "/x.jsonl",
        "version": 3,
    }
    assert [o["id"] for o in objects[1:]] == [e["id"] for e in manager.get_entries()]
    assert objects[2]["parentId"] == objects[1]["id"]
    assert manager.leaf_id == objects[2]["id"]
    assert manager.parent_session is None  # branchedFrom is kept verbatim, not renamed (as pi)
