"""Branch-summary inputs: which entries are abandoned, and what fits the summariser's budget."""

from __future__ import annotations

from typing import Any

from pi_lsp.compaction import collect_entries_for_branch_summary, prepare_branch_entries
from pi_lsp.session.context import index_by_id
from tests.compaction.helpers import BRANCHED, load_entries


def ids(entries: list[Any]) -> list[str]:
    return [e["id"] for e in entries]


def test_collect_from_branch_a_to_branch_b() -> None:
    by_id = index_by_id(load_entries(BRANCHED))
    collected = collect_entries_for_branch_summary(by_id, "e6", "e17")
    assert collected.common_ancestor_id == "e3"
    assert ids(collected.entries) == ["e4", "e5", "e6"]
    prepared = prepare_branch_entries(collected.entries)
    assert [m["role"] for m in prepared.messages] == ["user", "assistant"]  # tool result dropped
    assert prepared.file_ops.as_pi() == {"read": ["src/a.ts"], "written": [], "edited": []}


def test_collect_includes_compactions_and_accepts_a_getter() -> None:
    by_id = index_by_id(load_entries(BRANCHED))
    collected = collect_entries_for_branch_summary(by_id.get, "e17", "e5")
    assert collected.common_ancestor_id == "e3"
    assert ids(collected.entries) == [f"e{i}" for i in range(7, 18)]
    prepared = prepare_branch_entries(collected.entries)
    assert [m["role"] for m in prepared.messages] == [
        "user", "assistant", "branchSummary", "compactionSummary", "user", "custom", "assistant",
    ]  # fmt: skip
    # Lists of the earlier branch summary are inherited; the compaction's details are not.
    assert prepared.file_ops.as_pi() == {"read": ["src/a.ts"], "written": [], "edited": ["src/b.ts"]}


def test_collect_edge_cases() -> None:
    by_id = index_by_id(load_entries(BRANCHED))
    assert collect_entries_for_branch_summary(by_id, None, "e5").entries == []
    same = collect_entries_for_branch_summary(by_id, "e6", "e6")
    assert same.entries == [] and same.common_ancestor_id == "e6"
    ancestor = collect_entries_for_branch_summary(by_id, "e6", "e2")
    assert ids(ancestor.entries) == ["e3", "e4", "e5", "e6"]


def _message(i: int, role: str, chars: int) -> dict[str, Any]:
    body: dict[str, Any] = {"role": role, "content": "x" * chars}
    return {"type": "message", "id": f"m{i}", "parentId": None, "message": body}


def test_budget_keeps_newest_and_squeezes_in_summaries() -> None:
    entries = [_message(0, "user", 400), _message(1, "user", 400), _message(2, "user", 400)]
    assert len(prepare_branch_entries(entries, 0).messages) == 3  # 0 = no limit
    fitted = prepare_branch_entries(entries, 250)
    assert fitted.total_tokens == 200 and len(fitted.messages) == 2
    summary = {"type": "branch_summary", "id": "s", "summary": "y" * 400, "fromId": "x", "timestamp": "t"}
    # Under 90 % of the budget used → an overflowing summary entry is still included, then stop.
    squeezed = prepare_branch_entries([_message(9, "user", 4), summary, *entries[2:]], 150)
    assert [m["role"] for m in squeezed.messages] == ["branchSummary", "user"]
    assert squeezed.total_tokens == 200
    # Over 90 % already used → it is not.
    full = prepare_branch_entries([summary, _message(5, "user", 560)], 150)
    assert [m["role"] for m in full.messages] == ["user"]
