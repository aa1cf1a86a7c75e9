"""A run's ``pi/event`` stream as ACP ``session/update`` notifications, for one session.

The mapping is the contract's: ``message_update`` deltas → ``agent_message_chunk`` /
``agent_thought_chunk`` (one per delta, nothing buffered); ``tool_execution_start`` →
``tool_call`` (pending); an approval allowed or the first partial result → ``tool_call_update``
``in_progress``; ``tool_execution_end`` → ``completed`` / ``failed`` with the result as text, or
for a successful edit/write as a diff ``{path, oldText, newText}``; each assistant ``message_end``
→ ``usage_update`` (the context gauge, sized as the run's window: the ``contextWindow`` setting
when the user set one, else the model's); a compaction → agent text marked as such.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pi_lsp.acp import tool_calls
from pi_lsp.llm.models import find_model
from pi_lsp.service.model_choice import window_of
from pi_lsp.service.settings import Settings

Send = Callable[[dict[str, Any]], None]
"""Sends one ``session/update`` (the update object; the session id is added by the sender)."""


@dataclass
class _Tool:
    name: str
    args: Any
    old_text: str | None = None  # an edit/write's file before the call
    started: bool = False  # in_progress sent


@dataclass
class UpdateStream:
    """Translates one session's ``pi/event`` params into ``session/update`` objects."""

    cwd: str
    send: Send
    settings: Settings  # the session's client's: its contextWindow override sizes the gauge
    tools: dict[str, _Tool] = field(default_factory=dict)
    cost: float = 0.0  # the run's model calls so far, in USD

    def on_event(self, event: dict[str, Any]) -> None:
        kind = event.get("type")
        if kind == "message_update":
            self._delta(event.get("assistantMessageEvent") or {})
        elif kind == "tool_execution_start":
            self._tool_start(event)
        elif kind == "tool_execution_update":
            self._tool_progress(event)
        elif kind == "tool_execution_end":
            self._tool_end(event)
        elif kind == "approval_result":
            tool = self.tools.get(str(event.get("toolCallId")))
            if tool is not None and event.get("decision") in ("allow", "allowAlways"):
                self._in_progress(str(event.get("toolCallId")), tool)
        elif kind == "message_end":
            self._usage(event.get("message") or {})
        elif kind == "compaction_end":
            self._compacted(event)
        elif kind == "auto_retry_start":
            delay = event.get("delayMs")
            note = f"\n\n_(the model call failed: {event.get('errorMessage', 'error')}; retrying"
            note += f" in {delay / 1000:g} s)_\n\n" if isinstance(delay, int | float) else ")_\n\n"
            self.send(_chunk("agent_message_chunk", note))

    def _delta(self, update: dict[str, Any]) -> None:
        delta = update.get("delta")
        if not isinstance(delta, str) or not delta:
            return
        if update.get("type") == "text_delta":
            self.send(_chunk("agent_message_chunk", delta))
        elif update.get("type") == "thinking_delta":
            self.send(_chunk("agent_thought_chunk", delta))

    def _tool_start(self, event: dict[str, Any]) -> None:
        call_id = str(event.get("toolCallId"))
        name = str(event.get("toolName"))
        args = event.get("args")
        tool = self.tools[call_id] = _Tool(name, args)
        if name in ("edit", "write") and (path := tool_calls.target_path(args, self.cwd)) is not None:
            tool.old_text = tool_calls.read_small_text(path)
        self.send(tool_calls.tool_call(call_id, name, args, self.cwd))

    def _in_progress(self, call_id: str, tool: _Tool) -> None:
        if not tool.started:
            tool.started = True
            self.send({"sessionUpdate": "tool_call_update", "toolCallId": call_id, "status": "in_progress"})

    def _tool_progress(self, event: dict[str, Any]) -> None:
        call_id = str(event.get("toolCallId"))
        tool = self.tools.get(call_id)
        if tool is None:
            return
        self._in_progress(call_id, tool)
        text = tool_calls.result_text(event.get("partialResult"))
        if text:
            content = [tool_calls.text_content(tool_calls.shown_text(text))]
            self.send({"sessionUpdate": "tool_call_update", "toolCallId": call_id, "content": content})

    def _tool_end(self, event: dict[str, Any]) -> None:
        call_id = str(event.get("toolCallId"))
        tool = self.tools.pop(call_id, None) or _Tool(str(event.get("toolName")), {})
        failed = bool(event.get("isError"))
        if not failed:
            self._in_progress(call_id, tool)
        content = None
        if not failed and tool.name in ("edit", "write"):
            content = self._diff(tool)
        if content is None:
            text = tool_calls.result_text(event.get("result"))
            content = [tool_calls.text_content(tool_calls.shown_text(text))] if text else []
        update = {
            "sessionUpdate": "tool_call_update",
            "toolCallId": call_id,
            "status": "failed" if failed else "completed",
            "content": content,
        }
        self.send(update)

    def _diff(self, tool: _Tool) -> list[dict[str, Any]] | None:
        path = tool_calls.target_path(tool.args, self.cwd)
        if path is None:
            return None
        new_text = tool_calls.read_small_text(os.path.realpath(path))
        if new_text is None:
            return None
        return [tool_calls.diff_content(path, tool.old_text, new_text)]

    def _usage(self, message: dict[str, Any]) -> None:
        if message.get("role") != "assistant":
            return
        usage = message.get("usage") or {}
        used = sum(int(usage.get(key) or 0) for key in ("input", "output", "cacheRead", "cacheWrite"))
        info = find_model(str(message.get("model")))
        if info is None or used <= 0:
            return
        spent = (usage.get("cost") or {}).get("total")
        if isinstance(spent, int | float):
            self.cost += float(spent)
        self.send(
            {
                "sessionUpdate": "usage_update",
                "used": used,
                "size": window_of(info, self.settings),
                "cost": {"amount": round(self.cost, 6), "currency": "USD"},
            }
        )

    def _compacted(self, event: dict[str, Any]) -> None:
        result = event.get("result")
        if isinstance(result, dict):
            before = result.get("tokensBefore")
            note = f"\n\n_(context compacted ({event.get('reason')}): {before} tokens summarised)_\n\n"
        elif event.get("errorMessage"):
            note = f"\n\n_(compaction failed: {event['errorMessage']})_\n\n"
        else:
            return
        self.send(_chunk("agent_message_chunk", note))


def _chunk(kind: str, text: str) -> dict[str, Any]:
    return {"sessionUpdate": kind, "content": {"type": "text", "text": text}}


def chunk(kind: str, text: str) -> dict[str, Any]:
    """An ``agent_message_chunk`` / ``agent_thought_chunk`` / ``user_message_chunk`` of text."""
    return _chunk(kind, text)
