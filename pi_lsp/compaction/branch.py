"""Input side of branch summaries (tree navigation), as pi 0.73.1 computes it.

When the user moves the leaf elsewhere in the tree, the abandoned part of the old branch (from
the old leaf up to the common ancestor) may be summarised into a ``branch_summary`` entry. These
functions pick those entries and fit the newest of them into the summariser's token budget.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pi_lsp.compaction.file_ops import FileOps, extract_file_ops_from_message, seed_from_details
from pi_lsp.compaction.tokens import estimate_message_tokens
from pi_lsp.session.context import branch_summary_message, compaction_summary_message, custom_message_of

Entry = Mapping[str, Any]
Message = dict[str, Any]
EntryLookup = Mapping[str, Entry] | Callable[[str], Entry | None]


@dataclass
class BranchCollection:
    """Entries to summarise (oldest first) and the deepest entry both branches share."""

    entries: list[Entry]
    common_ancestor_id: str | None


@dataclass
class BranchPreparation:
    """Messages that fit the budget (oldest first), all file operations, and their token total."""

    messages: list[Message]
    file_ops: FileOps = field(default_factory=FileOps)
    total_tokens: int = 0


def _getter(lookup: EntryLookup) -> Callable[[str], Entry | None]:
    if isinstance(lookup, Mapping):
        return lookup.get
    return lookup


def _branch_ids(get: Callable[[str], Entry | None], leaf_id: str) -> list[Entry]:
    """Root-first path to ``leaf_id`` (pi's ``getBranch``; guarded against cycles)."""
    path: list[Entry] = []
    seen: set[str] = set()
    current = get(leaf_id)
    while current is not None:
        entry_id = current.get("id")
        if isinstance(entry_id, str):
            if entry_id in seen:
                break
            seen.add(entry_id)
        path.append(current)
        parent = current.get("parentId")
        current = get(parent) if isinstance(parent, str) and parent else None
    path.reverse()
    return path


def collect_entries_for_branch_summary(
    lookup: EntryLookup, old_leaf_id: str | None, target_id: str
) -> BranchCollection:
    """pi's ``collectEntriesForBranchSummary``: the old leaf's entries below the common ancestor.

    ``lookup`` is an id → entry mapping or a ``get_entry`` function. Compaction entries are not
    boundaries: they are collected like any other entry.
    """
    if not old_leaf_id:
        return BranchCollection([], None)
    get = _getter(lookup)
    old_path = {e.get("id") for e in _branch_ids(get, old_leaf_id)}
    common: str | None = None
    for entry in reversed(_branch_ids(get, target_id)):
        candidate = entry.get("id")
        if candidate in old_path:
            common = candidate
            break
    collected: list[Entry] = []
    seen: set[str] = set()
    current: str | None = old_leaf_id
    while current and current != common and current not in seen:
        seen.add(current)
        found = get(current)
        if found is None:
            break
        collected.append(found)
        parent = found.get("parentId")
        current = parent if isinstance(parent, str) else None
    collected.reverse()
    return BranchCollection(collected, common)


def branch_message(entry: Entry) -> Message | None:
    """The message an entry contributes to a branch summary; tool results are left out.

    The summariser sees the tool *calls* (in the assistant message) but not their output.
    """
    kind = entry.get("type")
    if kind == "message":
        message = entry.get("message")
        if not isinstance(message, dict) or message.get("role") == "toolResult":
            return None
        return message
    if kind == "custom_message":
        return custom_message_of(entry)
    if kind == "branch_summary":
        return branch_summary_message(entry)
    if kind == "compaction":
        return compaction_summary_message(entry)
    return None


def prepare_branch_entries(entries: Sequence[Entry], token_budget: int = 0) -> BranchPreparation:
    """pi's ``prepareBranchEntries``: newest messages first until ``token_budget`` (0 = no limit).

    File operations are gathered from every entry, even those that do not fit: first the lists
    of earlier pi-made branch summaries, then every assistant tool call walked newest → oldest.
    A summary entry that overflows the budget is still taken while under 90 % of it.
    """
    ops = FileOps()
    for entry in entries:
        if entry.get("type") == "branch_summary":
            seed_from_details(ops, entry)

    taken: list[Message] = []
    total = 0
    for entry in reversed(entries):
        message = branch_message(entry)
        if message is None:
            continue
        extract_file_ops_from_message(message, ops)
        tokens = estimate_message_tokens(message)
        if token_budget > 0 and total + tokens > token_budget:
            if entry.get("type") in ("compaction", "branch_summary") and total < token_budget * 0.9:
                taken.append(message)
                total += tokens
            break
        taken.append(message)
        total += tokens
    taken.reverse()
    return BranchPreparation(taken, ops, total)
