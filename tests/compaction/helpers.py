"""Test helpers: load pi fixtures the way pi's own compaction tests do (parse, migrate, drop header).

The migration here follows pi's v1 → v2 → v3 rules (session spec §4) but with deterministic ids,
so fixture tests do not depend on the team's migration module or on the oracle.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from tests.oracle import FIXTURES, PI_FIXTURES

LARGE = PI_FIXTURES / "large-session.jsonl"
BEFORE = PI_FIXTURES / "before-compaction.jsonl"
BRANCHED = FIXTURES / "branched-v3.jsonl"


def parse_lines(text: str) -> list[dict[str, Any]]:
    """pi's ``parseSessionEntries``: one JSON object per line, malformed lines skipped."""
    out: list[dict[str, Any]] = []
    for line in text.split("\n"):
        if not line.strip():
            continue
        try:
            value = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue
        if isinstance(value, dict):
            out.append(value)
    return out


def migrate(objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """v1 → v2 (linear ids/parentIds, ``firstKeptEntryIndex`` → id) and v2 → v3 (hookMessage)."""
    header = next((o for o in objects if o.get("type") == "session"), None)
    version = header.get("version", 1) if header else 1
    if version < 2:
        previous: str | None = None
        for number, obj in enumerate(objects):
            if obj.get("type") == "session":
                obj["version"] = 2
                continue
            obj["id"] = f"{number:08x}"
            obj["parentId"] = previous
            previous = obj["id"]
            if obj.get("type") == "compaction" and isinstance(obj.get("firstKeptEntryIndex"), int):
                index = obj.pop("firstKeptEntryIndex")
                if 0 <= index < len(objects):
                    target = objects[index]
                    if target.get("type") != "session" and "id" in target:
                        obj["firstKeptEntryId"] = target["id"]
    if version < 3:
        for obj in objects:
            if obj.get("type") == "session":
                obj["version"] = 3
            elif obj.get("type") == "message" and obj.get("message", {}).get("role") == "hookMessage":
                obj["message"]["role"] = "custom"
    return objects


def load_entries(path: Path) -> list[dict[str, Any]]:
    """Entries of a session file: parsed, migrated, header dropped."""
    objects = migrate(parse_lines(path.read_text(encoding="utf-8")))
    return [o for o in objects if o.get("type") != "session"]
