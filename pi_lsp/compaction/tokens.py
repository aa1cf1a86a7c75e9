"""Token accounting: pi's chars/4 estimator, usage arithmetic, and pluggable tokenizers.

pi decides cut points and ``tokensBefore`` with a deliberately crude estimate (``ceil(chars/4)``);
we must reproduce it exactly for the session files to match. Displayed context usage may instead
use a real tokenizer (cl100k via tiktoken, loaded offline). :class:`TokenCache` memoises per-entry
counts so that large sessions are counted once at open, not once per request.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypedDict

from pi_lsp.compaction.tokenizers import EstimateTokenizer, TiktokenTokenizer, Tokenizer, make_tokenizer
from pi_lsp.jscompat import js_len, js_stringify

__all__ = [
    "IMAGE_CHARS",
    "IMAGE_TOKENS",
    "ContextEstimate",
    "ContextUsage",
    "EstimateTokenizer",
    "TiktokenTokenizer",
    "TokenCache",
    "Tokenizer",
    "UsageSettings",
    "assistant_usage",
    "calculate_context_tokens",
    "context_entries",
    "context_usage",
    "context_usage_for_path",
    "count_message_tokens",
    "entry_message",
    "estimate_context_tokens",
    "estimate_message_tokens",
    "estimate_path_context_tokens",
    "get_last_assistant_usage",
    "make_tokenizer",
    "message_chars",
    "message_text",
    "should_compact",
]

Message = dict[str, Any]
Entry = dict[str, Any]

IMAGE_CHARS = 4800
"""pi charges an image in a tool result or custom message as 4800 characters…"""
IMAGE_TOKENS = IMAGE_CHARS // 4
"""…which is 1200 tokens; tokenizer-based counts use the same flat charge."""


class UsageSettings(Protocol):
    """The part of the compaction settings the threshold needs."""

    @property
    def enabled(self) -> bool: ...

    @property
    def reserve_tokens(self) -> int: ...


# ---------------------------------------------------------------------------------------------
# pi's estimator


def _text_blocks_chars(content: Any, *, images: bool) -> int:
    chars = 0
    if isinstance(content, str):
        return js_len(content)
    if not isinstance(content, list):
        return 0
    for block in content:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text":
            text = block.get("text")
            if isinstance(text, str) and text:
                chars += js_len(text)
        elif kind == "image" and images:
            chars += IMAGE_CHARS
    return chars


def _assistant_chars(content: Any) -> int:
    chars = 0
    if not isinstance(content, list):
        return 0
    for block in content:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text":
            text = block.get("text")
            chars += js_len(text) if isinstance(text, str) else 0
        elif kind == "thinking":
            thinking = block.get("thinking")
            chars += js_len(thinking) if isinstance(thinking, str) else 0
        elif kind == "toolCall":
            name = block.get("name")
            args = js_stringify(block.get("arguments"))
            chars += (js_len(name) if isinstance(name, str) else 0) + (js_len(args) if args else 0)
    return chars


def message_chars(message: Mapping[str, Any]) -> int:
    """The character count pi's ``estimateTokens`` divides by four (images included)."""
    role = message.get("role")
    if role == "user":
        return _text_blocks_chars(message.get("content"), images=False)
    if role == "assistant":
        return _assistant_chars(message.get("content"))
    if role in ("toolResult", "custom"):
        return _text_blocks_chars(message.get("content"), images=True)
    if role == "bashExecution":
        command, output = message.get("command"), message.get("output")
        return (js_len(command) if isinstance(command, str) else 0) + (
            js_len(output) if isinstance(output, str) else 0
        )
    if role in ("branchSummary", "compactionSummary"):
        summary = message.get("summary")
        return js_len(summary) if isinstance(summary, str) else 0
    return 0


def estimate_message_tokens(message: Mapping[str, Any]) -> int:
    """pi's ``estimateTokens``: ``ceil(chars / 4)`` with pi's per-role rules (user images count 0)."""
    return math.ceil(message_chars(message) / 4)


def message_text(message: Mapping[str, Any]) -> tuple[str, int]:
    """The text a tokenizer should see for a message, and how many images it carries.

    Mirrors the parts pi's estimator counts, so both counters measure the same thing.
    """
    role = message.get("role")
    parts: list[str] = []
    images = 0
    content = message.get("content")
    if role in ("user", "toolResult", "custom"):
        if isinstance(content, str):
            parts.append(content)
        elif isinstance(content, list):
            for block in content:
                if not isinstance(block, dict):
                    continue
                if block.get("type") == "text" and isinstance(block.get("text"), str):
                    parts.append(block["text"])
                elif block.get("type") == "image":
                    images += 1
    elif role == "assistant" and isinstance(content, list):
        for block in content:
            if not isinstance(block, dict):
                continue
            kind = block.get("type")
            if kind == "text" and isinstance(block.get("text"), str):
                parts.append(block["text"])
            elif kind == "thinking" and isinstance(block.get("thinking"), str):
                parts.append(block["thinking"])
            elif kind == "toolCall":
                parts.append(str(block.get("name", "")) + (js_stringify(block.get("arguments")) or ""))
    elif role == "bashExecution":
        parts.extend(str(message.get(key) or "") for key in ("command", "output"))
    elif role in ("branchSummary", "compactionSummary"):
        parts.append(str(message.get("summary") or ""))
    return "\n".join(parts), images


def count_message_tokens(message: Mapping[str, Any], tokenizer: Tokenizer | None = None) -> int:
    """Tokens of one message: pi's estimate for the estimate tokenizer, else text + 1200 per image."""
    if tokenizer is None or isinstance(tokenizer, EstimateTokenizer):
        return estimate_message_tokens(message)
    text, images = message_text(message)
    return tokenizer.count(text) + images * IMAGE_TOKENS


# ---------------------------------------------------------------------------------------------
# Usage arithmetic


def calculate_context_tokens(usage: Mapping[str, Any]) -> int:
    """pi's ``calculateContextTokens``: ``totalTokens`` or, when 0/missing, the sum of the parts."""
    total = usage.get("totalTokens")
    if total:
        return int(total)
    return int(sum(usage.get(key) or 0 for key in ("input", "output", "cacheRead", "cacheWrite")))


def assistant_usage(message: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """A message's usage when pi trusts it: assistant, not aborted/error, usage present."""
    if message.get("role") != "assistant":
        return None
    if message.get("stopReason") in ("aborted", "error"):
        return None
    usage = message.get("usage")
    return usage if isinstance(usage, dict) else None


def get_last_assistant_usage(entries: Sequence[Mapping[str, Any]]) -> Mapping[str, Any] | None:
    """pi's ``getLastAssistantUsage``: newest valid usage among ``message`` entries."""
    for entry in reversed(entries):
        if entry.get("type") == "message":
            message = entry.get("message")
            if isinstance(message, dict):
                usage = assistant_usage(message)
                if usage is not None:
                    return usage
    return None


class ContextEstimate(TypedDict):
    tokens: int
    usageTokens: int
    trailingTokens: int
    lastUsageIndex: int | None


def estimate_context_tokens(
    messages: Sequence[Mapping[str, Any]], tokenizer: Tokenizer | None = None
) -> ContextEstimate:
    """pi's ``estimateContextTokens``: last valid usage plus counts of the messages after it."""
    for index in range(len(messages) - 1, -1, -1):
        usage = assistant_usage(messages[index])
        if usage is not None:
            usage_tokens = calculate_context_tokens(usage)
            trailing = sum(count_message_tokens(m, tokenizer) for m in messages[index + 1 :])
            return {
                "tokens": usage_tokens + trailing,
                "usageTokens": usage_tokens,
                "trailingTokens": trailing,
                "lastUsageIndex": index,
            }
    total = sum(count_message_tokens(m, tokenizer) for m in messages)
    return {"tokens": total, "usageTokens": 0, "trailingTokens": total, "lastUsageIndex": None}


def should_compact(context_tokens: float, context_window: float, settings: UsageSettings) -> bool:
    """pi's threshold: enabled and strictly above ``contextWindow - reserveTokens``."""
    return bool(settings.enabled) and context_tokens > context_window - settings.reserve_tokens


class ContextUsage(TypedDict):
    """The protocol's ``ContextUsage``; ``tokens``/``percent`` are None while unknown."""

    tokens: int | None
    usageTokens: int | None
    trailingTokens: int | None
    contextWindow: int
    percent: float | None
    shouldCompact: bool


@dataclass(frozen=True)
class _Threshold:
    enabled: bool
    reserve_tokens: int


def context_usage(
    messages: Sequence[Mapping[str, Any]],
    context_window: int,
    reserve_tokens: int,
    tokenizer: Tokenizer | None = None,
    *,
    enabled: bool = True,
) -> ContextUsage:
    """Context size as pi's ``getContextUsage`` reports it, for already-built context messages."""
    estimate = estimate_context_tokens(messages, tokenizer)
    tokens = estimate["tokens"]
    return {
        "tokens": tokens,
        "usageTokens": estimate["usageTokens"],
        "trailingTokens": estimate["trailingTokens"],
        "contextWindow": context_window,
        "percent": tokens / context_window * 100 if context_window > 0 else None,
        "shouldCompact": should_compact(tokens, context_window, _Threshold(enabled, reserve_tokens)),
    }


# ---------------------------------------------------------------------------------------------
# Entries and the per-entry cache


def entry_message(entry: Mapping[str, Any]) -> Message | None:
    """The message whose size an entry stands for (a compaction stands for its summary message)."""
    kind = entry.get("type")
    if kind == "message":
        message = entry.get("message")
        return message if isinstance(message, dict) else None
    if kind == "custom_message":
        return {"role": "custom", "content": entry.get("content")}
    if kind == "branch_summary":
        return {"role": "branchSummary", "summary": entry.get("summary")}
    if kind == "compaction":
        return {"role": "compactionSummary", "summary": entry.get("summary")}
    return None


class TokenCache:
    """Per-entry token counts keyed by (tokenizer name, entry id, entry timestamp).

    Session entries never change once written, so an entry's count can be remembered for the
    life of the session. Use one cache per open session (ids are only unique within a file):
    warm it once with :meth:`warm` after opening, then pass it to ``prepare_compaction`` and
    :func:`context_usage_for_path`; entries appended later are counted on first use. Call
    :meth:`invalidate` only if an entry is ever rewritten in place (pi never does that).
    """

    def __init__(self, max_entries: int = 500_000) -> None:
        self._counts: dict[tuple[str, str, Any], int] = {}
        self._max = max_entries

    def __len__(self) -> int:
        return len(self._counts)

    def entry_tokens(self, entry: Mapping[str, Any], tokenizer: Tokenizer | None = None) -> int:
        """Tokens of the message ``entry`` contributes (0 for metadata entries)."""
        name = tokenizer.name if tokenizer is not None else EstimateTokenizer.name
        entry_id = entry.get("id")
        if not isinstance(entry_id, str):
            message = entry_message(entry)
            return count_message_tokens(message, tokenizer) if message is not None else 0
        stamp = entry.get("timestamp")
        key = (name, entry_id, stamp if isinstance(stamp, str) else None)
        cached = self._counts.get(key)
        if cached is not None:
            return cached
        message = entry_message(entry)
        count = count_message_tokens(message, tokenizer) if message is not None else 0
        if len(self._counts) >= self._max:
            self._counts.clear()
        self._counts[key] = count
        return count

    def warm(self, entries: Iterable[Mapping[str, Any]], tokenizer: Tokenizer | None = None) -> None:
        """Count every entry now (e.g. right after a session is opened)."""
        for entry in entries:
            self.entry_tokens(entry, tokenizer)

    def invalidate(self, entry_id: str) -> None:
        """Forget every count of one entry id."""
        for key in [k for k in self._counts if k[1] == entry_id]:
            del self._counts[key]

    def clear(self) -> None:
        self._counts.clear()


def _last_compaction_index(path: Sequence[Mapping[str, Any]]) -> int:
    for index in range(len(path) - 1, -1, -1):
        if path[index].get("type") == "compaction":
            return index
    return -1


def context_entries(path: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The path entries whose messages form ``buildSessionContext(path)``, in context order.

    The compaction entry (if any) comes first and stands for its summary message. Entries that emit
    nothing in pi's context (metadata, empty branch summaries, older compactions) are left out.
    """
    compaction_index = _last_compaction_index(path)
    if compaction_index < 0:
        return [e for e in path if _emits(e)]
    compaction = path[compaction_index]
    out: list[Mapping[str, Any]] = [compaction]
    first_kept = compaction.get("firstKeptEntryId")
    keeping = False
    for entry in path[:compaction_index]:
        if not keeping and entry.get("id") == first_kept:
            keeping = True
        if keeping and _emits(entry):
            out.append(entry)
    out.extend(e for e in path[compaction_index + 1 :] if _emits(e))
    return out


def _emits(entry: Mapping[str, Any]) -> bool:
    kind = entry.get("type")
    if kind == "message":
        return isinstance(entry.get("message"), dict)
    if kind == "custom_message":
        return True
    return kind == "branch_summary" and bool(entry.get("summary"))


def estimate_path_context_tokens(
    path: Sequence[Mapping[str, Any]], cache: TokenCache | None = None, tokenizer: Tokenizer | None = None
) -> ContextEstimate:
    """``estimateContextTokens(buildSessionContext(path).messages)`` using cached entry counts.

    ``path`` must be a root-first chain (each entry's parent is the one before it).
    """
    cache = cache if cache is not None else TokenCache()
    entries = context_entries(path)
    for index in range(len(entries) - 1, -1, -1):
        entry = entries[index]
        message = entry.get("message") if entry.get("type") == "message" else None
        usage = assistant_usage(message) if isinstance(message, dict) else None
        if usage is not None:
            usage_tokens = calculate_context_tokens(usage)
            trailing = sum(cache.entry_tokens(e, tokenizer) for e in entries[index + 1 :])
            return {
                "tokens": usage_tokens + trailing,
                "usageTokens": usage_tokens,
                "trailingTokens": trailing,
                "lastUsageIndex": index,
            }
    total = sum(cache.entry_tokens(e, tokenizer) for e in entries)
    return {"tokens": total, "usageTokens": 0, "trailingTokens": total, "lastUsageIndex": None}


def context_usage_for_path(
    path: Sequence[Mapping[str, Any]],
    context_window: int,
    settings: UsageSettings,
    tokenizer: Tokenizer | None = None,
    cache: TokenCache | None = None,
) -> ContextUsage:
    """pi's ``getContextUsage`` for a root-first branch, including the post-compaction rule.

    Right after a compaction the last usage describes the old, larger context, so pi reports the
    size as unknown (``tokens``/``percent`` None) until an assistant answers after the compaction.
    """
    compaction_index = _last_compaction_index(path)
    if compaction_index >= 0 and not _has_usage_after(path, compaction_index):
        return {
            "tokens": None,
            "usageTokens": None,
            "trailingTokens": None,
            "contextWindow": context_window,
            "percent": None,
            "shouldCompact": False,
        }
    estimate = estimate_path_context_tokens(path, cache, tokenizer)
    tokens = estimate["tokens"]
    return {
        "tokens": tokens,
        "usageTokens": estimate["usageTokens"],
        "trailingTokens": estimate["trailingTokens"],
        "contextWindow": context_window,
        "percent": tokens / context_window * 100 if context_window > 0 else None,
        "shouldCompact": should_compact(tokens, context_window, settings),
    }


def _has_usage_after(path: Sequence[Mapping[str, Any]], compaction_index: int) -> bool:
    for entry in reversed(path[compaction_index + 1 :]):
        message = entry.get("message") if entry.get("type") == "message" else None
        if isinstance(message, dict) and message.get("role") == "assistant":
            if message.get("stopReason") in ("aborted", "error"):
                continue
            usage = message.get("usage")
            return isinstance(usage, dict) and calculate_context_tokens(usage) > 0
    return False
