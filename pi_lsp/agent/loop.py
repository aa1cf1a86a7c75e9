"""pi 0.73.1's agent loop (``pi-agent-core`` ``runAgentLoop`` / ``runLoop``), in Python.

One *loop run* goes from ``agent_start`` to ``agent_end``: the prompt messages, then model calls and
tool batches until the model stops, with queued steering messages injected before the next model
call and follow-up messages taken when the loop would otherwise stop. Everything outside that
(persistence, retries, compaction, approvals, the HTTP request) is given to the loop through
:class:`LoopHooks`, so this module knows nothing about sessions, servers or Anthropic.

Events are emitted with pi's names and fields in the wire form of the contract's ``pi/event``:
``message_update`` carries only ``assistantMessageEvent`` (no partial copies), ``message_end`` the
``entryId`` the hooks returned for the persisted message, ``agent_end`` ``entryIds`` and
``stopReason`` instead of the messages.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from pi_lsp.agent.partial_reply import PartialReply

Message = dict[str, Any]
Event = dict[str, Any]

# Assistant-message events that pi forwards as ``message_update`` (``start``/``done``/``error`` are not).
UPDATE_EVENTS = frozenset(
    {
        "text_start",
        "text_delta",
        "text_end",
        "thinking_start",
        "thinking_delta",
        "thinking_end",
        "toolcall_start",
        "toolcall_delta",
        "toolcall_end",
    }
)
_UPDATE_FIELDS = ("type", "contentIndex", "delta", "content", "toolCall")


class LoopTool(Protocol):
    """What the loop needs of a tool (``pi_lsp.agent.tools.base.Tool`` satisfies it)."""

    name: str

    def prepare_arguments(self, args: dict[str, Any]) -> dict[str, Any]: ...

    async def execute(self, tool_call_id: str, args: dict[str, Any], ctx: Any) -> Any: ...


StreamFn = Callable[[list[Message], asyncio.Event, Callable[[Event], None]], Awaitable[Message]]
"""One model call: (context messages, abort, on assistant event) → the final assistant message."""
BeforeToolCall = Callable[[Message, Message, dict[str, Any], LoopTool], Awaitable[str | None]]
"""(assistant, toolCall block, validated args, tool) → a block reason, or None to run the tool."""


def now_ms() -> int:
    return int(time.time() * 1000)


@dataclass
class LoopHooks:
    """Everything the loop calls out to."""

    stream: StreamFn
    emit: Callable[[Event], None]
    persist: Callable[[Message], Awaitable[str | None]]
    tools: Mapping[str, LoopTool]
    validate: Callable[[Any, Any], dict[str, Any]]
    tool_context: Callable[[Callable[[Any], None]], Any]
    before_tool_call: BeforeToolCall | None = None
    partial_message: Callable[[], Message] | None = None
    """The assistant message as it stands when its stream starts (for ``message_start``)."""
    after_tool_batch: Callable[[list[str]], Awaitable[None]] | None = None
    """Called with the batch's tool names once its results are persisted (checkpoints)."""
    get_steering: Callable[[], list[Message]] = field(default=lambda: [])
    get_follow_up: Callable[[], list[Message]] = field(default=lambda: [])


def error_tool_result(text: str) -> dict[str, Any]:
    """pi's ``createErrorToolResult``: the text the model sees, and empty details."""
    return {"content": [{"type": "text", "text": text}], "details": {}}


def result_dict(result: Any) -> dict[str, Any]:
    """A tool's result (``ToolResult`` or dict) as pi's ``{content, details?}``."""
    if isinstance(result, Mapping):
        out = {"content": list(result.get("content") or [])}
        if result.get("details") is not None:
            out["details"] = result["details"]
        return out
    out = {"content": list(getattr(result, "content", None) or [])}
    details = getattr(result, "details", None)
    if details is not None:
        out["details"] = details
    return out


def tool_result_message(call: Mapping[str, Any], result: Mapping[str, Any], is_error: bool) -> Message:
    """pi's ``createToolResultMessage`` in its key order (``details`` only when the tool gave some)."""
    message: Message = {
        "role": "toolResult",
        "toolCallId": call.get("id"),
        "toolName": call.get("name"),
        "content": result["content"],
    }
    if "details" in result:
        message["details"] = result["details"]
    message["isError"] = is_error
    message["timestamp"] = now_ms()
    return message


def wire_update(event: Mapping[str, Any]) -> Event:
    """The contract's ``message_update``: pi's assistant event without partial copies."""
    return {
        "type": "message_update",
        "assistantMessageEvent": {key: event[key] for key in _UPDATE_FIELDS if key in event},
    }


@dataclass
class _Prepared:
    call: Message
    tool: LoopTool | None
    args: dict[str, Any] | None
    immediate: dict[str, Any] | None = None


class AgentLoop:
    """One loop run over ``context`` (the agent's messages, which it extends in place)."""

    def __init__(self, context: list[Message], hooks: LoopHooks, abort: asyncio.Event) -> None:
        self.context = context
        self.hooks = hooks
        self.abort = abort
        self.new_messages: list[Message] = []
        self.entry_ids: list[str] = []
        self.partial: PartialReply | None = None  # the assistant message being streamed
        self.running_tools: dict[str, dict[str, Any]] = {}

    async def run(self, prompts: Sequence[Message]) -> list[Message]:
        """``runAgentLoop`` with ``prompts``, or ``runAgentLoopContinue`` without."""
        if not prompts:
            if not self.context:
                raise ValueError("Cannot continue: no messages in context")
            if self.context[-1].get("role") == "assistant":
                raise ValueError("Cannot continue from message role: assistant")
        self.hooks.emit({"type": "agent_start"})
        self.hooks.emit({"type": "turn_start"})
        for prompt in prompts:
            self.context.append(prompt)
            await self._add_message(prompt)
        await self._run_turns()
        return self.new_messages

    async def _add_message(self, message: Message) -> None:
        self.new_messages.append(message)
        self.hooks.emit({"type": "message_start", "message": message})
        await self._end_message(message)

    async def _end_message(self, message: Message) -> None:
        entry_id = await self.hooks.persist(message)
        event: Event = {"type": "message_end", "message": message}
        if entry_id is not None:
            event["entryId"] = entry_id
            self.entry_ids.append(entry_id)
        self.hooks.emit(event)

    def _end(self, stop_reason: Any) -> None:
        self.hooks.emit({"type": "agent_end", "entryIds": list(self.entry_ids), "stopReason": stop_reason})

    async def _run_turns(self) -> None:
        first_turn = True
        pending = self.hooks.get_steering()
        while True:
            more_tools = True
            while more_tools or pending:
                if not first_turn:
                    self.hooks.emit({"type": "turn_start"})
                first_turn = False
                for message in pending:
                    self.context.append(message)
                    await self._add_message(message)
                pending = []
                assistant = await self._stream_assistant()
                stop = assistant.get("stopReason")
                if stop in ("error", "aborted"):
                    self.hooks.emit({"type": "turn_end", "message": assistant, "toolResults": []})
                    self._end(stop)
                    return
                calls = [block for block in assistant.get("content") or [] if block.get("type") == "toolCall"]
                results: list[Message] = []
                more_tools = False
                if calls:  # built-in tools never set pi's ``terminate``, so a batch always continues
                    results = await self._execute_tools(assistant, calls)
                    if self.hooks.after_tool_batch is not None:
                        await self.hooks.after_tool_batch([str(call.get("name")) for call in calls])
                    more_tools = True
                    self.context.extend(results)
                self.hooks.emit({"type": "turn_end", "message": assistant, "toolResults": results})
                pending = self.hooks.get_steering()
            follow_ups = self.hooks.get_follow_up()
            if follow_ups:
                pending = follow_ups
                continue
            break
        last = next((m for m in reversed(self.new_messages) if m.get("role") == "assistant"), None)
        self._end(last.get("stopReason") if last is not None else None)

    # ------------------------------------------------------------------ the model call

    async def _stream_assistant(self) -> Message:
        started = False

        def on_event(event: Event) -> None:
            nonlocal started
            kind = event.get("type")
            if kind == "start":
                started = True
                partial = event.get("partial")
                if isinstance(partial, Mapping):
                    self.partial = PartialReply(partial)
                elif self.hooks.partial_message is not None:
                    self.partial = PartialReply(self.hooks.partial_message())
                else:
                    self.partial = PartialReply({"role": "assistant", "content": []})
                self.hooks.emit({"type": "message_start", "message": self.partial.snapshot()})
            elif kind in UPDATE_EVENTS and started:
                if self.partial is not None:
                    self.partial.apply(event)
                self.hooks.emit(wire_update(event))

        try:
            message = await self.hooks.stream(list(self.context), self.abort, on_event)
        finally:
            self.partial = None
        if not started:
            self.hooks.emit({"type": "message_start", "message": message})
        self.context.append(message)
        self.new_messages.append(message)
        await self._end_message(message)
        return message

    # ------------------------------------------------------------------ tools

    async def _prepare(self, assistant: Message, call: Message) -> _Prepared:
        """pi's ``prepareToolCall``: find, prepare and validate the arguments, ask the hook."""
        name = call.get("name")
        tool = self.hooks.tools.get(name) if isinstance(name, str) else None
        if tool is None:
            return _Prepared(call, None, None, error_tool_result(f"Tool {name} not found"))
        try:
            raw = call.get("arguments")
            prepared = tool.prepare_arguments(dict(raw) if isinstance(raw, Mapping) else {})
            args = self.hooks.validate(tool, prepared)
            if self.hooks.before_tool_call is not None:
                reason = await self.hooks.before_tool_call(assistant, call, args, tool)
                if reason is not None:
                    return _Prepared(
                        call, tool, args, error_tool_result(reason or "Tool execution was blocked")
                    )
        except asyncio.CancelledError:
            raise
        except Exception as error:
            return _Prepared(call, tool, None, error_tool_result(_error_text(error)))
        return _Prepared(call, tool, args)

    async def _execute_tools(self, assistant: Message, calls: list[Message]) -> list[Message]:
        """pi's ``executeToolCallsParallel``: prepare in order, run together, results in order."""
        outcomes: list[Awaitable[tuple[Message, dict[str, Any], bool]]] = []
        for call in calls:
            call_id = str(call.get("id"))
            self.hooks.emit(
                {
                    "type": "tool_execution_start",
                    "toolCallId": call.get("id"),
                    "toolName": call.get("name"),
                    "args": call.get("arguments"),
                }
            )
            self.running_tools[call_id] = {
                "toolCallId": call.get("id"),
                "toolName": call.get("name"),
                "args": call.get("arguments"),
            }
            prepared = await self._prepare(assistant, call)
            if prepared.immediate is not None:
                self._tool_end(call, prepared.immediate, True)
                outcomes.append(_done((call, prepared.immediate, True)))
                continue
            outcomes.append(asyncio.ensure_future(self._run_tool(prepared)))
        finished = await asyncio.gather(*outcomes)
        messages: list[Message] = []
        for call, result, is_error in finished:
            message = tool_result_message(call, result, is_error)
            await self._add_message(message)
            messages.append(message)
        return messages

    async def _run_tool(self, prepared: _Prepared) -> tuple[Message, dict[str, Any], bool]:
        call = prepared.call
        assert prepared.tool is not None and prepared.args is not None
        call_id = str(call.get("id"))

        def on_update(partial: Any) -> None:
            wire = result_dict(partial)
            state = self.running_tools.get(call_id)
            if state is not None:
                state["partialResult"] = wire
            self.hooks.emit(
                {
                    "type": "tool_execution_update",
                    "toolCallId": call.get("id"),
                    "toolName": call.get("name"),
                    "args": call.get("arguments"),
                    "partialResult": wire,
                }
            )

        try:
            raw = await prepared.tool.execute(call_id, prepared.args, self.hooks.tool_context(on_update))
            result, is_error = result_dict(raw), False
        except asyncio.CancelledError:
            raise
        except Exception as error:
            result, is_error = error_tool_result(_error_text(error)), True
        self._tool_end(call, result, is_error)
        return call, result, is_error

    def _tool_end(self, call: Message, result: dict[str, Any], is_error: bool) -> None:
        self.running_tools.pop(str(call.get("id")), None)
        self.hooks.emit(
            {
                "type": "tool_execution_end",
                "toolCallId": call.get("id"),
                "toolName": call.get("name"),
                "result": result,
                "isError": is_error,
            }
        )


async def _done(value: Any) -> Any:
    return value


def _error_text(error: BaseException) -> str:
    """``error.message`` as pi shows it (the str of the exception, else its class name)."""
    text = str(error)
    return text if text else type(error).__name__
