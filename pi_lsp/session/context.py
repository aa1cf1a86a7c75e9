"""Build the LLM context (pi's ``buildSessionContext``) from session entries.

This is the pure function over plain entry dicts; :mod:`pi_lsp.session.store` wraps it with caching
for the current leaf. The result equals pi's for the same entries and leaf (checked by the oracle).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any, Final, TypedDict

Entry = dict[str, Any]
Message = dict[str, Any]


class ModelRef(TypedDict):
    provider: str
    modelId: str


class SessionContext(TypedDict):
    messages: list[Message]
    thinkingLevel: str
    model: ModelRef | None


class _Unset:
    """Marker for "no leaf given" (pi's ``undefined``), distinct from ``None`` (pi's ``null``)."""

    def __repr__(self) -> str:
        return "UNSET"


UNSET: Final = _Unset()


def iso_to_ms(timestamp: Any) -> float | int | None:
    """Parse an ISO-8601 timestamp to epoch milliseconds like JS ``Date.parse``; None when invalid."""
    if not isinstance(timestamp, str) or not timestamp:
        return None
    text = timestamp.strip()
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        return None
    if parsed.tzinfo is None:
        # JS treats date-time forms without an offset as local time; sessions always carry Z.
        parsed = parsed.astimezone()
    return int(parsed.timestamp() * 1000)


def walk_to_root(leaf: Entry, by_id: Mapping[str, Entry]) -> list[Entry]:
    """Entries from the root to ``leaf`` following ``parentId``; stops at unknown parents and cycles."""
    path: list[Entry] = []
    seen: set[int] = set()
    current: Entry | None = leaf
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        path.append(current)
        parent_id = current.get("parentId")
        current = by_id.get(parent_id) if isinstance(parent_id, str) else None
    path.reverse()
    return path


def custom_message_of(entry: Mapping[str, Any]) -> Message:
    """The ``custom`` role message a ``custom_message`` entry stands for."""
    message: Message = {"role": "custom"}
    for key in ("customType", "content", "display", "details"):
        if key in entry:
            message[key] = entry[key]
    message["timestamp"] = iso_to_ms(entry.get("timestamp"))
    return message


def branch_summary_message(entry: Mapping[str, Any]) -> Message:
    """The ``branchSummary`` role message a ``branch_summary`` entry stands for."""
    summary: Message = {"role": "branchSummary"}
    for key in ("summary", "fromId"):
        if key in entry:
            summary[key] = entry[key]
    summary["timestamp"] = iso_to_ms(entry.get("timestamp"))
    return summary


def entry_to_message(entry: Entry) -> Message | None:
    """The context message an entry contributes, or None (pi's per-entry "emit")."""
    kind = entry.get("type")
    if kind == "message":
        stored = entry.get("message")
        return stored if isinstance(stored, dict) else None
    if kind == "custom_message":
        return custom_message_of(entry)
    if kind == "branch_summary" and entry.get("summary"):
        return branch_summary_message(entry)
    return None


def compaction_summary_message(entry: Mapping[str, Any]) -> Message:
    """The ``compactionSummary`` message that stands for a compaction entry in the context."""
    message: Message = {"role": "compactionSummary"}
    for key in ("summary", "tokensBefore"):
        if key in entry:
            message[key] = entry[key]
    message["timestamp"] = iso_to_ms(entry.get("timestamp"))
    return message


def select_leaf(
    entries: Sequence[Entry], leaf_id: str | _Unset | None, by_id: Mapping[str, Entry]
) -> Entry | None:
    """pi's leaf choice: None → nothing; a known id → it; anything else → the last entry."""
    if leaf_id is None:
        return None
    if isinstance(leaf_id, str) and leaf_id and leaf_id in by_id:
        return by_id[leaf_id]
    return entries[-1] if entries else None


def context_from_path(path: Sequence[Entry]) -> SessionContext:
    """The context for a root→leaf path (steps 4–7 of pi's algorithm)."""
    thinking_level = "off"
    model: ModelRef | None = None
    compaction_index = -1
    for index, entry in enumerate(path):
        kind = entry.get("type")
        if kind == "thinking_level_change":
            thinking_level = entry.get("thinkingLevel")  # type: ignore[assignment]
        elif kind == "model_change":
            model = ModelRef(provider=entry.get("provider"), modelId=entry.get("modelId"))  # type: ignore[typeddict-item]
        elif kind == "message":
            message = entry.get("message")
            if isinstance(message, dict) and message.get("role") == "assistant":
                model = ModelRef(provider=message.get("provider"), modelId=message.get("model"))  # type: ignore[typeddict-item]
        elif kind == "compaction":
            compaction_index = index
    return {
        "messages": messages_from_path(path, compaction_index),
        "thinkingLevel": thinking_level,
        "model": model,
    }


def messages_from_path(path: Sequence[Entry], compaction_index: int = -1) -> list[Message]:
    """Context messages of a path, given the index of its last compaction (-1 for none)."""
    if compaction_index < 0:
        return _emit(path)
    compaction = path[compaction_index]
    messages = [compaction_summary_message(compaction)]
    first_kept = compaction.get("firstKeptEntryId")
    keeping = False
    for entry in path[:compaction_index]:
        if not keeping and entry.get("id") == first_kept:
            keeping = True
        if keeping:
            message = entry_to_message(entry)
            if message is not None:
                messages.append(message)
    messages.extend(_emit(path[compaction_index + 1 :]))
    return messages


def _emit(entries: Iterable[Entry]) -> list[Message]:
    out: list[Message] = []
    for entry in entries:
        message = entry_to_message(entry)
        if message is not None:
            out.append(message)
    return out


def index_by_id(entries: Iterable[Entry]) -> dict[str, Entry]:
    """id → entry, later duplicates winning as in pi's index; header lines are skipped."""
    by_id: dict[str, Entry] = {}
    for entry in entries:
        entry_id = entry.get("id")
        if entry.get("type") != "session" and isinstance(entry_id, str):
            by_id[entry_id] = entry
    return by_id


def build_session_context(
    entries: Sequence[Entry],
    leaf_id: str | _Unset | None = UNSET,
    by_id: Mapping[str, Entry] | None = None,
) -> SessionContext:
    """pi's ``buildSessionContext(entries, leafId?, byId?)`` over plain entry dicts (no header)."""
    index = by_id if by_id is not None else index_by_id(entries)
    leaf = select_leaf(entries, leaf_id, index)
    if leaf is None:
        return {"messages": [], "thinkingLevel": "off", "model": None}
    return context_from_path(walk_to_root(leaf, index))
