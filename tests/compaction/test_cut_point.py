"""Cut points: pi fixtures, hand-made edge cases and 250 random branches compared with pi."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pi_lsp.compaction import TokenCache, find_cut_point, find_turn_start_index
from pi_lsp.compaction.cut_point import find_valid_cut_points
from tests.compaction.gen import Gen
from tests.compaction.helpers import BEFORE, BRANCHED, LARGE, load_entries
from tests.oracle import PiOracle

FIXTURE_CASES = [
    (LARGE, 20000, (837, 834, True)),
    (BEFORE, 20000, (946, 939, True)),
    (BRANCHED, 10, (7, 6, True)),
]


def _as_tuple(cut: Any) -> tuple[int, int, bool]:
    return (cut.first_kept_entry_index, cut.turn_start_index, cut.is_split_turn)


@pytest.mark.parametrize(("path", "keep", "expected"), FIXTURE_CASES, ids=["large", "before", "branched"])
def test_fixture_cut_points(path: Path, keep: int, expected: tuple[int, int, bool]) -> None:
    entries = load_entries(path)
    assert _as_tuple(find_cut_point(entries, 0, len(entries), keep)) == expected
    cache = TokenCache()
    assert _as_tuple(find_cut_point(entries, 0, len(entries), keep, cache)) == expected
    assert len(cache) > 0


def msg(i: int, role: str, chars: int = 40, kind: str = "message") -> dict[str, Any]:
    entry: dict[str, Any] = {
        "type": kind,
        "id": f"e{i}",
        "parentId": None,
        "timestamp": "2026-01-01T00:00:00Z",
    }
    if kind == "message":
        if role == "assistant":
            entry["message"] = {"role": role, "content": [{"type": "text", "text": "x" * chars}]}
        elif role == "bashExecution":
            entry["message"] = {"role": role, "command": "", "output": "x" * chars}
        else:
            entry["message"] = {"role": role, "content": "x" * chars}
    return entry


def test_empty_range_and_no_cut_points() -> None:
    assert _as_tuple(find_cut_point([], 0, 0, 10)) == (0, -1, False)
    only_tools = [msg(0, "toolResult"), msg(1, "x", kind="label")]
    assert _as_tuple(find_cut_point(only_tools, 0, 2, 1)) == (0, -1, False)


def test_everything_fits_cuts_at_first_cut_point() -> None:
    entries = [msg(0, "x", kind="model_change"), msg(1, "user"), msg(2, "assistant")]
    # The metadata entry before the first cut point is pulled into the kept region.
    assert _as_tuple(find_cut_point(entries, 0, 3, 10**6)) == (0, -1, False)


def test_tool_result_crossing_budget_moves_cut_forward() -> None:
    entries = [msg(0, "user"), msg(1, "assistant"), msg(2, "toolResult", 400), msg(3, "assistant", 4)]
    assert _as_tuple(find_cut_point(entries, 0, 4, 50)) == (3, 0, True)


def test_compaction_is_never_a_cut_point_and_stops_pull_back() -> None:
    entries = [msg(0, "user"), msg(1, "x", kind="compaction"), msg(2, "x", kind="label"), msg(3, "user", 400)]
    assert find_valid_cut_points(entries, 0, 4) == [0, 3]
    # The label is pulled into the kept region (and, as in pi, then reads as a split turn).
    assert _as_tuple(find_cut_point(entries, 0, 4, 50)) == (2, 0, True)
    entries[2] = msg(2, "x", kind="compaction")
    assert _as_tuple(find_cut_point(entries, 0, 4, 50)) == (3, -1, False)


def test_custom_message_cut_is_split_with_empty_prefix() -> None:
    entries = [msg(0, "user", 400), msg(1, "x", kind="custom_message"), msg(2, "assistant", 400)]
    assert _as_tuple(find_cut_point(entries, 0, 3, 100)) == (1, 1, True)


def test_metadata_before_user_is_misclassified_as_split_turn_like_pi() -> None:
    entries = [msg(0, "user"), msg(1, "assistant"), msg(2, "x", kind="model_change"), msg(3, "user", 400)]
    assert _as_tuple(find_cut_point(entries, 0, 4, 50)) == (2, 0, True)


def test_find_turn_start_index() -> None:
    entries = [msg(0, "user"), msg(1, "assistant"), msg(2, "bashExecution"), msg(3, "assistant")]
    assert find_turn_start_index(entries, 3, 0) == 2
    assert find_turn_start_index(entries, 1, 0) == 0
    assert find_turn_start_index(entries, 1, 1) == -1
    entries.append(msg(4, "x", kind="branch_summary"))
    assert find_turn_start_index(entries, 4, 0) == 4


@pytest.mark.oracle
@pytest.mark.parametrize(("path", "keep", "expected"), FIXTURE_CASES, ids=["large", "before", "branched"])
def test_fixture_cut_points_match_pi(
    pi_oracle: PiOracle, path: Path, keep: int, expected: tuple[int, int, bool]
) -> None:
    result = pi_oracle.result("cut", path=str(path), keepRecentTokens=keep)
    assert (result["firstKeptEntryIndex"], result["turnStartIndex"], result["isSplitTurn"]) == expected


@pytest.mark.oracle
def test_random_branches_match_pi(pi_oracle: PiOracle) -> None:
    kinds_seen: set[str] = set()
    splits = 0
    for seed in range(250):
        gen = Gen(seed)
        entries = gen.branch()
        kinds_seen.update(e["type"] for e in entries)
        kinds_seen.update(e["message"]["role"] for e in entries if e["type"] == "message")
        start = gen.rng.randint(0, len(entries))
        end = gen.rng.randint(start, len(entries))
        keep = gen.rng.choice([1, 50, 300, 1000, 5000, 20000])
        expected = pi_oracle.result(
            "cut", entries=entries, startIndex=start, endIndex=end, keepRecentTokens=keep
        )
        ours = find_cut_point(entries, start, end, keep, TokenCache() if seed % 2 else None)
        assert ours.as_pi() == expected, (seed, start, end, keep)
        splits += ours.is_split_turn
    assert splits > 20
    assert {
        "compaction",
        "custom_message",
        "branch_summary",
        "bashExecution",
        "toolResult",
        "custom",
    } <= kinds_seen
