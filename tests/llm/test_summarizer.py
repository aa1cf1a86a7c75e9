"""compact() and branch summaries with the offline digest and with the real SDK against the fake."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from pi_lsp.compaction import CompactionSettings, prepare_compaction
from pi_lsp.compaction.prepare import CompactionPreparation
from pi_lsp.llm import (
    AnthropicClient,
    AnthropicSummarizer,
    ModelError,
    NothingToCompactError,
    OfflineSummarizer,
    RetryPolicy,
    choose_summarizer,
    collect_entries_for_branch_summary,
    compact,
    generate_branch_summary,
)
from pi_lsp.llm.offline import OFFLINE_LABEL
from pi_lsp.llm.prompts import (
    BRANCH_INSTRUCTIONS,
    BRANCH_SUMMARY_PREAMBLE,
    SPLIT_TURN_SEPARATOR,
    SYSTEM_PROMPT,
)
from pi_lsp.session.context import index_by_id
from tests.compaction.helpers import BEFORE, BRANCHED, load_entries
from tests.llm.fake_anthropic import FakeAnthropic, Recorded, Reply, error_json, text_stream

KEY = "sk-ant-test-SECRET-123"


def before_preparation() -> CompactionPreparation:
    prep = prepare_compaction(load_entries(BEFORE), CompactionSettings())
    assert prep is not None and prep.is_split_turn and prep.messages_to_summarize
    return prep


def summarizer_for(fake: FakeAnthropic, retries: int = 0) -> AnthropicSummarizer:
    client = AnthropicClient("claude-test", api_key=KEY, base_url=fake.url, timeout=10,
                             retry=RetryPolicy(max_retries=retries, base_delay=0.01))  # fmt: skip
    return AnthropicSummarizer(client)


def prompt_of(request: Recorded) -> str:
    text: str = request.body["messages"][0]["content"][0]["text"]
    return text


def by_kind(request: Recorded) -> Reply:
    is_prefix = "## Original Request" in prompt_of(request)
    return Reply(events=text_stream("PREFIX SUMMARY" if is_prefix else "HISTORY SUMMARY"))


def _split_without_history() -> list[dict[str, Any]]:
    def entry(i: int, message: dict[str, Any]) -> dict[str, Any]:
        return {"type": "message", "id": f"s{i}", "parentId": f"s{i - 1}" if i else None,
                "timestamp": "2026-01-01T00:00:00.000Z", "message": message}  # fmt: skip

    return [
        entry(0, {"role": "user", "content": "u" * 400}),
        entry(1, {"role": "assistant", "content": [{"type": "toolCall", "id": "c", "name": "read",
                                                    "arguments": {"path": "x.py"}}]}),
        entry(2, {"role": "toolResult", "toolCallId": "c", "content": [{"type": "text", "text": "t" * 400}]}),
        entry(3, {"role": "assistant", "content": [{"type": "text", "text": "a" * 400}]}),
    ]  # fmt: skip


async def test_offline_compaction_of_fixture() -> None:
    prep = before_preparation()
    result = await compact(prep, OfflineSummarizer(), thinking_level="high")
    lists = prep.file_lists()
    assert result["firstKeptEntryId"] == prep.first_kept_entry_id
    assert result["tokensBefore"] == 180820
    assert result["details"] == {"readFiles": lists["readFiles"], "modifiedFiles": lists["modifiedFiles"]}
    summary = result["summary"]
    assert summary.startswith(OFFLINE_LABEL) and SPLIT_TURN_SEPARATOR in summary
    assert summary.endswith("\n</modified-files>") and "\n\n<read-files>\n" in summary
    assert result == await compact(prep, OfflineSummarizer())  # deterministic


async def test_nothing_to_compact_and_no_prior_history() -> None:
    path = _split_without_history()
    empty = prepare_compaction(path[:1], CompactionSettings(keep_recent_tokens=1))
    assert empty is not None and empty.is_empty()
    with pytest.raises(NothingToCompactError):
        await compact(empty, OfflineSummarizer())
    prep = prepare_compaction(path, CompactionSettings(keep_recent_tokens=50))
    assert prep is not None and prep.is_split_turn and not prep.messages_to_summarize
    result = await compact(prep, OfflineSummarizer())
    assert result["summary"].startswith("No prior history." + SPLIT_TURN_SEPARATOR + OFFLINE_LABEL)
    assert result["summary"].endswith("<read-files>\nx.py\n</read-files>")


async def test_anthropic_compaction_requests() -> None:
    prep = before_preparation()
    async with FakeAnthropic(route=by_kind) as fake:
        summarizer = summarizer_for(fake)
        assert summarizer.name == "anthropic:claude-test"
        result = await compact(prep, summarizer, custom_instructions="keep it short", thinking_level="high")
        await summarizer.aclose()
    assert len(fake.requests) == 2
    history = next(r for r in fake.requests if "## Original Request" not in prompt_of(r))
    prefix = next(r for r in fake.requests if "## Original Request" in prompt_of(r))
    for request in (history, prefix):
        assert request.body["system"] == SYSTEM_PROMPT and request.body["stream"] is True
        assert request.body["thinking"] == {"type": "enabled", "budget_tokens": 16384}
        assert prompt_of(request).startswith("<conversation>\n[User]: ")
    assert history.body["max_tokens"] == 13107 + 16384 and prefix.body["max_tokens"] == 8192 + 16384
    assert f"<previous-summary>\n{prep.previous_summary}\n</previous-summary>" in prompt_of(history)
    assert prompt_of(history).endswith("\n\nAdditional focus: keep it short")
    assert "<previous-summary>" not in prompt_of(prefix) and "keep it short" not in prompt_of(prefix)
    first_user = next(m for m in prep.turn_prefix_messages if m["role"] == "user")
    first_text = (
        first_user["content"] if isinstance(first_user["content"], str) else first_user["content"][0]["text"]
    )
    assert first_text[:200] in prompt_of(prefix)
    assert result["summary"].startswith(
        "HISTORY SUMMARY" + SPLIT_TURN_SEPARATOR + "PREFIX SUMMARY\n\n<read-files>"
    )


async def test_thinking_off_sends_no_thinking() -> None:
    path = _split_without_history()
    path.append({**path[0], "id": "s4", "parentId": "s3", "message": {"role": "user", "content": "next"}})
    prep = prepare_compaction(path, CompactionSettings(keep_recent_tokens=1))
    assert prep is not None and not prep.is_split_turn and len(prep.messages_to_summarize) == 4
    async with FakeAnthropic() as fake:
        result = await compact(prep, summarizer_for(fake), thinking_level="off")
    (request,) = fake.requests
    assert "thinking" not in request.body and request.body["max_tokens"] == 13107
    assert "<previous-summary>" not in prompt_of(request)
    assert result["summary"] == "ok\n\n<read-files>\nx.py\n</read-files>"


@pytest.mark.parametrize(
    ("failing", "prefix"),
    [("history", "Summarization failed: "), ("prefix", "Turn prefix summarization failed: ")],
)
async def test_model_failures_are_prefixed(failing: str, prefix: str) -> None:
    def route(request: Recorded) -> Reply:
        is_prefix = "## Original Request" in prompt_of(request)
        if (failing == "prefix") == is_prefix:
            return Reply("json", status=400, body=error_json("invalid_request_error", f"bad {KEY}"))
        return Reply(events=text_stream("fine"), event_delay=0.01)

    async with FakeAnthropic(route=route) as fake:
        with pytest.raises(ModelError) as caught:
            await compact(before_preparation(), summarizer_for(fake))
    assert caught.value.message.startswith(prefix) and caught.value.status == 400
    assert KEY not in str(caught.value)


async def test_cancelling_compaction_closes_both_streams() -> None:
    async with FakeAnthropic([Reply(events=text_stream("slow"), stall_after=3)]) as fake:
        task = asyncio.ensure_future(compact(before_preparation(), summarizer_for(fake)))
        await asyncio.wait_for(fake.first_frames_sent.wait(), 5)
        while len(fake.requests) < 2:
            await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(task, 2)
        await asyncio.wait_for(fake.client_disconnected.wait(), 2)


async def test_branch_summary_with_anthropic() -> None:
    by_id = index_by_id(load_entries(BRANCHED))
    entries = collect_entries_for_branch_summary(by_id, "e6", "e17").entries
    async with FakeAnthropic([Reply(events=text_stream("BRANCH"))]) as fake:
        result = await generate_branch_summary(entries, summarizer_for(fake), custom_instructions="mind a.ts")
        await generate_branch_summary(
            entries, summarizer_for(fake), custom_instructions="only this", replace_instructions=True
        )
    assert result["summary"] == BRANCH_SUMMARY_PREAMBLE + "BRANCH\n\n<read-files>\nsrc/a.ts\n</read-files>"
    assert result["details"] == {"readFiles": ["src/a.ts"], "modifiedFiles": []}
    first, second = fake.requests
    assert first.body["max_tokens"] == 2048 and "thinking" not in first.body
    assert prompt_of(first).endswith(BRANCH_INSTRUCTIONS + "\n\nAdditional focus: mind a.ts")
    assert '[Assistant tool calls]: read(path="src/a.ts")' in prompt_of(first)
    assert "[Tool result]" not in prompt_of(first)  # branch summaries leave tool output out
    assert prompt_of(second).endswith("</conversation>\n\nonly this")


async def test_branch_summary_offline_and_empty() -> None:
    assert await generate_branch_summary([], OfflineSummarizer()) == {
        "summary": "No content to summarize", "details": {"readFiles": [], "modifiedFiles": []},
    }  # fmt: skip
    by_id = index_by_id(load_entries(BRANCHED))
    entries = collect_entries_for_branch_summary(by_id, "e17", "e6").entries
    result = await generate_branch_summary(entries, OfflineSummarizer(), context_window=200000)
    assert result["summary"].startswith(BRANCH_SUMMARY_PREAMBLE + OFFLINE_LABEL)
    assert result["details"] == {"readFiles": ["src/a.ts"], "modifiedFiles": ["src/b.ts"]}


def test_choose_summarizer(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    assert choose_summarizer("auto").name == "offline"
    assert choose_summarizer("offline", api_key=KEY).name == "offline"
    assert choose_summarizer("auto", "claude-x", KEY).name == "anthropic:claude-x"
    assert choose_summarizer("anthropic").name.startswith("anthropic:")
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    assert choose_summarizer("auto", "claude-y").name == "anthropic:claude-y"
    with pytest.raises(ValueError):
        choose_summarizer("magic")  # type: ignore[arg-type]
