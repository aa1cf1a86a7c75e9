"""prepareCompaction parity with pi 0.73.1: fixtures, the repeated-compaction fix, random paths."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from pi_lsp.compaction import CompactionSettings, TokenCache, prepare_compaction
from pi_lsp.compaction.prepare import is_linear_path
from pi_lsp.jscompat import js_stringify
from tests.compaction.gen import Gen
from tests.compaction.helpers import BEFORE, BRANCHED, LARGE, load_entries
from tests.oracle import PiOracle


def roles(messages: list[dict[str, Any]]) -> list[str]:
    return [m["role"] for m in messages]


def test_before_compaction_fixture() -> None:
    entries = load_entries(BEFORE)
    prep = prepare_compaction(entries, CompactionSettings())
    assert prep is not None
    assert len(prep.messages_to_summarize) == 383
    assert len(prep.turn_prefix_messages) == 7
    assert prep.tokens_before == 180820
    assert prep.is_split_turn and prep.has_previous_summary()
    assert prep.first_kept_entry_id == entries[946]["id"]
    view = prep.summary_view()
    assert set(view) == {
        "firstKeptEntryId", "isSplitTurn", "tokensBefore", "summarizeCount", "turnPrefixCount",
        "readFiles", "modifiedFiles", "hasPreviousSummary",
    }  # fmt: skip
    assert (view["summarizeCount"], view["turnPrefixCount"]) == (383, 7)
    assert len(view["modifiedFiles"]) == 12
    assert view["readFiles"] == sorted(view["readFiles"])


def _tiny_path() -> list[dict[str, Any]]:
    def entry(i: int, kind: str, **fields: Any) -> dict[str, Any]:
        parent = f"n{i - 1}" if i else None
        return {
            "type": kind,
            "id": f"n{i}",
            "parentId": parent,
            "timestamp": f"2026-01-01T00:00:0{i}.000Z",
            **fields,
        }

    def asst(text: str, total: int) -> dict[str, Any]:
        use = {"input": total, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": total}
        content = [{"type": "text", "text": text}]
        return {"role": "assistant", "content": content, "usage": use, "stopReason": "stop",
                "provider": "anthropic", "model": "m", "timestamp": 1}  # fmt: skip

    return [
        entry(0, "message", message={"role": "user", "content": "first question", "timestamp": 1}),
        entry(1, "message", message=asst("first answer", 1000)),
        entry(2, "message", message={"role": "user", "content": "second question", "timestamp": 2}),
        entry(3, "message", message=asst("second answer", 2000)),
        entry(
            4, "compaction", summary="older summary", firstKeptEntryId="n2", tokensBefore=1000, fromHook=False
        ),
        entry(5, "message", message={"role": "user", "content": "x" * 40, "timestamp": 3}),
    ]


def test_repeated_compaction_resummarises_previous_kept_region() -> None:
    prep = prepare_compaction(_tiny_path(), CompactionSettings(keep_recent_tokens=5))
    assert prep is not None
    assert roles(prep.messages_to_summarize) == ["user", "assistant"]
    assert prep.tokens_before == 2010  # a2's usage + ceil(40 / 4) for u3
    assert prep.previous_summary == "older summary"
    assert prep.first_kept_entry_id == "n5" and not prep.is_split_turn


def test_nothing_to_prepare() -> None:
    assert prepare_compaction([]) is None
    path = _tiny_path()[:5]  # ends with the compaction: "Already compacted"
    assert prepare_compaction(path) is None
    no_ids = [{"type": "message", "message": {"role": "user", "content": "hi"}}]
    assert prepare_compaction(no_ids) is None


def test_small_session_prepares_an_empty_summary_like_pi() -> None:
    path = _tiny_path()[:4]
    prep = prepare_compaction(path)
    assert prep is not None and prep.is_empty()
    assert prep.first_kept_entry_id == "n0" and prep.summary_view()["summarizeCount"] == 0


def test_warm_cache_gives_the_same_answer() -> None:
    entries = load_entries(LARGE)
    cold = prepare_compaction(entries)
    cache = TokenCache()
    cache.warm(entries)
    warm = prepare_compaction(entries, cache=cache)
    assert cold is not None and warm is not None
    assert cold.summary_view() == warm.summary_view()


def test_linear_path_detection() -> None:
    path = _tiny_path()
    assert is_linear_path(path)
    assert not is_linear_path([path[0], path[2]])
    assert not is_linear_path([path[0], path[0]])


def _normalised(prep: Any) -> Any:
    return None if prep is None else orjson.loads(js_stringify(prep.as_pi()) or "null")


@pytest.mark.oracle
def test_tiny_path_matches_pi(pi_oracle: PiOracle) -> None:
    path = _tiny_path()
    expected = pi_oracle.result("prepare", pathEntries=path, settings={"keepRecentTokens": 5})
    assert _normalised(prepare_compaction(path, CompactionSettings(keep_recent_tokens=5))) == expected


@pytest.mark.oracle
@pytest.mark.parametrize("fixture", [BEFORE, LARGE, BRANCHED], ids=["before", "large", "branched"])
def test_fixtures_match_pi_structurally(pi_oracle: PiOracle, fixture: Any) -> None:
    response = pi_oracle.request("prepare", path=str(fixture), summaryOnly=True)
    expected, info = response["result"], response["info"]
    prep = prepare_compaction(load_entries(fixture))
    assert prep is not None
    assert roles(prep.messages_to_summarize) == expected["messagesToSummarize"]
    assert roles(prep.turn_prefix_messages) == expected["turnPrefixMessages"]
    assert prep.tokens_before == expected["tokensBefore"]
    assert prep.is_split_turn == expected["isSplitTurn"]
    assert prep.previous_summary == expected.get("previousSummary")
    assert prep.file_ops.as_pi() == expected["fileOps"]
    assert prep.file_lists() == info["fileLists"]


@pytest.mark.oracle
def test_random_paths_match_pi_field_by_field(pi_oracle: PiOracle) -> None:
    prepared = with_previous = split = broken = 0
    for seed in range(220):
        gen = Gen(10_000 + seed)
        path = gen.branch(compaction_rate=0.1)
        if seed % 10 == 9 and len(path) > 3:  # a path whose parent links do not form one chain
            path[len(path) // 2]["parentId"] = "nowhere"
            broken += 1
        keep = gen.rng.choice([1, 50, 300, 1000, 5000, 20000])
        settings = CompactionSettings(keep_recent_tokens=keep, reserve_tokens=gen.rng.randint(1000, 20000))
        response = pi_oracle.request("prepare", pathEntries=path, settings=settings.as_pi())
        expected = response["result"]
        ours = prepare_compaction(path, settings, TokenCache() if seed % 2 else None)
        if expected is None:
            assert ours is None, seed
            continue
        assert ours is not None, seed
        mine = _normalised(ours)
        for key in ("firstKeptEntryId", "isSplitTurn", "tokensBefore", "fileOps", "settings"):
            assert mine[key] == expected[key], (seed, key)
        assert mine.get("previousSummary") == expected.get("previousSummary"), seed
        assert mine["messagesToSummarize"] == expected["messagesToSummarize"], seed
        assert mine["turnPrefixMessages"] == expected["turnPrefixMessages"], seed
        assert ours.file_lists() == response["info"]["fileLists"], seed
        prepared += 1
        with_previous += ours.previous_summary is not None
        split += ours.is_split_turn
    assert prepared >= 150 and with_previous >= 30 and split >= 20 and broken >= 20
