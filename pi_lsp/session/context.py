"""Build the LLM context (pi's ``buildSessionContext``) from session entries.

This is the pure function over plain entry dicts; :mod:`pi_lsp.session.store` wraps it with caching
for the current leaf. The result equals pi's for the same entries and leaf (checked by the oracle).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, TypedDict, TypeVar

from pi_lsp.jscompat import UNSET, Unset, iso_to_ms

Entry = dict[str, Any]
T = TypeVar("T")
M = TypeVar("M")
Message = dict[str, Any]


class ModelRef(TypedDict):
    provider: str
    modelId: str


class SessionContext(TypedDict):
    messages: list[Message]
    thinkingLevel: str
    model: ModelRef | None


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


def _derived_message(entry: Mapping[str, Any], role: str, keys: tuple[str, ...]) -> Message:
    """A message pi derives from an entry: the role, the fields the entry has, its time in ms."""
    message: Message = {"role": role}
    for key in keys:
        if key in entry:
            message[key] = entry[key]
    message["timestamp"] = iso_to_ms(entry.get("timestamp"))
    return message


def custom_message_of(entry: Mapping[str, Any]) -> Message:
    """The ``custom`` role message a ``custom_message`` entry stands for."""
    return _derived_message(entry, "custom", ("customType", "content", "display", "details"))


def branch_summary_message(entry: Mapping[str, Any]) -> Message:
    """The ``branchSummary`` role message a ``branch_summary`` entry stands for."""
    return _derived_message(entry, "branchSummary", ("summary", "fromId"))


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
    return _derived_message(entry, "compactionSummary", ("summary", "tokensBefore"))


def select_leaf(
    entries: Sequence[Entry], leaf_id: str | Unset | None, by_id: Mapping[str, Entry]
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


def select_context(
    path: Sequence[T],
    compaction_index: int,
    *,
    emit: Callable[[T], M | None],
    summary: Callable[[T], M],
    is_first_kept: Callable[[T, T], bool],
) -> list[M]:
    """pi's step 7 over any entry representation: with the path's last compaction C at
    ``compaction_index``, C's summary, then the entries from C's first kept entry up to C, then
    everything after C; without a compaction (-1), every entry's message."""
    if compaction_index < 0:
        return [item for entry in path if (item := emit(entry)) is not None]
    compaction = path[compaction_index]
    items = [summary(compaction)]
    keeping = False
    for entry in path[:compaction_index]:
        if not keeping and is_first_kept(entry, compaction):
            keeping = True
        if keeping and (item := emit(entry)) is not None:
            items.append(item)
    items.extend(item for entry in path[compaction_index + 1 :] if (item := emit(entry)) is not None)
    return items


def messages_from_path(path: Sequence[Entry], compaction_index: int = -1) -> list[Message]:
    """Context messages of a path, given the index of its last compaction (-1 for none)."""
    return select_context(
        path,
        compaction_index,
        emit=entry_to_message,
        summary=compaction_summary_message,
        is_first_kept=lambda entry, compaction: entry.get("id") == compaction.get("firstKeptEntryId"),
    )


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
    leaf_id: str | Unset | None = UNSET,
    by_id: Mapping[str, Entry] | None = None,
) -> SessionContext:
    """pi's ``buildSessionContext(entries, leafId?, byId?)`` over plain entry dicts (no header)."""
    index = by_id if by_id is not None else index_by_id(entries)
    leaf = select_leaf(entries, leaf_id, index)
    if leaf is None:
        return {"messages": [], "thinkingLevel": "off", "model": None}
    return context_from_path(walk_to_root(leaf, index))
