"""pi-compatible context compaction: token accounting, cut points, file tracking, preparation.

Everything here is pure and synchronous; model calls live in :mod:`pi_lsp.llm`. Typical use by
the server, per session::

    cache = TokenCache()                      # one per open session
    cache.warm(entries)                       # once, after loading
    usage = context_usage_for_path(branch, context_window, settings, tokenizer, cache)
    prep = prepare_compaction(branch, settings, cache)   # None → NothingToCompact
    prep.summary_view()                       # pi/prepareCompaction dry run
    result = await pi_lsp.llm.compact(prep, summarizer, custom_instructions, thinking_level)
"""

from pi_lsp.compaction.branch import (
    BranchCollection,
    BranchPreparation,
    collect_entries_for_branch_summary,
    prepare_branch_entries,
)
from pi_lsp.compaction.cut_point import CutPoint, find_cut_point, find_turn_start_index
from pi_lsp.compaction.file_ops import (
    FileLists,
    FileOps,
    compute_file_lists,
    extract_file_ops,
    format_file_operations,
)
from pi_lsp.compaction.prepare import (
    CompactionPreparation,
    CompactionSettings,
    PreparationSummary,
    prepare_compaction,
)
from pi_lsp.compaction.tokens import (
    ContextEstimate,
    ContextUsage,
    EstimateTokenizer,
    TiktokenTokenizer,
    TokenCache,
    Tokenizer,
    calculate_context_tokens,
    context_usage,
    context_usage_for_path,
    count_message_tokens,
    estimate_context_tokens,
    estimate_message_tokens,
    get_last_assistant_usage,
    make_tokenizer,
    should_compact,
)

__all__ = [
    "BranchCollection",
    "BranchPreparation",
    "CompactionPreparation",
    "CompactionSettings",
    "ContextEstimate",
    "ContextUsage",
    "CutPoint",
    "EstimateTokenizer",
    "FileLists",
    "FileOps",
    "PreparationSummary",
    "TiktokenTokenizer",
    "TokenCache",
    "Tokenizer",
    "calculate_context_tokens",
    "collect_entries_for_branch_summary",
    "compute_file_lists",
    "context_usage",
    "context_usage_for_path",
    "count_message_tokens",
    "estimate_context_tokens",
    "estimate_message_tokens",
    "extract_file_ops",
    "find_cut_point",
    "find_turn_start_index",
    "format_file_operations",
    "get_last_assistant_usage",
    "make_tokenizer",
    "prepare_branch_entries",
    "prepare_compaction",
    "should_compact",
]
