"""Differential tests: the same scripted conversation run by pi itself and by our server.

The fake Messages API plays the same replies to both (pi is pointed at it through models.json);
the request bodies it received (apart from the tool descriptions, which are our own words), the
session files (apart from ids and timestamps, with pi's key order) and the order of the events
must be equal.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from tests.agent.chat_support import (
    Script,
    Transcript,
    event_outline,
    key_order,
    normalise_entries,
    normalise_request,
    run_ours,
    run_pi,
    workspace,
)
from tests.llm.fake_anthropic import Reply, Text, Thinking, ToolUse, assistant_stream, error_reply
from tests.oracle import require_oracle

pytestmark = pytest.mark.oracle


@pytest.fixture(autouse=True)
def _needs_pi() -> None:
    """Skipped with the reason where pi is missing; failed where CI requires pi."""
    require_oracle()


FILES = {"hello.txt": "line one\nline two\n", "notes.md": "# Notes\nold text here\n"}
FILE_TOOLS = ["read", "edit", "write"]


def both(script: Script, *, files: dict[str, str] | None = None, tools: list[str] | None = None,
         settings: dict[str, Any] | None = None) -> tuple[Transcript, Transcript]:  # fmt: skip
    with workspace(files or FILES, settings, tools or FILE_TOOLS) as ws:
        theirs = asyncio.run(run_pi(ws, script))
        ours = asyncio.run(run_ours(ws, script))
    return theirs, ours


def loop_requests(transcript: Transcript) -> list[dict[str, Any]]:
    """The agent loop's requests (a compaction summary request has no tools and our own wording)."""
    return [normalise_request(body) for body in transcript.requests if body.get("tools")]


def assert_same(theirs: Transcript, ours: Transcript) -> None:
    assert loop_requests(ours) == loop_requests(theirs)
    assert len(ours.requests) == len(theirs.requests)
    assert normalise_entries(ours.entries) == normalise_entries(theirs.entries)
    assert key_order(ours.entries) == key_order(theirs.entries)
    assert event_outline(ours.events) == event_outline(theirs.events)
    assert tool_results(ours.events) == tool_results(theirs.events)
    assert assistant_starts(ours.events) == assistant_starts(theirs.events)
    if not any(e["type"] in ("auto_retry_start", "compaction_start") for e in theirs.events):
        # (pi counts its live agent's messages, from which retried errors are dropped; ours are the
        # branch's context, what pi counts once the session is loaded again)
        keys = (
            "userMessages",
            "assistantMessages",
            "toolCalls",
            "toolResults",
            "totalMessages",
            "tokens",
            "cost",
        )
        assert {key: ours.stats[key] for key in keys} == {key: theirs.stats[key] for key in keys}


def assistant_starts(events: list[dict[str, Any]]) -> list[list[tuple[str, Any]]]:
    """The assistant messages of ``message_start`` (keys in order), without usage and timestamp."""
    starts = [
        e["message"] for e in events if e["type"] == "message_start" and e["message"]["role"] == "assistant"
    ]
    return [[(k, v if k not in ("usage", "timestamp") else k) for k, v in m.items()] for m in starts]


def tool_results(events: list[dict[str, Any]]) -> dict[str, Any]:
    """What each tool_execution_end carried, by tool call id."""
    return {e["toolCallId"]: (e["result"], e["isError"]) for e in events if e["type"] == "tool_execution_end"}


def test_text_reply_with_thinking() -> None:
    script = Script([Reply(events=assistant_stream(Thinking("Let me think."), Text("Hello there, friend.")))])
    theirs, ours = both(script)
    assert_same(theirs, ours)
    assert ours.results[0]["stopReason"] == "stop"
    ids = [entry["id"] for entry in ours.entries[1:]]
    assert ours.results[0]["entryIds"] == ids  # model_change, thinking_level_change, user, assistant
    assert ours.results[0]["userEntryId"] == ids[2]


def test_several_tool_calls_in_one_turn() -> None:
    calls = assistant_stream(
        Thinking("Look first."),
        Text("Reading and writing."),
        ToolUse("toolu_A", "read", {"path": "hello.txt"}),
        ToolUse("toolu_B", "write", {"path": "new.txt", "content": "fresh\n"}),
        ToolUse("toolu_C", "edit", {"path": "notes.md", "edits": [{"oldText": "old", "newText": "new"}]}),
        ToolUse("toolu_D", "read", {"path": "missing.txt"}),
        ToolUse("toolu_E", "nosuchtool", {}),
        ToolUse("toolu_F", "read", {"offset": "x"}),
        message_id="msg_tools",
    )
    script = Script(
        [Reply(events=calls), Reply(events=assistant_stream(Text("All done."), message_id="msg_end"))]
    )
    theirs, ours = both(script)
    assert_same(theirs, ours)
    assert [e["message"]["role"] for e in ours.entries if e["type"] == "message"] == [
        "user", "assistant", *["toolResult"] * 6, "assistant"
    ]  # fmt: skip


def test_error_then_retry() -> None:
    script = Script([
        error_reply(529, "overloaded_error", "Overloaded"),
        error_reply(500, "api_error", "Internal server error"),
        Reply(events=assistant_stream(Text("Recovered."))),
    ])  # fmt: skip
    theirs, ours = both(script)
    assert_same(theirs, ours)
    assert [e["type"] for e in ours.events if e["type"].startswith("auto_retry")] == [
        "auto_retry_start", "auto_retry_start", "auto_retry_end"
    ]  # fmt: skip


def test_retries_exhausted() -> None:
    script = Script([error_reply(503, "api_error", "Service unavailable")])
    theirs, ours = both(
        script, settings={"retry": {"baseDelayMs": 10, "maxRetries": 2, "provider": {"maxRetries": 0}}}
    )
    assert_same(theirs, ours)
    assert ours.results[0]["stopReason"] == "error"
    assert "Service unavailable" in ours.results[0]["errorMessage"]


def test_abort_while_streaming() -> None:
    stream = assistant_stream(Thinking("Slow thought."), Text("A long answer that never ends."))
    script = Script(
        [Reply(events=stream, stall_after=9)],
        abort_when=lambda e: (
            e["type"] == "message_update" and e["assistantMessageEvent"]["type"] == "text_start"
        ),
    )
    theirs, ours = both(script)
    assert_same(theirs, ours)
    assert ours.results[0]["stopReason"] == "aborted"


def test_two_prompts_continue_the_conversation() -> None:
    script = Script(
        [Reply(events=assistant_stream(Text("First."), message_id="m1")),
         Reply(events=assistant_stream(Text("Second."), message_id="m2"))],
        prompts=("One", "Two"),
    )  # fmt: skip
    theirs, ours = both(script)
    assert_same(theirs, ours)


def _no_process(marker: str) -> bool:
    """True once no process's command line holds ``marker`` (a SIGKILLed group may take a moment
    to be gone on a loaded machine: looks again for up to 5 s, never passes while one lives)."""
    import subprocess
    import time

    for _ in range(250):
        found = subprocess.run(["pgrep", "-f", marker], capture_output=True, text=True)
        if found.stdout.strip() == "":
            return True
        time.sleep(0.02)
    return False


def test_abort_while_bash_runs() -> None:
    calls = assistant_stream(
        ToolUse("toolu_S", "bash", {"command": "echo started; sleep 37.25; echo never"}),
        ToolUse("toolu_T", "bash", {"command": "sleep 37.25"}),
    )  # (a fast tool in the same batch would race the abort in pi too)
    script = Script(
        [Reply(events=calls), Reply(events=assistant_stream(Text("unused")))],
        abort_when=lambda e: e["type"] == "tool_execution_update" and bool(e["partialResult"]["content"]),
    )
    theirs, ours = both(script, tools=["read", "bash"])
    assert_same(theirs, ours)
    last = ours.entries[-1]["message"]
    assert last["stopReason"] == "aborted" and last["content"] == []  # pi's extra empty assistant
    assert _no_process("sleep 37.25")


def test_context_overflow_compacts_and_retries() -> None:
    def route(request: Any) -> Reply:
        body = request.body
        if not body.get("tools"):  # the compaction summary
            return Reply(events=assistant_stream(Text("## Goal\nSummary of the chat."), message_id="msg_sum"))
        last = body["messages"][-1]["content"][-1]
        text = last.get("text", "") if isinstance(last, dict) else ""
        if text == "Second" and not any("summary" in json.dumps(m) for m in body["messages"]):
            return error_reply(
                400, "invalid_request_error", "prompt is too long: 213462 tokens > 200000 maximum"
            )
        return Reply(events=assistant_stream(Text("Answer to " + text), message_id="msg_" + text))

    script = Script(route=route, prompts=("First", "Second"))
    theirs, ours = both(script, settings={"compaction": {"keepRecentTokens": 1}})
    assert_same(theirs, ours)
    assert [e["type"] for e in ours.entries].count("compaction") == 1


def test_prompt_templates_and_skills_are_expanded_before_the_run() -> None:
    files = {
        **FILES,
        ".pi/prompts/review.md": "---\ndescription: Review a file\n---\nReview $1 and then $@ carefully.\n",
        ".pi/skills/tidy/SKILL.md": "---\nname: tidy\ndescription: Tidy things up\n---\nBe tidy.\n",
    }
    script = Script(
        [Reply(events=assistant_stream(Text("Reviewed."), message_id="m1")),
         Reply(events=assistant_stream(Text("Tidied."), message_id="m2"))],
        prompts=("/review hello.txt notes.md", "/skill:tidy the desk"),
    )  # fmt: skip
    theirs, ours = both(script, files=files)
    assert_same(theirs, ours)
    texts = [
        e["message"]["content"][0]["text"] for e in ours.entries if e.get("message", {}).get("role") == "user"
    ]
    assert texts[0].startswith("Review hello.txt and then hello.txt notes.md")
    assert texts[1].startswith('<skill name="tidy"')


def test_steering_and_follow_up_queued_during_tools() -> None:
    calls = assistant_stream(
        ToolUse("toolu_Q", "bash", {"command": "sleep 0.8; echo slow"}), message_id="m_tools"
    )
    script = Script(
        [Reply(events=calls),
         Reply(events=assistant_stream(Text("Steered."), message_id="m_steer")),
         Reply(events=assistant_stream(Text("Followed up."), message_id="m_follow"))],
        queue_when=lambda e: e["type"] == "tool_execution_start",
        queued=(("steer", "Use the other folder"), ("followUp", "Then summarise"), ("steer", "And hurry")),
    )  # fmt: skip
    theirs, ours = both(script, tools=["read", "bash"], settings={"steeringMode": "all"})
    assert_same(theirs, ours)
    texts = [
        m["content"][0]["text"]
        for m in (e.get("message", {}) for e in ours.entries)
        if m.get("role") == "user"
    ]
    assert texts == ["Go", "Use the other folder", "And hurry", "Then summarise"]


def test_threshold_compaction_after_the_run() -> None:
    def route(request: Any) -> Reply:
        if not request.body.get("tools"):  # the compaction summary
            return Reply(events=assistant_stream(Text("## Goal\nKeep going."), message_id="msg_sum"))
        count = sum(1 for m in request.body["messages"] if m["role"] == "user")
        return Reply(
            events=assistant_stream(Text(f"Reply {count}."), message_id=f"m{count}", input_tokens=190_000)
        )

    script = Script(route=route, prompts=("First", "Second"))
    theirs, ours = both(script, settings={"compaction": {"keepRecentTokens": 1}})
    assert_same(theirs, ours)
    compactions = [e for e in ours.events if e["type"] == "compaction_end"]
    assert compactions and all(e["reason"] == "threshold" and e["willRetry"] is False for e in compactions)
