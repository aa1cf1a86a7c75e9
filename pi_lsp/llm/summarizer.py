"""Producing compaction and branch summaries from a preparation, with a pluggable summariser.

``compact`` mirrors pi 0.73.1's ``compact``: a history summary (update prompt when a previous
summary exists) and, for a split turn, a turn-prefix summary generated concurrently, joined with
pi's separator and followed by the file lists. ``generate_branch_summary`` mirrors
``generateBranchSummary``. Nothing here writes to a session: callers append the entry.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Coroutine, Mapping, Sequence
from typing import Any, Literal, Protocol, TypedDict, runtime_checkable

from pi_lsp.compaction.branch import (
    BranchCollection,
    collect_entries_for_branch_summary,
    prepare_branch_entries,
)
from pi_lsp.compaction.file_ops import FileLists, compute_file_lists
from pi_lsp.compaction.prepare import CompactionPreparation
from pi_lsp.llm.anthropic_client import DEFAULT_MODEL, AnthropicClient, ModelError, RetryPolicy
from pi_lsp.llm.offline import offline_summary
from pi_lsp.llm.prompts import (
    BRANCH_MAX_TOKENS,
    NO_BRANCH_CONTENT,
    NO_PRIOR_HISTORY,
    SummaryRequest,
    branch_prompt,
    finish_branch_summary,
    history_max_tokens,
    history_prompt,
    join_split_turn,
    turn_prefix_max_tokens,
    turn_prefix_prompt,
    with_file_lists,
)
from pi_lsp.llm.serialize import transcript

__all__ = [
    "AnthropicSummarizer",
    "BranchCollection",
    "BranchSummaryResult",
    "CompactionResult",
    "NothingToCompactError",
    "OfflineSummarizer",
    "Summarizer",
    "SummarizerMode",
    "choose_summarizer",
    "collect_entries_for_branch_summary",
    "compact",
    "generate_branch_summary",
    "prepare_branch_entries",
]

SummarizerMode = Literal["auto", "anthropic", "offline"]
DEFAULT_BRANCH_CONTEXT_WINDOW = 128000


class NothingToCompactError(Exception):
    """The preparation has no messages to summarise (the protocol's NothingToCompact)."""


@runtime_checkable
class Summarizer(Protocol):
    """Anything that turns a :class:`SummaryRequest` into summary text."""

    @property
    def name(self) -> str: ...

    async def summarize(self, request: SummaryRequest) -> str: ...


class OfflineSummarizer:
    """Deterministic digest, no network, no key (see :mod:`pi_lsp.llm.offline`)."""

    name = "offline"

    async def summarize(self, request: SummaryRequest) -> str:
        return offline_summary(request)


class AnthropicSummarizer:
    """Summaries written by a Claude model through :class:`AnthropicClient`."""

    def __init__(self, client: AnthropicClient) -> None:
        self.client = client

    @property
    def name(self) -> str:
        return f"anthropic:{self.client.model}"

    async def summarize(self, request: SummaryRequest) -> str:
        completion = await self.client.complete(
            system=request.system,
            prompt=request.prompt,
            max_tokens=request.max_tokens,
            thinking_level=request.thinking_level,
        )
        return completion.text

    async def aclose(self) -> None:
        await self.client.aclose()


def choose_summarizer(
    mode: SummarizerMode = "auto",
    model: str | None = None,
    api_key: str | None = None,
    *,
    base_url: str | None = None,
    retry: RetryPolicy | None = None,
    timeout: float | None = None,
) -> Summarizer:
    """``offline`` → offline; ``anthropic`` → Anthropic (a missing key fails at call time with a
    ModelError); ``auto`` → Anthropic when a key is given or in ``ANTHROPIC_API_KEY``, else offline."""
    if mode not in ("auto", "anthropic", "offline"):
        raise ValueError(f"unknown summarizer mode {mode!r}")
    if mode == "offline":
        return OfflineSummarizer()
    key = api_key or os.environ.get("ANTHROPIC_API_KEY") or None
    if mode == "auto" and key is None:
        return OfflineSummarizer()
    options: dict[str, Any] = {"api_key": key, "base_url": base_url, "retry": retry}
    if timeout is not None:
        options["timeout"] = timeout
    return AnthropicSummarizer(AnthropicClient(model or DEFAULT_MODEL, **options))


class CompactionDetails(TypedDict):
    readFiles: list[str]
    modifiedFiles: list[str]


class CompactionResult(TypedDict):
    """pi's ``CompactionResult``: the fields of the compaction entry to append."""

    summary: str
    firstKeptEntryId: str
    tokensBefore: int
    details: CompactionDetails


async def _run(summarizer: Summarizer, request: SummaryRequest, failure: str) -> str:
    try:
        return await summarizer.summarize(request)
    except ModelError as exc:
        raise exc.with_prefix(failure) from None


def history_request(
    preparation: CompactionPreparation, custom_instructions: str | None, thinking_level: str | None
) -> SummaryRequest:
    """The history-summary job of a preparation."""
    messages = preparation.messages_to_summarize
    return SummaryRequest(
        kind="history",
        build_prompt=lambda: history_prompt(
            transcript(messages), preparation.previous_summary, custom_instructions
        ),
        messages=messages,
        max_tokens=history_max_tokens(preparation.settings.reserve_tokens),
        previous_summary=preparation.previous_summary or None,
        custom_instructions=custom_instructions or None,
        thinking_level=thinking_level,
    )


def turn_prefix_request(preparation: CompactionPreparation, thinking_level: str | None) -> SummaryRequest:
    """The turn-prefix job of a split-turn preparation."""
    messages = preparation.turn_prefix_messages
    return SummaryRequest(
        kind="turn_prefix",
        build_prompt=lambda: turn_prefix_prompt(transcript(messages)),
        messages=messages,
        max_tokens=turn_prefix_max_tokens(preparation.settings.reserve_tokens),
        thinking_level=thinking_level,
    )


async def _both(first: Coroutine[Any, Any, str], second: Coroutine[Any, Any, str]) -> tuple[str, str]:
    """Run two calls concurrently; the first failure cancels the other and is raised as is."""
    tasks = [asyncio.ensure_future(first), asyncio.ensure_future(second)]
    try:
        first_text, second_text = await asyncio.gather(*tasks)
    except BaseException:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise
    return first_text, second_text


async def compact(
    preparation: CompactionPreparation,
    summarizer: Summarizer,
    custom_instructions: str | None = None,
    thinking_level: str | None = "off",
) -> CompactionResult:
    """Summarise a preparation (pi's ``compact``); the session thinking level drives reasoning.

    Raises :class:`NothingToCompactError` when both message lists are empty (pi would summarise
    an empty conversation; our protocol reports NothingToCompact instead) and :class:`ModelError`
    (message prefixed "Summarization failed: " / "Turn prefix summarization failed: ") when a
    model call fails. Cancelling the awaiting task cancels both concurrent calls.
    """
    if preparation.is_empty():
        raise NothingToCompactError("Nothing to compact (no messages before the kept region)")
    if preparation.is_split_turn and preparation.turn_prefix_messages:
        prefix_job = _run(
            summarizer, turn_prefix_request(preparation, thinking_level), "Turn prefix summarization failed: "
        )
        if preparation.messages_to_summarize:
            history_job = _run(
                summarizer,
                history_request(preparation, custom_instructions, thinking_level),
                "Summarization failed: ",
            )
            history, prefix = await _both(history_job, prefix_job)
        else:
            history, prefix = NO_PRIOR_HISTORY, await prefix_job
        summary = join_split_turn(history, prefix)
    else:
        summary = await _run(
            summarizer,
            history_request(preparation, custom_instructions, thinking_level),
            "Summarization failed: ",
        )
    lists = compute_file_lists(preparation.file_ops)
    return {
        "summary": with_file_lists(summary, lists["readFiles"], lists["modifiedFiles"]),
        "firstKeptEntryId": preparation.first_kept_entry_id,
        "tokensBefore": preparation.tokens_before,
        "details": {"readFiles": lists["readFiles"], "modifiedFiles": lists["modifiedFiles"]},
    }


class BranchSummaryResult(TypedDict):
    """Fields of the ``branch_summary`` entry to append (``fromId`` is the caller's)."""

    summary: str
    details: FileLists


async def generate_branch_summary(
    entries: Sequence[Mapping[str, Any]],
    summarizer: Summarizer,
    *,
    context_window: int | None = None,
    reserve_tokens: int = 16384,
    custom_instructions: str | None = None,
    replace_instructions: bool = False,
) -> BranchSummaryResult:
    """pi's ``generateBranchSummary`` for entries from :func:`collect_entries_for_branch_summary`.

    The newest messages that fit ``(context_window or 128000) - reserve_tokens`` are summarised
    (tool results left out), with no thinking and 2048 output tokens. With nothing to summarise
    the text is pi's ``No content to summarize`` and the lists are empty. A failed call raises
    :class:`ModelError`; cancellation propagates as ``CancelledError``.
    """
    budget = (context_window or DEFAULT_BRANCH_CONTEXT_WINDOW) - reserve_tokens
    prepared = prepare_branch_entries(entries, budget)
    if not prepared.messages:
        return {"summary": NO_BRANCH_CONTENT, "details": {"readFiles": [], "modifiedFiles": []}}
    request = SummaryRequest(
        kind="branch",
        build_prompt=lambda: branch_prompt(
            transcript(prepared.messages), custom_instructions, replace_instructions
        ),
        messages=prepared.messages,
        max_tokens=BRANCH_MAX_TOKENS,
        custom_instructions=custom_instructions or None,
        thinking_level=None,
        extra={"replaceInstructions": replace_instructions},
    )
    text = await summarizer.summarize(request)
    lists = compute_file_lists(prepared.file_ops)
    return {
        "summary": finish_branch_summary(text, lists["readFiles"], lists["modifiedFiles"]),
        "details": lists,
    }
