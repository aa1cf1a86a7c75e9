"""pi 0.73.1's ``prepareCompaction``: decide what a compaction summarises and what it keeps.

Pure and synchronous: no model call happens here. The result feeds
:func:`pi_lsp.llm.summarizer.compact` and, through :meth:`CompactionPreparation.summary_view`,
the protocol's ``pi/prepareCompaction`` dry run.

Differences from pi 0.58.3 that matter (delta §5.1): a repeated compaction starts at the previous
compaction's ``firstKeptEntryId`` (its kept region is re-summarised instead of silently lost),
compaction entries inside the range contribute no message (the old summary enters as
``previousSummary``), and ``tokensBefore`` measures ``buildSessionContext(path)``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypedDict

from pi_lsp.compaction.cut_point import find_cut_point
from pi_lsp.compaction.file_ops import (
    FileLists,
    FileOps,
    compute_file_lists,
    extract_file_ops_from_message,
    seed_from_details,
)
from pi_lsp.compaction.tokens import (
    TokenCache,
    estimate_context_tokens,
    estimate_path_context_tokens,
)
from pi_lsp.session.context import branch_summary_message, build_session_context, custom_message_of

Entry = Mapping[str, Any]
Message = dict[str, Any]


@dataclass(frozen=True)
class CompactionSettings:
    """pi's ``compaction`` settings (defaults = ``DEFAULT_COMPACTION_SETTINGS``)."""

    enabled: bool = True
    reserve_tokens: int = 16384
    keep_recent_tokens: int = 20000

    @classmethod
    def from_pi(cls, data: Mapping[str, Any] | None) -> CompactionSettings:
        """Build from pi's camelCase settings object, defaults for missing keys."""
        data = data or {}
        return cls(
            enabled=bool(data.get("enabled", True)),
            reserve_tokens=int(data.get("reserveTokens", 16384)),
            keep_recent_tokens=int(data.get("keepRecentTokens", 20000)),
        )

    def as_pi(self) -> dict[str, Any]:
        return {
            "enabled": self.enabled,
            "reserveTokens": self.reserve_tokens,
            "keepRecentTokens": self.keep_recent_tokens,
        }


class PreparationSummary(TypedDict):
    """The protocol's ``pi/prepareCompaction`` result."""

    firstKeptEntryId: str
    isSplitTurn: bool
    tokensBefore: int
    summarizeCount: int
    turnPrefixCount: int
    readFiles: list[str]
    modifiedFiles: list[str]
    hasPreviousSummary: bool


@dataclass
class CompactionPreparation:
    """What one compaction will summarise and keep (pi's ``CompactionPreparation``).

    The ``*_index`` fields are extras (positions in the path) for callers that need them.
    """

    first_kept_entry_id: str
    messages_to_summarize: list[Message]
    turn_prefix_messages: list[Message]
    is_split_turn: bool
    tokens_before: int
    previous_summary: str | None
    file_ops: FileOps
    settings: CompactionSettings = field(default_factory=CompactionSettings)
    first_kept_entry_index: int = 0
    turn_start_index: int = -1
    boundary_start: int = 0

    def file_lists(self) -> FileLists:
        return compute_file_lists(self.file_ops)

    def has_previous_summary(self) -> bool:
        return bool(self.previous_summary)

    def is_empty(self) -> bool:
        """Nothing would be summarised (the protocol's NothingToCompact for ``pi/compact``)."""
        return not self.messages_to_summarize and not self.turn_prefix_messages

    def summary_view(self) -> PreparationSummary:
        """The dry-run shape of the protocol (counts instead of messages)."""
        lists = self.file_lists()
        return {
            "firstKeptEntryId": self.first_kept_entry_id,
            "isSplitTurn": self.is_split_turn,
            "tokensBefore": self.tokens_before,
            "summarizeCount": len(self.messages_to_summarize),
            "turnPrefixCount": len(self.turn_prefix_messages),
            "readFiles": lists["readFiles"],
            "modifiedFiles": lists["modifiedFiles"],
            "hasPreviousSummary": self.has_previous_summary(),
        }

    def as_pi(self) -> dict[str, Any]:
        """pi's object with sets as arrays, as the oracle prints it (``previousSummary`` omitted if none)."""
        out: dict[str, Any] = {
            "firstKeptEntryId": self.first_kept_entry_id,
            "messagesToSummarize": self.messages_to_summarize,
            "turnPrefixMessages": self.turn_prefix_messages,
            "isSplitTurn": self.is_split_turn,
            "tokensBefore": self.tokens_before,
        }
        if self.previous_summary is not None:
            out["previousSummary"] = self.previous_summary
        out["fileOps"] = self.file_ops.as_pi()
        out["settings"] = self.settings.as_pi()
        return out


def compaction_message(entry: Entry) -> Message | None:
    """The message an entry contributes to a compaction (pi's ``getMessageFromEntryForCompaction``).

    Unlike the live context, an empty branch summary still yields a message, and compaction
    entries yield none.
    """
    kind = entry.get("type")
    if kind == "message":
        message = entry.get("message")
        return message if isinstance(message, dict) else None
    if kind == "custom_message":
        return custom_message_of(entry)
    if kind == "branch_summary":
        return branch_summary_message(entry)
    return None


def _messages(path: Sequence[Entry], start: int, end: int) -> list[Message]:
    out: list[Message] = []
    for i in range(start, end):
        message = compaction_message(path[i])
        if message is not None:
            out.append(message)
    return out


def is_linear_path(path: Sequence[Entry]) -> bool:
    """True when ``path`` is a root-first chain, so ``buildSessionContext(path)`` walks all of it."""
    ids: set[Any] = set()
    previous_id: Any = None
    for index, entry in enumerate(path):
        entry_id = entry.get("id")
        if not isinstance(entry_id, str) or entry_id in ids:
            return False
        if index > 0 and entry.get("parentId") != previous_id:
            return False
        ids.add(entry_id)
        previous_id = entry_id
    return not path or path[0].get("parentId") not in ids


def tokens_before(path: Sequence[Entry], cache: TokenCache | None = None) -> int:
    """``estimateContextTokens(buildSessionContext(path).messages).tokens``, cached when possible."""
    if is_linear_path(path):
        return estimate_path_context_tokens(path, cache)["tokens"]
    entries = [dict(e) for e in path]
    return estimate_context_tokens(build_session_context(entries)["messages"])["tokens"]


def prepare_compaction(
    path_entries: Sequence[Entry],
    settings: CompactionSettings | None = None,
    cache: TokenCache | None = None,
) -> CompactionPreparation | None:
    """pi 0.73.1's ``prepareCompaction(pathEntries, settings)``; None when there is nothing to do.

    None means: the path is empty, its last entry is already a compaction ("Already compacted"),
    or the first kept entry has no id (unmigrated data). A preparation may still summarise
    nothing (both message lists empty); see :meth:`CompactionPreparation.is_empty`.

    ``cache`` (one per session) makes repeated calls cost only the recent part of the branch plus
    one pass over the entries being summarised.
    """
    settings = settings or CompactionSettings()
    if path_entries and path_entries[-1].get("type") == "compaction":
        return None

    previous_index = -1
    for i in range(len(path_entries) - 1, -1, -1):
        if path_entries[i].get("type") == "compaction":
            previous_index = i
            break

    previous_summary: str | None = None
    boundary_start = 0
    if previous_index >= 0:
        previous = path_entries[previous_index]
        summary = previous.get("summary")
        previous_summary = summary if isinstance(summary, str) else None
        kept_id = previous.get("firstKeptEntryId")
        boundary_start = previous_index + 1
        for i, entry in enumerate(path_entries):
            if entry.get("id") == kept_id:
                boundary_start = i
                break

    before = tokens_before(path_entries, cache)
    cut = find_cut_point(path_entries, boundary_start, len(path_entries), settings.keep_recent_tokens, cache)
    if cut.first_kept_entry_index >= len(path_entries):
        return None
    first_kept_id = path_entries[cut.first_kept_entry_index].get("id")
    if not first_kept_id or not isinstance(first_kept_id, str):
        return None

    history_end = cut.turn_start_index if cut.is_split_turn else cut.first_kept_entry_index
    to_summarize = _messages(path_entries, boundary_start, history_end)
    prefix = (
        _messages(path_entries, cut.turn_start_index, cut.first_kept_entry_index) if cut.is_split_turn else []
    )

    ops = FileOps()
    if previous_index >= 0:
        seed_from_details(ops, path_entries[previous_index])
    for message in to_summarize:
        extract_file_ops_from_message(message, ops)
    for message in prefix:
        extract_file_ops_from_message(message, ops)

    return CompactionPreparation(
        first_kept_entry_id=first_kept_id,
        messages_to_summarize=to_summarize,
        turn_prefix_messages=prefix,
        is_split_turn=cut.is_split_turn,
        tokens_before=before,
        previous_summary=previous_summary,
        file_ops=ops,
        settings=settings,
        first_kept_entry_index=cut.first_kept_entry_index,
        turn_start_index=cut.turn_start_index,
        boundary_start=boundary_start,
    )
