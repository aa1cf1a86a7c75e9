"""What pi's ``AgentSession`` adds around the loop: auto-retry, auto-compaction, queues, abort.

A :class:`Runner` drives one prompt from the user message to the end, the way
``AgentSession.prompt`` + ``waitForRetry`` do: the loop run, then on ``agent_end`` the retry check
(retryable error → ``auto_retry_start``, abortable back-off, ``continue``), then the compaction
check (overflow → compact and continue once; threshold → compact, continue only when messages are
queued). Compaction itself is the caller's (:class:`CompactionHooks`); this module never touches a
session.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from pi_lsp.agent.loop import AgentLoop, Event, LoopHooks, Message
from pi_lsp.agent.queue import MessageQueues
from pi_lsp.agent.tools.output_files import OutputFiles

OVERFLOW_RETRY_DELAY = 0.1  # pi waits 100 ms before continuing after an overflow compaction


@dataclass(frozen=True)
class RetrySettings:
    """pi's ``retry.enabled`` / ``retry.maxRetries`` / ``retry.baseDelayMs``."""

    enabled: bool = True
    max_retries: int = 3
    base_delay_ms: int = 2000


@dataclass(frozen=True)
class CompactionDecision:
    reason: str  # "threshold" | "overflow"
    will_retry: bool = False
    exhausted: bool = False  # a second overflow: pi gives up with OVERFLOW_EXHAUSTED


@dataclass
class CompactionHooks:
    """The session side of auto-compaction."""

    check: Callable[[Message], Awaitable[CompactionDecision | None]]
    """pi's ``_checkCompaction`` decision for the run's last assistant message."""
    compact: Callable[[str, bool], Awaitable[bool]]
    """Run one compaction (reason, willRetry), emitting its events; True when it was written."""
    reload: Callable[[], Awaitable[list[Message]]]
    """The branch's context messages after a compaction."""
    exhausted: Callable[[str], None]
    """Report a second overflow (pi's ``compaction_end`` with ``willRetry: false``)."""


@dataclass
class RunResult:
    stop_reason: Any
    error_message: str | None
    entry_ids: list[str]


class Runner:
    """One prompt's run: loop runs, retries and compactions until the agent is idle."""

    def __init__(
        self,
        context: list[Message],
        hooks: LoopHooks,
        queues: MessageQueues,
        *,
        retry: RetrySettings,
        compaction: CompactionHooks | None,
        is_retryable: Callable[[Message], bool],
    ) -> None:
        self.context = context
        self.hooks = hooks
        self.queues = queues
        self.retry = retry
        self.compaction = compaction
        self.is_retryable = is_retryable  # pi's _isRetryableError (overflows are not retried)
        self.abort_event = asyncio.Event()
        self.output_files = OutputFiles()  # the tools' full-output files: removed when the run ends
        self.loop: AgentLoop | None = None
        self.entry_ids: list[str] = []
        self._retry_attempt = 0
        self._retry_sleep: asyncio.Task[None] | None = None
        self._emit = hooks.emit
        hooks.emit = self._on_event
        hooks.get_steering = queues.take_steering
        hooks.get_follow_up = queues.take_follow_up

    # ------------------------------------------------------------------ control

    def abort(self) -> None:
        """pi's ``AgentSession.abort``: cancel a retry back-off and the running loop."""
        self.abort_event.set()
        if self._retry_sleep is not None:
            self._retry_sleep.cancel()

    # ------------------------------------------------------------------ events

    def _on_event(self, event: Event) -> None:
        kind = event.get("type")
        if kind == "message_start":
            message = event.get("message") or {}
            if message.get("role") == "user":
                self.queues.delivered(user_text(message))
        self._emit(event)
        if kind == "message_end":
            entry_id = event.get("entryId")
            if isinstance(entry_id, str):
                self.entry_ids.append(entry_id)
            message = event.get("message") or {}
            if (
                message.get("role") == "assistant"
                and message.get("stopReason") != "error"
                and self._retry_attempt
            ):
                self._emit({"type": "auto_retry_end", "success": True, "attempt": self._retry_attempt})
                self._retry_attempt = 0

    # ------------------------------------------------------------------ the run

    async def run(self, prompts: Sequence[Message]) -> RunResult:
        try:
            return await self._run(prompts)
        finally:
            self.output_files.remove_all()

    async def _run(self, prompts: Sequence[Message]) -> RunResult:
        last = await self._loop(prompts)
        while True:
            if last is None:
                break
            retryable = self.retry.enabled and self.is_retryable(last)
            if retryable and await self._retry(last):
                last = await self._loop(())
                continue
            compaction = None if self.abort_event.is_set() else self.compaction
            decision = await compaction.check(last) if compaction is not None else None
            if compaction is None or decision is None:
                late = self._queued_while_finishing(last)
                if not late:
                    break
                last = await self._loop(late)
                continue
            if decision.exhausted:
                compaction.exhausted(decision.reason)
                break
            if decision.will_retry and self.context and self.context[-1].get("role") == "assistant":
                self.context.pop()  # the overflow error stays in the file, not in the context
            done = await compaction.compact(decision.reason, decision.will_retry)
            if done:
                self.context[:] = await compaction.reload()
            if decision.will_retry and done:
                tail = self.context[-1] if self.context else {}
                if tail.get("role") == "assistant" and tail.get("stopReason") == "error":
                    self.context.pop()  # the failed reply is kept after the cut point; not resent
                await asyncio.sleep(OVERFLOW_RETRY_DELAY)
                last = await self._loop(())
                continue
            if done and self.queues.has_messages() and not self.abort_event.is_set():
                await asyncio.sleep(OVERFLOW_RETRY_DELAY)
                last = await self._loop(())
                continue
            break
        final = last or {}
        error = final.get("errorMessage")
        return RunResult(final.get("stopReason"), error if isinstance(error, str) else None, self.entry_ids)

    def _queued_while_finishing(self, last: Message) -> list[Message]:
        """Messages queued after the loop's last look at the queues, while this run was finishing
        (the compaction check): pi, no longer streaming by then, would have started a run with them,
        so they run now rather than wait unseen for the next prompt. Not after an abort or error."""
        if self.abort_event.is_set() or last.get("stopReason") in ("aborted", "error"):
            return []
        return self.queues.take_steering() or self.queues.take_follow_up()

    async def _loop(self, prompts: Sequence[Message]) -> Message | None:
        if not prompts and (not self.context or self.context[-1].get("role") == "assistant"):
            return None  # nothing to continue from (pi's continue() would throw)
        self.loop = AgentLoop(self.context, self.hooks, self.abort_event)
        try:
            messages = await self.loop.run(prompts)
        finally:
            self.loop = None
        return next((m for m in reversed(messages) if m.get("role") == "assistant"), None)

    async def _retry(self, message: Message) -> bool:
        """pi's ``_handleRetryableError``: True when a retry should run now."""
        self._retry_attempt += 1
        if self._retry_attempt > self.retry.max_retries:
            self._emit(
                {
                    "type": "auto_retry_end",
                    "success": False,
                    "attempt": self._retry_attempt - 1,
                    "finalError": message.get("errorMessage"),
                }
            )
            self._retry_attempt = 0
            return False
        delay_ms = self.retry.base_delay_ms * 2 ** (self._retry_attempt - 1)
        self._emit(
            {
                "type": "auto_retry_start",
                "attempt": self._retry_attempt,
                "maxAttempts": self.retry.max_retries,
                "delayMs": delay_ms,
                "errorMessage": message.get("errorMessage") or "Unknown error",
            }
        )
        if self.context and self.context[-1].get("role") == "assistant":
            self.context.pop()  # kept in the file, dropped from the context
        self._retry_sleep = asyncio.ensure_future(asyncio.sleep(delay_ms / 1000))
        cancelled = self.abort_event.is_set()
        if not cancelled:
            try:
                await self._retry_sleep
            except asyncio.CancelledError:
                current = asyncio.current_task()
                if current is not None and current.cancelling():
                    raise
                cancelled = True
        self._retry_sleep = None
        if cancelled:
            attempt, self._retry_attempt = self._retry_attempt, 0
            self._emit(
                {
                    "type": "auto_retry_end",
                    "success": False,
                    "attempt": attempt,
                    "finalError": "Retry cancelled",
                }
            )
            return False
        return True

    # ------------------------------------------------------------------ run state

    def snapshot(self) -> dict[str, Any]:
        """The live parts of ``pi/getRunState``: the partial reply and the running tools."""
        loop = self.loop
        state: dict[str, Any] = {"tools": []}
        if loop is None:
            return state
        if loop.partial is not None:
            state["partial"] = loop.partial.snapshot()
        state["tools"] = [dict(tool) for tool in loop.running_tools.values()]
        return state


def user_text(message: Message) -> str:
    """pi's ``_getUserMessageText``: a string content, or its text blocks joined."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            str(block.get("text", ""))
            for block in content
            if isinstance(block, dict) and block.get("type") == "text"
        )
    return ""
