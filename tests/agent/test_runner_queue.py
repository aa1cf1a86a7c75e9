"""A message queued while a run is finishing (after the loop's last look at the queues) is not
stranded: the run takes it as pi would have, by starting on it. The VS Code end-to-end test hit
this when a prompt was sent right after a reply appeared, before the run's compaction check ended."""

from __future__ import annotations

from typing import Any

from pi_lsp.agent.loop import LoopHooks, Message
from pi_lsp.agent.queue import MessageQueues
from pi_lsp.agent.runner import CompactionDecision, CompactionHooks, RetrySettings, Runner


def _user(text: str) -> Message:
    return {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": 0}


def _runner(
    context: list[Message], seen: list[list[Message]], stop_reason: str, queues: MessageQueues
) -> Runner:
    async def stream(messages: list[Message], abort: Any, on_event: Any) -> Message:
        seen.append(messages)
        return {"role": "assistant", "content": [{"type": "text", "text": "ok"}], "stopReason": stop_reason}

    async def persist(message: Message) -> str | None:
        return None

    calls = 0

    async def check(last: Message) -> CompactionDecision | None:
        nonlocal calls
        calls += 1
        if calls == 1:  # a pi/prompt with streamingBehavior arrives while the run finishes
            queues.add("steer", "sent late", _user("sent late"))
        return None

    async def compact(reason: str, will_retry: bool) -> bool:
        raise AssertionError("no compaction expected")

    async def reload() -> list[Message]:
        return context

    hooks = LoopHooks(
        stream=stream, emit=lambda event: None, persist=persist, tools={},
        validate=lambda tool, args: dict(args), tool_context=lambda on_update: None,
    )  # fmt: skip
    compaction = CompactionHooks(check=check, compact=compact, reload=reload, exhausted=lambda reason: None)
    return Runner(context, hooks, queues, retry=RetrySettings(enabled=False), compaction=compaction,
                  is_retryable=lambda message: False)  # fmt: skip


async def test_a_message_queued_while_the_run_finishes_runs_in_that_run() -> None:
    queues = MessageQueues(lambda: ("one-at-a-time", "one-at-a-time"), lambda: None)
    seen: list[list[Message]] = []
    result = await _runner([], seen, "stop", queues).run([_user("first")])
    assert len(seen) == 2
    assert seen[1][-1]["content"][0]["text"] == "sent late"
    assert not queues.has_messages() and result.stop_reason == "stop"


async def test_after_an_error_the_late_message_stays_queued() -> None:
    queues = MessageQueues(lambda: ("one-at-a-time", "one-at-a-time"), lambda: None)
    seen: list[list[Message]] = []
    result = await _runner([], seen, "error", queues).run([_user("first")])
    assert len(seen) == 1 and result.stop_reason == "error"
    assert queues.snapshot() == {"steering": ["sent late"], "followUp": []}
