"""Compaction through the real server: context usage, the dry run against pi, ``pi/compact`` with
the real Anthropic SDK talking to a loopback fake of the Messages API, and the offline summariser.
"""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path
from typing import Any

import orjson
import pytest

from pi_lsp.compaction import CompactionSettings, context_usage_for_path, make_tokenizer
from pi_lsp.llm.offline import OFFLINE_LABEL
from pi_lsp.llm.prompts import SPLIT_TURN_SEPARATOR, SYSTEM_PROMPT
from pi_lsp.session import SessionManager
from tests.llm.fake_anthropic import FakeAnthropic, Recorded, Reply, text_stream
from tests.oracle import PiOracle
from tests.server.compaction_support import (
    KEY,
    assistant_entry,
    cancel,
    configure,
    events,
    lsp_server,
    next_event,
    prompt_of,
    send,
    sent_key,
    user_entry,
)
from tests.server.support import PI_FIXTURES, call, call_error, wait_until

BEFORE = PI_FIXTURES / "before-compaction.jsonl"


def copy_before(tmp_path: Path) -> Path:
    target = tmp_path / "before-compaction.jsonl"
    shutil.copyfile(BEFORE, target)
    return target


def local_usage(path: Path, leaf: str | None, window: int, tokenizer: str) -> dict[str, Any]:
    """What ``context_usage_for_path`` says in this process for the file the server wrote."""
    manager = SessionManager.open(path, persist=False)
    branch = manager.get_branch(leaf) if leaf is not None else manager.get_branch()
    return dict(context_usage_for_path(branch, window, CompactionSettings(), make_tokenizer(tokenizer)))


def maybe_oracle(request: pytest.FixtureRequest) -> PiOracle | None:
    """The pi oracle when node and pi are installed (its checks are skipped otherwise)."""
    try:
        oracle: PiOracle = request.getfixturevalue("pi_oracle")
    except pytest.skip.Exception:
        return None
    return oracle


@pytest.mark.oracle
async def test_usage_and_prepare_match_pi(tmp_path: Path, pi_oracle: PiOracle) -> None:
    file = copy_before(tmp_path)
    async with lsp_server(tmp_path, key=None) as client:
        await call(client, "pi/openSession", {"path": str(file)})
        context = await call(client, "pi/buildContext", {})
        usage = context["usage"]
        assert set(usage) == {
            "tokens",
            "usageTokens",
            "trailingTokens",
            "contextWindow",
            "percent",
            "shouldCompact",
        }
        assert usage == local_usage(file, None, 200000, "tiktoken")
        assert usage["contextWindow"] == 200000 and usage["percent"] == usage["tokens"] / 2000
        branch = (await call(client, "pi/getBranch", {}))["entries"]
        middle = branch[600]["id"]
        at_middle = (await call(client, "pi/buildContext", {"leafId": middle}))["usage"]
        assert at_middle == local_usage(file, middle, 200000, "tiktoken")
        assert (await call(client, "pi/buildContext", {"leafId": None}))["usage"]["tokens"] == 0

        # pi's own estimate: with tokenizer "estimate" the numbers are pi's estimateContextTokens
        configure(client, {"tokenizer": "estimate", "contextWindow": 150000})
        estimate = (await call(client, "pi/buildContext", {}))["usage"]
        pi_messages = pi_oracle.result("context", path=str(file))["messages"]
        pi_estimate = pi_oracle.result("estimate", messages=pi_messages)["context"]
        assert estimate["tokens"] == pi_estimate["tokens"]
        assert estimate["usageTokens"] == pi_estimate["usageTokens"]
        assert estimate["trailingTokens"] == pi_estimate["trailingTokens"]
        assert estimate["contextWindow"] == 150000 and estimate["shouldCompact"] is True
        assert estimate == local_usage(file, None, 150000, "estimate")

        # the dry run is pi's prepareCompaction (summaryOnly), and writes nothing
        before_bytes = file.read_bytes()
        prepared = await call(client, "pi/prepareCompaction", {})
        pi_prepared = pi_oracle.request("prepare", path=str(BEFORE), summaryOnly=True)
        pi_result, info = pi_prepared["result"], pi_prepared["info"]
        assert prepared["summarizeCount"] == len(pi_result["messagesToSummarize"]) == 383
        assert prepared["turnPrefixCount"] == len(pi_result["turnPrefixMessages"]) == 7
        assert prepared["tokensBefore"] == pi_result["tokensBefore"] == 180820
        assert prepared["isSplitTurn"] is pi_result["isSplitTurn"] is True
        assert prepared["hasPreviousSummary"] is True
        assert [e["id"] for e in branch].index(prepared["firstKeptEntryId"]) == info["firstKeptEntryIndex"]
        assert prepared["readFiles"] == info["fileLists"]["readFiles"]
        assert prepared["modifiedFiles"] == info["fileLists"]["modifiedFiles"]
        smaller = await call(client, "pi/prepareCompaction", {"keepRecentTokens": 5000})
        pi_smaller = pi_oracle.request("prepare", path=str(BEFORE), summaryOnly=True,
                                       settings={"keepRecentTokens": 5000})  # fmt: skip
        assert smaller["summarizeCount"] == len(pi_smaller["result"]["messagesToSummarize"])
        ids = [e["id"] for e in branch]
        assert ids.index(smaller["firstKeptEntryId"]) == pi_smaller["info"]["firstKeptEntryIndex"]
        assert file.read_bytes() == before_bytes

        error = await call_error(client, "pi/prepareCompaction", {"keepRecentTokens": "many"})
        assert error.code == -32602
        await call(client, "pi/newSession", {})
        error = await call_error(client, "pi/prepareCompaction", {})
        assert error.code == -32003 and "empty" in error.message


def history_or_prefix(request: Recorded) -> Reply:
    is_prefix = "## Original Request" in prompt_of(request)
    return Reply(events=text_stream("PREFIX SUMMARY" if is_prefix else "HISTORY SUMMARY"))


async def test_compact_through_the_messages_api(tmp_path: Path, request: pytest.FixtureRequest) -> None:
    pi_oracle = maybe_oracle(request)
    file = copy_before(tmp_path)
    async with FakeAnthropic(route=history_or_prefix) as fake:
        settings = {"model": "claude-test-model"}
        async with lsp_server(tmp_path, key=KEY, base_url=fake.url, settings=settings) as client:
            state = await call(client, "pi/openSession", {"path": str(file)})
            first_kept = (await call(client, "pi/prepareCompaction", {}))["firstKeptEntryId"]
            result = await call(client, "pi/compact", {"customInstructions": "Mind the renames.",
                                                       "workDoneToken": "tok-1"})  # fmt: skip
            # events that belong before the answer have arrived with it
            progress = [p["value"]["kind"] for p in events(client, "$/progress") if p["token"] == "tok-1"]
            assert progress[0] == "begin" and progress[-1] == "end" and "report" in progress
            started, ended = events(client, "pi/compactionStarted"), events(client, "pi/compactionEnded")
            assert started == [{"sessionId": state["sessionId"], "reason": "manual"}]
            assert ended[0]["result"] == result and ended[0]["reason"] == "manual"
            changed = await wait_until(
                lambda: [c for c in events(client, "pi/sessionChanged") if c["reason"] == "compaction"]
            )
            assert (
                changed[0]["appendedIds"] == [result["entryId"]] and changed[0]["leafId"] == result["entryId"]
            )

            assert result["summarizer"] == "anthropic:claude-test-model"
            assert result["summary"].startswith("HISTORY SUMMARY" + SPLIT_TURN_SEPARATOR + "PREFIX SUMMARY")
            assert result["firstKeptEntryId"] == first_kept and result["tokensBefore"] == 180820
            assert 0 < result["tokensAfter"] < result["tokensBefore"]
            assert "<modified-files>" in result["summary"] and result["details"]["modifiedFiles"]
            history = next(r for r in fake.requests if "## Original Request" not in prompt_of(r))
            prefix = next(r for r in fake.requests if "## Original Request" in prompt_of(r))
            assert len(fake.requests) == 2 and sent_key(history) == KEY
            for request in (history, prefix):
                assert request.body["model"] == "claude-test-model" and request.body["stream"] is True
                assert request.body["system"] == SYSTEM_PROMPT and "thinking" not in request.body
                assert prompt_of(request).startswith("<conversation>\n[User]: ")
            assert "<previous-summary>\n# Context Checkpoint: Coding Agent Refactoring" in prompt_of(history)
            assert prompt_of(history).endswith("Additional focus: Mind the renames.")
            assert "Mind the renames" not in prompt_of(prefix)

            # the entry as stored, and pi reads the file the same way we do
            entry = (await call(client, "pi/getEntry", {"id": result["entryId"]}))["entry"]
            assert entry["type"] == "compaction" and entry["fromHook"] is False
            assert entry["summary"] == result["summary"] and entry["details"] == result["details"]
            assert entry["firstKeptEntryId"] == first_kept and entry["tokensBefore"] == 180820
            ours = await call(client, "pi/buildContext", {})
            assert ours["usage"]["tokens"] is None and ours["usage"]["percent"] is None  # pi: unknown
            assert ours["messages"][0]["role"] == "compactionSummary"
            if pi_oracle is not None:
                loaded = pi_oracle.result("load", path=str(file), treeFormat="none")
                assert loaded["leafId"] == result["entryId"]
                assert loaded["context"]["messages"] == ours["messages"]

        log_text = client.log_file.read_text()  # type: ignore[attr-defined]
        assert "pi/compact" in log_text and KEY not in log_text
        assert KEY not in file.read_text()


async def test_a_second_compaction_carries_the_first_and_offline_needs_no_api(
    tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    pi_oracle = maybe_oracle(request)
    file = copy_before(tmp_path)
    async with FakeAnthropic(route=history_or_prefix) as fake:
        settings = {"model": "claude-test-model"}
        async with lsp_server(tmp_path, key=KEY, base_url=fake.url, settings=settings) as client:
            state = await call(client, "pi/openSession", {"path": str(file)})
            result = await call(client, "pi/compact", {})

            # a second compaction carries the first summary as the previous one
            configure(client, {"model": "claude-test-model", "compaction": {"keepRecentTokens": 5}})
            await call(
                client,
                "pi/appendEntry",
                {"entry": {"type": "thinking_level_change", "thinkingLevel": "high"}},
            )
            await call(client, "pi/appendEntry", {"entry": user_entry("Now rename the config module. " * 20)})
            await call(client, "pi/appendEntry", {"entry": assistant_entry("Renamed it.", 5000)})
            await call(client, "pi/appendEntry", {"entry": user_entry("Thanks, run the checks.")})
            await call(client, "pi/appendEntry", {"entry": assistant_entry("All green.", 5100)})
            fake.requests.clear()
            second = await call(client, "pi/compact", {})
            (request,) = [r for r in fake.requests if "## Original Request" not in prompt_of(r)]
            assert f"<previous-summary>\n{result['summary']}\n</previous-summary>" in prompt_of(request)
            assert "Now rename the config module." in prompt_of(request)  # summarised now
            assert "Thanks, run the checks." not in prompt_of(request)  # kept
            assert request.body["thinking"] == {"type": "enabled", "budget_tokens": 16384}  # branch: high
            assert second["entryId"] != result["entryId"]
            ours = await call(client, "pi/buildContext", {})
            assert ours["messages"][0]["summary"] == second["summary"]
            if pi_oracle is not None:
                loaded = pi_oracle.result("load", path=str(file), treeFormat="none")
                assert loaded["context"]["messages"] == ours["messages"]

            # summarizer "offline" is honoured even with a key; nothing goes to the API
            configure(client, {"summarizer": "offline", "compaction": {"keepRecentTokens": 10}})
            await call(client, "pi/appendEntry", {"entry": user_entry("One more question about it. " * 10)})
            await call(client, "pi/appendEntry", {"entry": assistant_entry("One more answer.", 5200)})
            fake.requests.clear()
            offline = await call(client, "pi/compact", {})
            assert offline["summarizer"] == "offline" and not fake.requests
            assert OFFLINE_LABEL in offline["summary"]
            assert state["file"] == str(file)


async def test_offline_compaction_without_a_key(tmp_path: Path) -> None:
    settings = {"compaction": {"keepRecentTokens": 60}}
    async with lsp_server(tmp_path, key=None, settings=settings) as client:
        state = await call(client, "pi/newSession", {})
        for number in range(3):
            await call(client, "pi/appendEntry", {"entry": user_entry(f"Please edit file {number}. " * 12)})
            await call(client, "pi/appendEntry", {"entry": assistant_entry(f"Edited file {number}.", 400)})
        result = await call(client, "pi/compact", {"customInstructions": "ignored offline"})
        assert result["summarizer"] == "offline" and result["summary"].startswith(OFFLINE_LABEL)
        assert result["tokensAfter"] > 0 and result["details"] == {"readFiles": [], "modifiedFiles": []}
        context = await call(client, "pi/buildContext", {})
        assert context["messages"][0]["role"] == "compactionSummary"
        assert context["messages"][1]["role"] == "user"  # the kept turn starts at a user message
        lines = [orjson.loads(line) for line in Path(state["file"]).read_bytes().splitlines()]
        assert lines[-1]["type"] == "compaction" and lines[-1]["id"] == result["entryId"]
        error = await call_error(client, "pi/compact", {})
        assert error.code == -32003 and "already compacted" in error.message
        ended = events(client, "pi/compactionEnded")[-1]
        assert ended["error"].startswith("Compaction failed: ") and ended["errorCode"] == -32003
        # "anthropic" without any key is a ModelError, not a silent fallback
        configure(client, {"summarizer": "anthropic", "compaction": {"keepRecentTokens": 60}})
        await call(client, "pi/appendEntry", {"entry": user_entry("And another change, please. " * 12)})
        await call(client, "pi/appendEntry", {"entry": assistant_entry("Changed.", 900)})
        await call(client, "pi/appendEntry", {"entry": user_entry("Thanks. " * 30)})
        await call(client, "pi/appendEntry", {"entry": assistant_entry("You are welcome.", 950)})
        size = Path(state["file"]).stat().st_size
        error = await call_error(client, "pi/compact", {})
        assert error.code == -32004 and error.data == {"retryable": False}
        assert "API key" in error.message and Path(state["file"]).stat().st_size == size


async def test_key_from_pi_auth_file(tmp_path: Path) -> None:
    """No ANTHROPIC_API_KEY: the key comes from ``<agentDir>/auth.json`` and is never logged."""
    agent = tmp_path / "agent"
    agent.mkdir()
    secret = "auth-file-secret-9f8e7d6c5b4a"
    (agent / "auth.json").write_text(orjson.dumps({"anthropic": {"type": "api_key", "key": secret}}).decode())
    async with FakeAnthropic([Reply(events=text_stream("FROM AUTH FILE"))]) as fake:
        settings = {"compaction": {"keepRecentTokens": 60}}
        async with lsp_server(tmp_path, key=None, base_url=fake.url, settings=settings) as client:
            await call(client, "pi/newSession", {})
            for number in range(2):
                await call(client, "pi/appendEntry", {"entry": user_entry(f"Question {number}. " * 30)})
                await call(client, "pi/appendEntry", {"entry": assistant_entry("Answer.", 300)})
            result = await call(client, "pi/compact", {})
            assert result["summary"].startswith("FROM AUTH FILE")
            assert result["summarizer"] == "anthropic:claude-test"  # no model setting: the branch's model
            assert sent_key(fake.requests[0]) == secret
    assert secret not in client.log_file.read_text()  # type: ignore[attr-defined]


async def test_session_busy_while_compacting(tmp_path: Path) -> None:
    stall = Reply(events=text_stream("slow"), stall_after=3)
    async with FakeAnthropic([stall]) as fake:
        settings = {"compaction": {"keepRecentTokens": 60}}
        async with lsp_server(tmp_path, base_url=fake.url, settings=settings) as client:
            state = await call(client, "pi/newSession", {})
            for number in range(3):
                await call(client, "pi/appendEntry", {"entry": user_entry(f"Question {number}. " * 30)})
                await call(client, "pi/appendEntry", {"entry": assistant_entry("Answer.", 300)})
            size = Path(state["file"]).stat().st_size
            msg_id, running = send(client, "pi/compact", {})
            await asyncio.wait_for(fake.first_frames_sent.wait(), 15)
            busy = await call_error(client, "pi/compact", {})
            assert busy.code == -32006 and busy.data == {"busy": "compaction"}
            tree = (await call(client, "pi/getBranch", {}))["entries"]
            busy = await call_error(client, "pi/navigate", {"targetId": tree[1]["id"], "summarize": True})
            assert busy.code == -32006
            await call(client, "pi/getSessionState", {})  # other requests are served meanwhile
            # A chat opened now learns from the run state that a compaction is running.
            assert (await call(client, "pi/getRunState", {}))["compaction"] == {"reason": "manual"}
            cancel(client, msg_id)
            cancelled = await asyncio.wait_for(asyncio.gather(running, return_exceptions=True), 10)
            assert getattr(cancelled[0], "code", None) == -32800
            await next_event(client, "pi/compactionEnded", 0)
            assert events(client, "pi/compactionEnded")[0]["aborted"] is True
            assert "compaction" not in await call(client, "pi/getRunState", {})
            await asyncio.wait_for(fake.client_disconnected.wait(), 5)
            assert Path(state["file"]).stat().st_size == size
