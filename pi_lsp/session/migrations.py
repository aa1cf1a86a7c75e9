"""Format migrations v1 → v2 → v3, equal in effect to pi's ``migrateSessionEntries``.

Differences from pi that are deliberate fixes: v1 ids are collision-checked, and a v1 compaction
whose ``firstKeptEntryIndex`` points forward still gets its ``firstKeptEntryId`` (pi leaves it out;
the built context is the same either way because kept entries are only looked for before it).
"""

from __future__ import annotations

from collections.abc import MutableSequence
from typing import Any

from pi_lsp.session.ids import new_entry_id

CURRENT_SESSION_VERSION = 3
JsonObject = dict[str, Any]


def header_version(header: JsonObject) -> int | float:
    """pi's ``header.version ?? 1`` as a number: ``3.0`` and ``"3"`` count as 3, like JS's ``>=``.

    Values that are not numbers at all (``true``, ``"abc"``, objects) count as current: migrating
    would rebuild the tree as one chain with new ids, so we never do it on a guess.
    """
    version = header.get("version")
    if version is None:
        return 1
    if isinstance(version, bool):
        return CURRENT_SESSION_VERSION
    if isinstance(version, int | float):
        return version
    if isinstance(version, str):
        try:
            return float(version)
        except ValueError:
            return CURRENT_SESSION_VERSION
    return CURRENT_SESSION_VERSION


def detect_version(objects: MutableSequence[JsonObject]) -> int | float:
    """``version`` of the first header object; 1 when absent or when there is no header."""
    for obj in objects:
        if obj.get("type") == "session":
            return header_version(obj)
    return 1


def _migrate_v1_to_v2(objects: MutableSequence[JsonObject]) -> None:
    used: set[str] = set()
    ids: list[str | None] = []
    for obj in objects:
        if obj.get("type") == "session":
            ids.append(None)
            continue
        entry_id = new_entry_id(used)
        used.add(entry_id)
        ids.append(entry_id)
    previous: str | None = None
    for obj, new_id in zip(objects, ids, strict=True):
        if new_id is None:
            obj["version"] = 2
            continue
        obj["id"] = new_id
        obj["parentId"] = previous
        previous = new_id
    for obj in objects:
        if obj.get("type") != "compaction":
            continue
        index = obj.get("firstKeptEntryIndex")
        if isinstance(index, int) and not isinstance(index, bool):
            if 0 <= index < len(objects) and ids[index] is not None:
                obj["firstKeptEntryId"] = ids[index]
            del obj["firstKeptEntryIndex"]


def _migrate_v2_to_v3(objects: MutableSequence[JsonObject]) -> None:
    for obj in objects:
        if obj.get("type") == "session":
            obj["version"] = 3
        elif obj.get("type") == "message":
            message = obj.get("message")
            if isinstance(message, dict) and message.get("role") == "hookMessage":
                message["role"] = "custom"


def migrate_entries(objects: MutableSequence[JsonObject]) -> int | float:
    """Migrate header and entries in place; returns the version they had (3 = nothing done)."""
    version = detect_version(objects)
    if version < 2:
        _migrate_v1_to_v2(objects)
    if version < 3:
        _migrate_v2_to_v3(objects)
    return version
