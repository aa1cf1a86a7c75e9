"""Model-facing side of compaction: transcripts, prompts, the Anthropic client, summarisers.

The names below are imported from their modules on first use: ``pi_lsp.llm.auth`` is on the
path to a server's first answer, the summarisers and the client are not (docs/benchmarks.md,
"Start-up").
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pi_lsp.llm.anthropic_client import AnthropicClient, Completion, ModelError, RetryPolicy
    from pi_lsp.llm.summarizer import (
        AnthropicSummarizer,
        BranchSummaryResult,
        CompactionResult,
        NothingToCompactError,
        OfflineSummarizer,
        Summarizer,
        choose_summarizer,
        collect_entries_for_branch_summary,
        compact,
        generate_branch_summary,
        prepare_branch_entries,
    )

_MODULE_OF = {
    "AnthropicClient": "anthropic_client",
    "Completion": "anthropic_client",
    "ModelError": "anthropic_client",
    "RetryPolicy": "anthropic_client",
    "AnthropicSummarizer": "summarizer",
    "BranchSummaryResult": "summarizer",
    "CompactionResult": "summarizer",
    "NothingToCompactError": "summarizer",
    "OfflineSummarizer": "summarizer",
    "Summarizer": "summarizer",
    "choose_summarizer": "summarizer",
    "collect_entries_for_branch_summary": "summarizer",
    "compact": "summarizer",
    "generate_branch_summary": "summarizer",
    "prepare_branch_entries": "summarizer",
}

__all__ = [
    "AnthropicClient",
    "AnthropicSummarizer",
    "BranchSummaryResult",
    "CompactionResult",
    "Completion",
    "ModelError",
    "NothingToCompactError",
    "OfflineSummarizer",
    "RetryPolicy",
    "Summarizer",
    "choose_summarizer",
    "collect_entries_for_branch_summary",
    "compact",
    "generate_branch_summary",
    "prepare_branch_entries",
]


def __getattr__(name: str) -> Any:
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value
