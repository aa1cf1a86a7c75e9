"""pi's ``_checkCompaction``: whether an appended assistant message triggers a compaction.

Threshold (context above window − reserve), context overflow with one recovery until a user
message or a good reply, and the stale-usage guard (messages older than the latest compaction).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final

from pi_lsp.compaction.overflow import is_context_overflow
from pi_lsp.compaction.tokens import (
    TokenCache,
    assistant_usage,
    calculate_context_tokens,
    estimate_path_context_tokens,
    should_compact,
)
from pi_lsp.jscompat import iso_to_ms
from pi_lsp.service.compaction_config import RunConfig
from pi_lsp.service.record_entries import usage_path
from pi_lsp.session import SessionManager

OVERFLOW_EXHAUSTED: Final = (
    "Context overflow recovery failed after one compact-and-retry attempt. "
    "Try reducing context or switching to a larger-context model."
)


@dataclass
class SessionCompactionState:
    """Per open session: token counts seen so far and the overflow-recovery flag."""

    cache: TokenCache = field(default_factory=TokenCache)
    overflow_attempted: bool = False


@dataclass(frozen=True)
class Decision:
    reason: str
    will_retry: bool = False
    exhausted: bool = False


def decide(
    manager: SessionManager, config: RunConfig, entry_id: str, state: SessionCompactionState
) -> Decision | None:
    """pi's ``_checkCompaction`` for the assistant message ``entry_id`` (runs under the lock).

    An assistant that asked for tools (``stopReason: "toolUse"``) does not end a run in pi's
    agent loop, so it is not checked; the message that ends the run is.
    """
    record = manager.get_record(entry_id)
    message = record.message() if record is not None else None
    if message is None:
        return None
    stop = message.get("stopReason")
    if stop != "error":
        state.overflow_attempted = False
    settings = config.compaction
    if not settings.enabled or stop in ("aborted", "toolUse"):
        return None
    view = manager.context_view()
    path = view.path
    if not any(path[i].id == entry_id for i in range(len(path) - 1, -1, -1)):
        return None  # the leaf has moved off this message's branch
    compaction_index = view.compaction_index
    compaction_ms = iso_to_ms(path[compaction_index].timestamp) if compaction_index >= 0 else None
    if _is_before(message.get("timestamp"), compaction_ms):
        return None  # stale: this message predates the latest compaction
    window = config.context_window
    if is_context_overflow(message, window):
        if state.overflow_attempted:
            return Decision("overflow", exhausted=True)
        state.overflow_attempted = True
        return Decision("overflow", will_retry=True)
    if stop == "error":
        entries = usage_path(path, compaction_index)
        start = 1 if compaction_index >= 0 else 0
        source = entries[start].get("message") if len(entries) > start else None
        if not isinstance(source, dict) or assistant_usage(source) is None:
            return None  # no usage at all (or only pre-compaction usage)
        if _is_before(source.get("timestamp"), compaction_ms):
            return None
        tokens = estimate_path_context_tokens(entries, state.cache)["tokens"]
    else:
        usage = message.get("usage")
        tokens = calculate_context_tokens(usage) if isinstance(usage, dict) else 0
    if should_compact(tokens, window, settings):
        return Decision("threshold")
    return None


def _is_before(timestamp: Any, compaction_ms: float | int | None) -> bool:
    """pi's stale guard: ``message.timestamp <= Date(compaction.timestamp)``."""
    if compaction_ms is None or not isinstance(timestamp, int | float) or isinstance(timestamp, bool):
        return False
    return timestamp <= compaction_ms
