"""Where to cut a branch for compaction: pi 0.73.1's ``findCutPoint`` and ``findTurnStartIndex``.

The newest ``keep_recent_tokens`` of conversation stay verbatim; everything before the cut is
summarised. A cut may land inside a turn (after the user's request, between tool calls), which
pi calls a *split turn*: the turn's early part then gets its own "turn prefix" summary.

pi's quirks are reproduced on purpose (session files must agree with pi's): ``custom_message`` and
``branch_summary`` entries are cut points but add no tokens during the walk; a cut that the
metadata pull-back moves onto a ``model_change`` before a user message reports a split turn.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pi_lsp.compaction.tokens import TokenCache, estimate_message_tokens

Entry = Mapping[str, Any]

_CUT_ROLES = frozenset({"user", "assistant", "bashExecution", "custom", "branchSummary", "compactionSummary"})
_TURN_START_ROLES = frozenset({"user", "bashExecution"})


@dataclass(frozen=True, slots=True)
class CutPoint:
    """Result of :func:`find_cut_point` (indices into the entry list)."""

    first_kept_entry_index: int
    turn_start_index: int
    is_split_turn: bool

    def as_pi(self) -> dict[str, Any]:
        """pi's camelCase shape (``{firstKeptEntryIndex, turnStartIndex, isSplitTurn}``)."""
        return {
            "firstKeptEntryIndex": self.first_kept_entry_index,
            "turnStartIndex": self.turn_start_index,
            "isSplitTurn": self.is_split_turn,
        }


def _role(entry: Entry) -> Any:
    message = entry.get("message")
    return message.get("role") if isinstance(message, dict) else None


def is_cut_point(entry: Entry) -> bool:
    """Whether the kept region may start at this entry (tool results never: they need their call)."""
    kind = entry.get("type")
    if kind == "message":
        return _role(entry) in _CUT_ROLES
    return kind in ("branch_summary", "custom_message")


def find_valid_cut_points(entries: Sequence[Entry], start: int, end: int) -> list[int]:
    """All cut-point indices in ``[start, end)`` (pi's ``findValidCutPoints``)."""
    return [i for i in range(start, end) if is_cut_point(entries[i])]


def _first_cut_point_from(entries: Sequence[Entry], index: int, end: int) -> int | None:
    for i in range(index, end):
        if is_cut_point(entries[i]):
            return i
    return None


def find_turn_start_index(entries: Sequence[Entry], entry_index: int, start: int) -> int:
    """The entry that opened the turn containing ``entry_index`` (inclusive), or -1.

    Turns start at user and bashExecution messages and at ``branch_summary``/``custom_message``
    entries, which stand in for user input.
    """
    for i in range(entry_index, start - 1, -1):
        entry = entries[i]
        kind = entry.get("type")
        if kind in ("branch_summary", "custom_message"):
            return i
        if kind == "message" and _role(entry) in _TURN_START_ROLES:
            return i
    return -1


def find_cut_point(
    entries: Sequence[Entry],
    start: int,
    end: int,
    keep_recent_tokens: int,
    cache: TokenCache | None = None,
) -> CutPoint:
    """pi's ``findCutPoint`` over ``entries[start:end]``.

    Walks back from the newest ``message`` entry summing pi's estimates; where the total first
    reaches ``keep_recent_tokens`` the cut goes to the nearest cut point at or after that entry
    (default: the first cut point of the range). Metadata entries right before the cut are pulled
    into the kept region, stopping at any message or compaction entry. Only the recent part of
    the branch is visited, so the cost does not grow with the session.
    """
    first_cut = _first_cut_point_from(entries, start, end)
    if first_cut is None:
        return CutPoint(start, -1, False)

    cut_index = first_cut
    accumulated = 0
    for i in range(end - 1, start - 1, -1):
        entry = entries[i]
        if entry.get("type") != "message":
            continue
        if cache is not None:
            accumulated += cache.entry_tokens(entry)
        else:
            message = entry.get("message")
            accumulated += estimate_message_tokens(message) if isinstance(message, dict) else 0
        if accumulated >= keep_recent_tokens:
            at_or_after = _first_cut_point_from(entries, i, end)
            if at_or_after is not None:
                cut_index = at_or_after
            break

    while cut_index > start:
        previous_kind = entries[cut_index - 1].get("type")
        if previous_kind in ("compaction", "message"):
            break
        cut_index -= 1

    cut_entry = entries[cut_index]
    is_user = cut_entry.get("type") == "message" and _role(cut_entry) == "user"
    turn_start = -1 if is_user else find_turn_start_index(entries, cut_index, start)
    return CutPoint(cut_index, turn_start, not is_user and turn_start != -1)
