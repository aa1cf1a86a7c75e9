"""pi's buildSessionContext (behaviours 1–14): the LLM context of a path of entries.

Part of pi's own session-manager acceptance behaviours (session spec §6, numbers 1–86) on our
API; each test name carries the behaviour number. Where pi 0.73.1 differs from the 0.58.3 snapshot
the spec was written from (delta doc), the newest pi wins. Where we deliberately differ from pi,
the docstring says so and the test checks our documented behaviour instead.
"""

from __future__ import annotations

from pi_lsp.session import (
    build_session_context,
)
from tests.session.helpers import (
    branch_summary_entry,
    compaction_entry,
    model_entry,
    msg_entry,
    texts,
    thinking_entry,
)

# ---------------------------------------------------------------------------------------------
# build-context.test.ts (pure buildSessionContext)


def test_01_empty_entries_returns_empty_context() -> None:
    assert build_session_context([]) == {"messages": [], "thinkingLevel": "off", "model": None}


def test_02_single_user_message() -> None:
    ctx = build_session_context([msg_entry("1", None, "user", "hello")])
    assert [m["role"] for m in ctx["messages"]] == ["user"]


def test_03_simple_conversation() -> None:
    entries = [
        msg_entry("1", None, "user", "hello"),
        msg_entry("2", "1", "assistant", "hi there"),
        msg_entry("3", "2", "user", "how are you"),
        msg_entry("4", "3", "assistant", "great"),
    ]
    ctx = build_session_context(entries)
    assert [m["role"] for m in ctx["messages"]] == ["user", "assistant", "user", "assistant"]


def test_04_tracks_thinking_level_changes() -> None:
    entries = [
        msg_entry("1", None, "user", "hello"),
        thinking_entry("2", "1", "high"),
        msg_entry("3", "2", "assistant", "thinking hard"),
    ]
    ctx = build_session_context(entries)
    assert ctx["thinkingLevel"] == "high"
    assert len(ctx["messages"]) == 2


def test_05_tracks_model_from_assistant_message() -> None:
    entries = [msg_entry("1", None, "user", "hello"), msg_entry("2", "1", "assistant", "hi")]
    assert build_session_context(entries)["model"] == {"provider": "anthropic", "modelId": "claude-test"}


def test_06_assistant_model_wins_over_earlier_model_change() -> None:
    entries = [
        msg_entry("1", None, "user", "hello"),
        model_entry("2", "1", "openai", "gpt-4"),
        msg_entry("3", "2", "assistant", "hi"),
    ]
    assert build_session_context(entries)["model"] == {"provider": "anthropic", "modelId": "claude-test"}
    # And a model_change after the assistant is what counts then.
    entries.append(model_entry("4", "3", "openai", "gpt-4"))
    assert build_session_context(entries)["model"] == {"provider": "openai", "modelId": "gpt-4"}


def test_07_includes_summary_before_kept_messages() -> None:
    entries = [
        msg_entry("1", None, "user", "first"),
        msg_entry("2", "1", "assistant", "response1"),
        msg_entry("3", "2", "user", "second"),
        msg_entry("4", "3", "assistant", "response2"),
        compaction_entry("5", "4", "Summary of first two turns", "3"),
        msg_entry("6", "5", "user", "third"),
        msg_entry("7", "6", "assistant", "response3"),
    ]
    ctx = build_session_context(entries)
    assert len(ctx["messages"]) == 5
    assert ctx["messages"][0]["role"] == "compactionSummary"
    assert "Summary of first two turns" in ctx["messages"][0]["summary"]
    assert ctx["messages"][0]["tokensBefore"] == 1000
    assert texts(ctx["messages"])[1:] == ["second", "response2", "third", "response3"]


def test_08_compaction_keeping_from_first_message() -> None:
    entries = [
        msg_entry("1", None, "user", "first"),
        msg_entry("2", "1", "assistant", "response1"),
        compaction_entry("3", "2", "Empty summary", "1"),
        msg_entry("4", "3", "user", "second"),
    ]
    ctx = build_session_context(entries)
    assert len(ctx["messages"]) == 4
    assert ctx["messages"][0]["role"] == "compactionSummary"
    assert texts(ctx["messages"])[1:] == ["first", "response1", "second"]


def test_09_multiple_compactions_uses_latest() -> None:
    entries = [
        msg_entry("1", None, "user", "a"),
        msg_entry("2", "1", "assistant", "b"),
        compaction_entry("3", "2", "First summary", "1"),
        msg_entry("4", "3", "user", "c"),
        msg_entry("5", "4", "assistant", "d"),
        compaction_entry("6", "5", "Second summary", "4"),
        msg_entry("7", "6", "user", "e"),
    ]
    ctx = build_session_context(entries)
    assert len(ctx["messages"]) == 4
    assert ctx["messages"][0]["summary"] == "Second summary"
    assert texts(ctx["messages"])[1:] == ["c", "d", "e"]


def test_10_follows_path_to_specified_leaf() -> None:
    entries = [
        msg_entry("1", None, "user", "start"),
        msg_entry("2", "1", "assistant", "response"),
        msg_entry("3", "2", "user", "branch A"),
        msg_entry("4", "2", "user", "branch B"),
    ]
    assert texts(build_session_context(entries, "3")["messages"]) == ["start", "response", "branch A"]
    assert texts(build_session_context(entries, "4")["messages"]) == ["start", "response", "branch B"]


def test_11_includes_branch_summary_in_path() -> None:
    entries = [
        msg_entry("1", None, "user", "start"),
        msg_entry("2", "1", "assistant", "response"),
        msg_entry("3", "2", "user", "abandoned path"),
        branch_summary_entry("4", "2", "Summary of abandoned work"),
        msg_entry("5", "4", "user", "new direction"),
    ]
    ctx = build_session_context(entries, "5")
    assert len(ctx["messages"]) == 4
    assert ctx["messages"][2]["role"] == "branchSummary"
    assert "Summary of abandoned work" in ctx["messages"][2]["summary"]
    assert ctx["messages"][2]["fromId"] == "2"
    assert texts(ctx["messages"])[3] == "new direction"


def test_11b_empty_branch_summary_emits_nothing() -> None:
    entries = [msg_entry("1", None, "user", "start"), branch_summary_entry("2", "1", "")]
    assert texts(build_session_context(entries)["messages"]) == ["start"]


def test_12_complex_tree_with_branches_and_compaction() -> None:
    entries = [
        msg_entry("1", None, "user", "start"),
        msg_entry("2", "1", "assistant", "r1"),
        msg_entry("3", "2", "user", "q2"),
        msg_entry("4", "3", "assistant", "r2"),
        compaction_entry("5", "4", "Compacted history", "3"),
        msg_entry("6", "5", "user", "q3"),
        msg_entry("7", "6", "assistant", "r3"),
        # abandoned branch from 3
        msg_entry("8", "3", "user", "wrong path"),
        msg_entry("9", "8", "assistant", "wrong response"),
        branch_summary_entry("10", "3", "Tried wrong approach"),
        msg_entry("11", "10", "user", "better approach"),
    ]
    ctx7 = build_session_context(entries, "7")
    assert ctx7["messages"][0]["role"] == "compactionSummary"
    assert texts(ctx7["messages"])[1:] == ["q2", "r2", "q3", "r3"]
    ctx11 = build_session_context(entries, "11")
    assert texts(ctx11["messages"]) == [
        "start",
        "r1",
        "q2",
        "[branchSummary] Tried wrong approach",
        "better approach",
    ]


def test_13_uses_last_entry_when_leaf_not_found() -> None:
    entries = [msg_entry("1", None, "user", "hello"), msg_entry("2", "1", "assistant", "hi")]
    assert len(build_session_context(entries, "nonexistent")["messages"]) == 2
    # and the empty string is treated as "not given" as well
    assert len(build_session_context(entries, "")["messages"]) == 2


def test_13b_null_leaf_gives_empty_context() -> None:
    entries = [thinking_entry("0", None, "high"), msg_entry("1", "0", "user", "hello")]
    assert build_session_context(entries, None) == {"messages": [], "thinkingLevel": "off", "model": None}


def test_14_handles_orphaned_entries() -> None:
    entries = [msg_entry("1", None, "user", "hello"), msg_entry("2", "missing", "assistant", "orphan")]
    ctx = build_session_context(entries, "2")
    assert texts(ctx["messages"]) == ["orphan"]
