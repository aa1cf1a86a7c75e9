"""One run's wiring: the hooks through which the agent loop and runner reach the server.

:class:`RunHooks` is built once a run is prepared (model, tools, system prompt, SDK client) and
owns the :class:`~pi_lsp.agent.runner.Runner` it builds: the model call (pi's request body), the
tools' context, the appends under the session's lock, the approval asked before a tool runs, the
checkpoint after a tool batch, and auto-compaction. What every run shares (the host, the
compaction service, the approvers, the event emitter) comes in as :class:`RunParts`.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pi_lsp.agent.approvals import DENIED, DENIED_WITH_REASON, NO_CAPABILITY, UNANSWERED, check_call
from pi_lsp.agent.documents import EditorDocuments
from pi_lsp.agent.loop import LoopHooks, Message, now_ms
from pi_lsp.agent.runner import CompactionDecision, CompactionHooks, Runner
from pi_lsp.agent.tools import ToolContext, validate_tool_arguments
from pi_lsp.agent.tools.targets import ChangePlan, CheckedTarget, content_digest
from pi_lsp.llm.convert import ConversionCache
from pi_lsp.llm.models import API, PROVIDER, ModelInfo, empty_usage
from pi_lsp.llm.request import build_messages_request
from pi_lsp.llm.stream import is_retryable_error, stream_assistant_message
from pi_lsp.secrets import redact
from pi_lsp.service import entries as ops
from pi_lsp.service.active_run import PROMPT
from pi_lsp.service.approvers import Answer, Approvers, fit_to_change
from pi_lsp.service.auto_compaction import OVERFLOW_EXHAUSTED
from pi_lsp.service.chat_state import ChatState
from pi_lsp.service.compaction_config import RunConfig
from pi_lsp.service.host import SessionHost
from pi_lsp.service.model_choice import Model, window_of
from pi_lsp.service.registry import Client, OpenSession
from pi_lsp.service.settings import Settings

if TYPE_CHECKING:
    from pi_lsp.service.compaction import CompactionService

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class RunParts:
    """What the run service lends every run."""

    host: SessionHost
    compaction: CompactionService
    approvers: Approvers
    conversions: ConversionCache  # stored messages as requests carry them, for every run
    documents: EditorDocuments | None  # the editors' unsaved buffers, which the tools respect
    emit: Callable[[OpenSession, dict[str, Any]], None]  # a pi/event to the session's holders
    checkpoint: Callable[[Client, OpenSession, list[str] | None], Awaitable[list[str]]]


@dataclass(frozen=True)
class RunSetup:
    """What a run was prepared with."""

    model: Model
    tools: list[Any]
    system: str  # the system prompt
    sdk: Any  # the borrowed Anthropic SDK client (None for a run aborted while being prepared)
    settings: Settings  # the starting client's, as they were when the run started


class RunHooks:
    """One run's hooks over one session, and :attr:`runner`, the runner they drive."""

    def __init__(
        self,
        parts: RunParts,
        client: Client,
        session: OpenSession,
        chat: ChatState,
        setup: RunSetup,
        context: list[Message],
    ) -> None:
        self.parts = parts
        self.client = client
        self.session = session
        self.chat = chat
        self.setup = setup
        info = setup.model.info
        self._tool_defs = [
            {"name": t.name, "description": t.description, "parameters": t.parameters} for t in setup.tools
        ]
        window = window_of(info, setup.settings)
        self._config = RunConfig.from_settings(setup.settings, window)
        hooks = LoopHooks(
            stream=self._stream,
            emit=self._emit,
            persist=self._persist,
            tools={tool.name: tool for tool in setup.tools},
            validate=validate_tool_arguments,
            tool_context=self._tool_context,
            before_tool_call=self._before_tool_call,
            partial_message=lambda: partial_assistant(info),
            after_tool_batch=self._after_tool_batch,
        )
        self.runner = Runner(
            context,
            hooks,
            chat.queues,
            retry=setup.settings.retry,
            compaction=CompactionHooks(self._check, self._compact, self._reload, self._exhausted),
            is_retryable=lambda message: is_retryable_error(message, window),
        )

    def _emit(self, event: dict[str, Any]) -> None:
        self.parts.emit(self.session, event)

    # ------------------------------------------------------------------ the agent loop's hooks

    async def _stream(
        self, messages: list[Message], abort: asyncio.Event, on_event: Callable[[Message], None]
    ) -> Message:
        setup, settings = self.setup, self.setup.settings
        request = build_messages_request(
            model=setup.model.info,
            system_prompt=setup.system,
            messages=messages,
            tools=self._tool_defs,
            thinking_level=setup.model.thinking_level,
            session_id=self.session.id,
            thinking_budgets=settings.thinking_budgets,
            block_images=settings.block_images,
            keys=self.chat.entry_keys.keys(messages),
            conversions=self.parts.conversions,
        )
        return await stream_assistant_message(
            setup.sdk, request, setup.model.info, abort=abort, on_event=on_event
        )

    def _tool_context(self, on_update: Callable[[Any], None]) -> Any:
        return ToolContext(
            cwd=self.session.manager.cwd,
            abort=self.runner.abort_event,
            documents=self.parts.documents,
            on_update=on_update,
            checked=self.chat.checked,
            output_files=self.runner.output_files,
        )

    async def _persist(self, message: Message) -> str | None:
        session, chat, host = self.session, self.chat, self.parts.host
        if message.get("role") == "user":
            self.parts.compaction.state(session.manager).overflow_attempted = False
        entry_id = await host.run(
            session, lambda: chat.entry_keys.append(session.manager, message), writes=True
        )
        chat.entry_of[id(message)] = entry_id
        host.emit(session, ops.Change("append", [entry_id]))
        return entry_id

    async def _after_tool_batch(self, names: list[str]) -> None:
        self.runner.entry_ids += await self.parts.checkpoint(self.client, self.session, names)

    # ------------------------------------------------------------------ approvals

    async def _before_tool_call(
        self, assistant: Message, call: Message, args: dict[str, Any], tool: Any
    ) -> str | None:
        """The ``beforeToolCall`` hook: None lets the tool run, a text blocks it (pi's blocked result)."""
        session, chat, client = self.session, self.chat, self.client
        approvers: Approvers = self.parts.approvers
        name = tool.name
        cwd = session.manager.cwd
        call_id = str(call.get("id"))
        check = check_call(name, args, cwd, client.workspace_folders)
        if check.target is not None:  # the file the tool will write: exactly the one judged here
            chat.checked.record(call_id, CheckedTarget(check.target))
        if not check.needs_approval(self.setup.settings.approval, name) or chat.allow.covers(name, args):
            return None
        if not approvers.can_ask(session.id, client):  # no approval_request nobody can answer
            return NO_CAPABILITY.format(tool=name)
        preview: dict[str, Any] = {}
        plan: ChangePlan | None = None
        try:
            context = ToolContext(
                cwd=cwd, abort=self.runner.abort_event, documents=None, on_update=lambda _r: None
            )
            plan = await tool.plan_change(args, context)
            preview = dict(plan.preview if plan is not None else await tool.preview(args, context) or {})
        except Exception as error:
            log.debug("approval preview failed: %s", redact(str(error)))
        preview.update(check.preview_fields())
        request: dict[str, Any] = {
            "sessionId": session.id,
            "toolCallId": call_id,
            "toolName": name,
            "args": args,
            "cwd": cwd,
        }
        if preview:
            request["preview"] = preview
        chat.approvals[call_id] = request
        event = {"type": "approval_request", "toolCallId": call_id, "toolName": name, "args": args}
        if preview:
            event["preview"] = preview
        self._emit(event)
        answer = await approvers.ask(session.id, client, request, self.runner.abort_event)
        chat.approvals.pop(call_id, None)
        if answer is None:  # the starting editor is there but nobody declared approvals
            answer = Answer("deny", NO_CAPABILITY.format(tool=name), False)
        answer, narrowed = fit_to_change(answer, call_id, name, args.get("path"), plan)  # hunks / content
        decision, reason, answered = answer.decision, answer.reason, answer.answered
        result: dict[str, Any] = {"type": "approval_result", "toolCallId": call_id, "decision": decision}
        if reason:
            result["reason"] = reason
        self._emit(result)
        if decision == "allowAlways":
            chat.allow.add(name, args)
        if decision in ("allow", "allowAlways"):
            if plan is not None and check.target is not None:  # hold the file to the diff shown
                shown = content_digest(plan.before)
                chat.checked.record(call_id, CheckedTarget(check.target, shown, narrowed))
            return None
        if reason and answer.reason_from_user:
            return DENIED_WITH_REASON.format(tool=name, reason=reason)
        if reason:
            return reason
        return (DENIED if answered else UNANSWERED).format(tool=name)

    # ------------------------------------------------------------------ auto-compaction

    async def _check(self, message: Message) -> CompactionDecision | None:
        session, compaction = self.session, self.parts.compaction
        entry_id = self.chat.entry_of.get(id(message))
        if entry_id is None or message.get("model") != self.setup.model.info.id:
            return None
        decision = await self.parts.host.run(
            session, lambda: compaction.check(session.manager, self._config, entry_id), writes=False
        )
        if decision is None:
            return None
        return CompactionDecision(decision.reason, decision.will_retry, decision.exhausted)

    async def _compact(self, reason: str, will_retry: bool) -> bool:
        session = self.session
        self._emit({"type": "compaction_start", "reason": reason})
        session.busy = None  # the compaction marks the session itself
        end: dict[str, Any] = {"type": "compaction_end", "reason": reason}
        try:
            result = await self.parts.compaction.run_compaction(
                session, self._config, reason, will_retry=will_retry
            )
        except asyncio.CancelledError:
            raise
        except Exception as error:
            end.update(aborted=False, willRetry=False, errorMessage=redact(str(error)))
            self._emit(end)
            return False
        finally:
            session.busy = PROMPT
        self.runner.entry_ids.append(result["entryId"])
        end.update(result=result, aborted=False, willRetry=will_retry)
        self._emit(end)
        return True

    async def _reload(self) -> list[Message]:
        session, chat = self.session, self.chat
        return await self.parts.host.run(session, lambda: chat.entry_keys.load(session.manager), writes=False)

    def _exhausted(self, reason: str) -> None:
        self._emit(
            {"type": "compaction_end", "reason": reason, "aborted": False, "willRetry": False,
             "errorMessage": OVERFLOW_EXHAUSTED},
        )  # fmt: skip


def partial_assistant(info: ModelInfo) -> Message:
    """pi's assistant message at the start of its stream (``message_start``), in pi's key order;
    pi's also carries the input usage of the stream's first event, which ours reports at the end."""
    return {
        "role": "assistant",
        "content": [],
        "api": API,
        "provider": PROVIDER,
        "model": info.id,
        "usage": empty_usage(),
        "stopReason": "stop",
        "timestamp": now_ms(),
    }
