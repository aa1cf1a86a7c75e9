"""Model-facing side of compaction: transcripts, prompts, the Anthropic client, summarisers."""

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
