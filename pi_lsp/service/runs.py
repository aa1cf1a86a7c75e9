"""Agent runs on open sessions: ``pi/prompt`` and its companions, without pygls.

One run at a time per session (:mod:`.active_run`: admitted and registered when the prompt arrives).
A run is started by a client's ``pi/prompt`` and executed in its own task (so ``pi/abort``, queued
messages, ``pi/getRunState`` and other clients are served meanwhile);
every event goes to every client holding the session as ``pi/event {sessionId, seq, event}``, and
every message is appended to the session when it ends, under the session's lock, as pi writes it.
Approvals are asked of the client that started the run (``pi/requestApproval``).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from pi_lsp.agent.approvals import (
    DENIED,
    DENIED_WITH_REASON,
    NO_CAPABILITY,
    UNANSWERED,
    AllowList,
    check_call,
)
from pi_lsp.agent.documents import EditorDocuments
from pi_lsp.agent.loop import LoopHooks, Message, now_ms
from pi_lsp.agent.queue import MessageQueues
from pi_lsp.agent.runner import CompactionDecision, CompactionHooks, Runner
from pi_lsp.agent.tools import ToolContext, create_tools, validate_tool_arguments
from pi_lsp.agent.tools.targets import ChangePlan, CheckedTarget, CheckedTargets, content_digest
from pi_lsp.agent.tools.user_bash import run_user_bash
from pi_lsp.agent_dir import agent_dir
from pi_lsp.llm.auth import anthropic_api_key
from pi_lsp.llm.convert import ConversionCache
from pi_lsp.llm.models import (
    API,
    DEFAULT_MODEL_ID,
    MODELS,
    PROVIDER,
    ModelInfo,
    clamp_thinking_level,
    empty_usage,
    find_model,
)
from pi_lsp.llm.request import build_messages_request
from pi_lsp.llm.stream import is_retryable_error, stream_assistant_message
from pi_lsp.prompt.commands import SlashCommands, load_slash_commands
from pi_lsp.secrets import redact
from pi_lsp.service import entries as ops
from pi_lsp.service.active_run import PROMPT, ActiveRun, admit
from pi_lsp.service.approvers import Answer, Approvers, fit_to_change
from pi_lsp.service.auto_compaction import OVERFLOW_EXHAUSTED
from pi_lsp.service.compaction_config import RunConfig
from pi_lsp.service.entry_keys import EntryKeys
from pi_lsp.service.errors import InvalidParams, ModelError, SessionBusy
from pi_lsp.service.host import SessionHost
from pi_lsp.service.model_clients import ModelClients
from pi_lsp.service.notifications import spawn
from pi_lsp.service.registry import Client, OpenSession
from pi_lsp.service.settings import Settings

if TYPE_CHECKING:
    from pi_lsp.service.compaction import CompactionService

log = logging.getLogger(__name__)
T = TypeVar("T")

SystemPromptFn = Callable[[Client, str, list[str]], Awaitable[str]]
"""(client, cwd, tool names) → the system prompt text pi would send (``pi/getSystemPrompt``)."""
CheckpointFn = Callable[
    [Client, OpenSession, Callable[[dict[str, Any]], None], list[str] | None], Awaitable[str | None]
]
"""(client, session, pi/event emitter, tool names after a batch or None) → the checkpoint entry's id
if one was written (``CheckpointService.capture``)."""
NO_KEY = (
    "No Anthropic API key: set the ANTHROPIC_API_KEY environment variable for the pi-lsp server"
    " (or log in with pi so that its auth.json holds a key); nothing was written"
)
STREAMING_BEHAVIORS = ("steer", "followUp")
FINISHING_WAIT = 0.5
"""Seconds ``pi/getRunState`` waits for a run between its ``agent_end`` and its real end."""
DEFAULT_QUEUE_MODES = ("one-at-a-time", "one-at-a-time")


@dataclass(eq=False)
class ChatState:
    """Per open session: the run in progress, the queues, the event counter, what was allowed."""

    session_id: str
    queues: MessageQueues
    seq: int = 0
    run: ActiveRun | None = None  # from the arrival of its pi/prompt to its end
    user_bash: bool = False  # a pi/bash command is running (one at a time, as pi's !cmd)
    allow: AllowList = field(default_factory=AllowList)
    approvals: dict[str, dict[str, Any]] = field(default_factory=dict)
    checked: CheckedTargets = field(default_factory=CheckedTargets)  # edit/write: the file judged
    entry_of: dict[int, str] = field(default_factory=dict)
    last_event: str | None = None  # the type of the last pi/event sent
    entry_keys: EntryKeys = field(default_factory=EntryKeys)  # the run's messages → their entries

    @property
    def runner(self) -> Runner | None:
        """The run's runner once it is built (None while the run is being prepared)."""
        return self.run.runner if self.run is not None else None

    @property
    def starter(self) -> Client | None:
        return self.run.starter if self.run is not None else None


@dataclass
class Model:
    """The model and thinking level a run uses, and the entries a fresh session gets first."""

    info: ModelInfo
    thinking_level: str
    initial_entries: list[tuple[str, Any]]


class RunService:
    """``pi/prompt``, ``pi/abort``, ``pi/clearQueue``, ``pi/getRunState``, ``pi/setModel`` and friends."""

    def __init__(
        self,
        host: SessionHost,
        compaction: CompactionService,
        system_prompt: SystemPromptFn,
        *,
        model_clients: ModelClients | None = None,
        documents: EditorDocuments | None = None,
        reattach_grace: float = 0.0,
        checkpoint: CheckpointFn | None = None,
    ) -> None:
        """``reattach_grace``: seconds a run goes on after its connection closed, for a client to
        open its session again (a reloaded window); 0 ends a run with its connection, as pi does.
        ``model_clients``: the server's SDK clients, which runs borrow (``build.py`` makes them)."""
        self.host = host
        self.documents = documents  # the editors' unsaved buffers, which the tools respect
        self.compaction = compaction
        self.system_prompt = system_prompt
        self.model_clients = model_clients if model_clients is not None else ModelClients()
        self._chats: dict[str, ChatState] = {}
        self.reattach_grace = reattach_grace
        self.checkpoint = checkpoint
        self.approvers = Approvers(host.registry, reattach_grace)
        self._tasks: set[asyncio.Task[Any]] = set()
        self.conversions = ConversionCache()  # stored messages as requests carry them, for every run

    async def aclose(self) -> None:
        runs = [chat.run for chat in list(self._chats.values()) if chat.run is not None]
        for run in runs:
            run.abort()
        if runs:
            await asyncio.wait([run.ended for run in runs], timeout=5)

    def disconnect(self, client: Client) -> None:
        """A connection is gone. The runs it started end with it, as pi's process ends with its
        RPC client, unless the server keeps runs for a reattaching client: then a run goes on and
        is aborted only if nobody holds its session ``reattach_grace`` seconds later."""
        loop = asyncio.get_running_loop()
        for chat in self._chats.values():
            run = chat.run
            if run is None:
                continue
            if run.starter is client and self.reattach_grace <= 0:
                run.abort()
            elif run.starter is client or run.starter is None:
                run.starter = None
                loop.call_later(self.reattach_grace, self._abort_if_unheld, run, chat.session_id)

    def _request_cancelled(self, client: Client, run: ActiveRun) -> None:
        """``pi/prompt`` was cancelled: by the user (abort), or by its client leaving, which on a
        server keeping runs for reattaching clients is left to :meth:`disconnect`."""
        if not (client.leaving and self.reattach_grace > 0):
            run.abort()

    def _abort_if_unheld(self, run: ActiveRun, session_id: str) -> None:
        if not run.ended.done() and run.starter is None and not self.host.registry.holders(session_id):
            log.info("run on session %s aborted: nobody reattached", session_id)
            run.abort()

    def holders_changed(self) -> None:
        """A client opened or released a session: an approval waiting for someone looks again."""
        self.approvers.holders_changed()

    def running(self) -> bool:
        """Whether any run is in progress (a shared server does not exit while one is)."""
        return any(chat.run is not None for chat in self._chats.values())

    async def before_close(self, client: Client, session: OpenSession) -> None:
        """``pi/closeSession``: a run this client started, or one on a session nobody else holds,
        is aborted (as ``pi/abort``) and waited for, so its partial reply is stored before the close."""
        chat = self._chats.get(session.id)
        if chat is None:
            return
        others = [holder for holder in self.host.registry.holders(session.id) if holder is not client]
        run = chat.run
        if run is not None and (run.starter is client or not others):
            run.abort()
            await asyncio.wait({run.ended})
        if not others and chat.run is None:
            self._chats.pop(session.id, None)  # the session closes: forget its run state

    # ------------------------------------------------------------------ state and events

    def chat(self, session: OpenSession) -> ChatState:
        chat = self._chats.get(session.id)
        if chat is None:
            holder: list[ChatState] = []
            queues = MessageQueues(
                lambda: holder[0].starter.settings.queue_modes if holder[0].starter else DEFAULT_QUEUE_MODES,
                lambda: self._event(session, {"type": "queue_update", **holder[0].queues.snapshot()}),
            )
            chat = ChatState(session.id, queues)
            holder.append(chat)
            self._chats[session.id] = chat
        return chat

    def _event(self, session: OpenSession, event: dict[str, Any]) -> None:
        """``pi/event`` to every client holding the session; a failing client never stops the run."""
        chat = self.chat(session)
        chat.seq += 1
        chat.last_event = event.get("type")
        params = {"sessionId": session.id, "seq": chat.seq, "event": event}
        self.host.broadcast(session, "pi/event", params)

    # ------------------------------------------------------------------ model

    def _resolve_model(self, session: OpenSession, settings: Settings) -> Model:
        manager = session.manager
        view = manager.context_view()
        branch_types = {record.type for record in view.path}
        has_messages = len(view) > 0
        model_id: str | None = None
        if view.model is not None and view.model.get("provider") == "anthropic":
            model_id = view.model.get("modelId")
        if model_id is None or find_model(model_id) is None:
            model_id = settings.model or DEFAULT_MODEL_ID
        info = find_model(model_id)
        if info is None:
            raise ModelError(
                f'unknown model {model_id!r}: set the pi setting "model" to an Anthropic model id'
                " that pi/listModels lists",
                {"retryable": False, "model": model_id},
            )
        if "thinking_level_change" in branch_types and isinstance(view.thinking_level, str):
            level = view.thinking_level
        else:
            level = settings.thinking_level
        level = clamp_thinking_level(info, level)
        initial: list[tuple[str, Any]] = []
        if not has_messages and "model_change" not in branch_types:
            initial.append(("model_change", info.id))
        if "thinking_level_change" not in branch_types:
            initial.append(("thinking_level_change", level))
        return Model(info, level, initial)

    # ------------------------------------------------------------------ pi/prompt

    async def prompt(
        self,
        client: Client,
        session_id: str | None,
        text: str,
        images: list[dict[str, Any]],
        streaming_behavior: str | None,
    ) -> dict[str, Any]:
        session = self.host.registry.resolve(client, session_id)
        chat = self.chat(session)
        expanded = False
        if chat.run is not None and streaming_behavior is not None:
            text, expanded = await self._expand(session, text), True
            if chat.run is not None:  # still running: queued (else this prompt starts the next run)
                chat.queues.add(streaming_behavior, text, user_message(text, images))
                return {"queued": streaming_behavior}
        # admitted and registered before any await: see active_run
        run = chat.run = admit(session, chat.run, client)
        self.host.pin(session)  # the run writes to it even if its client goes (reattach_grace)
        work = spawn(self._run(client, session, chat, run, text, images, expanded))  # events at once
        # $/cancelRequest (or the connection going) aborts: answer with the aborted run
        return await until_done(work, lambda: self._request_cancelled(client, run))

    async def _expand(self, session: OpenSession, text: str) -> str:
        """``/skill:name`` and prompt templates expanded, as pi stores them."""
        return (await self._commands(session.manager.cwd)).expand(text)

    async def _run(
        self,
        client: Client,
        session: OpenSession,
        chat: ChatState,
        run: ActiveRun,
        text: str,
        images: list[dict[str, Any]],
        expanded: bool,
    ) -> dict[str, Any]:
        """Prepare the admitted run, run it, and free the session. An abort that came during the
        preparation skips what only the model call needs (system prompt, SDK): the runner starts
        aborted and stores what pi stores for an abort before the model call."""
        sdk: Any = None
        entry_ids: list[str] = []
        try:
            if not expanded:
                text = await self._expand(session, text)
            settings = client.settings
            model = self._resolve_model(session, settings)
            api_key = anthropic_api_key()
            if not api_key:
                raise ModelError(NO_KEY, {"retryable": False})
            cwd = session.manager.cwd
            tools = _create_tools(settings.tools, settings)
            system = ""
            if not run.aborted:
                system = await self.system_prompt(client, cwd, [tool.name for tool in tools])
            if not run.aborted:
                sdk = await self.model_clients.borrow(api_key, **_provider_options(settings))
            entry_ids += await self.host.run(
                session, lambda: _append_initial(session, model.initial_entries), writes=True
            )
            if entry_ids:
                self.host.emit(session, ops.Change("append", list(entry_ids)))
            chat.entry_keys = keys = EntryKeys()
            context = await self.host.run(session, lambda: keys.load(session.manager), writes=False)
            runner = self._runner(client, session, chat, context, model, tools, system, sdk, settings)
            run.attach(runner)
            entry_ids.extend(await self._checkpoint(client, session, None))  # the user's own changes
            result = await runner.run([user_message(text, images)])
        finally:
            chat.run = None
            chat.approvals.clear()
            chat.checked.clear()
            session.release(PROMPT)
            self.host.unpin(session)
            if self.host.registry.get(session.id) is not session:
                self._chats.pop(session.id, None)  # nobody reattached: the session closed
            run.finish()
            if sdk is not None:
                await self.model_clients.give_back(sdk)
        answer: dict[str, Any] = {
            "userEntryId": next(iter(result.entry_ids), None),
            "entryIds": entry_ids + result.entry_ids,
            "stopReason": result.stop_reason,
        }
        if result.error_message is not None:
            answer["errorMessage"] = redact(result.error_message)
        return answer

    def _runner(
        self,
        client: Client,
        session: OpenSession,
        chat: ChatState,
        context: list[Message],
        model: Model,
        tools: list[Any],
        system: str,
        sdk: Any,
        settings: Settings,
    ) -> Runner:
        info = model.info
        tool_defs = [
            {"name": t.name, "description": t.description, "parameters": t.parameters} for t in tools
        ]
        cwd = session.manager.cwd
        documents = self.documents
        runner_ref: list[Runner] = []

        async def stream(
            messages: list[Message], abort: asyncio.Event, on_event: Callable[[Message], None]
        ) -> Message:
            request = build_messages_request(
                model=info,
                system_prompt=system,
                messages=messages,
                tools=tool_defs,
                thinking_level=model.thinking_level,
                session_id=session.id,
                thinking_budgets=settings.thinking_budgets,
                block_images=settings.block_images,
                keys=chat.entry_keys.keys(messages),
                conversions=self.conversions,
            )
            return await stream_assistant_message(sdk, request, info, abort=abort, on_event=on_event)

        def tool_context(on_update: Callable[[Any], None]) -> Any:
            runner = runner_ref[0]
            return ToolContext(
                cwd=cwd,
                abort=runner.abort_event,
                documents=documents,
                on_update=on_update,
                checked=chat.checked,
                output_files=runner.output_files,
            )

        async def persist(message: Message) -> str | None:
            if message.get("role") == "user":
                self.compaction.state(session.manager).overflow_attempted = False
            entry_id = await self.host.run(
                session, lambda: chat.entry_keys.append(session.manager, message), writes=True
            )
            chat.entry_of[id(message)] = entry_id
            self.host.emit(session, ops.Change("append", [entry_id]))
            return entry_id

        async def before_tool_call(
            assistant: Message, call: Message, args: dict[str, Any], tool: Any
        ) -> str | None:
            return await self._approve(client, session, chat, call, args, tool, settings, runner_ref[0])

        async def after_tool_batch(names: list[str]) -> None:
            runner_ref[0].entry_ids += await self._checkpoint(client, session, names)

        hooks = LoopHooks(
            stream=stream,
            emit=lambda event: self._event(session, event),
            persist=persist,
            tools={tool.name: tool for tool in tools},
            validate=validate_tool_arguments,
            tool_context=tool_context,
            before_tool_call=before_tool_call,
            partial_message=lambda: partial_assistant(info),
            after_tool_batch=after_tool_batch,
        )
        runner = Runner(
            context,
            hooks,
            chat.queues,
            retry=settings.retry,
            compaction=self._compaction_hooks(session, chat, settings, info),
            is_retryable=lambda message: is_retryable_error(message, info.context_window),
        )
        runner_ref.append(runner)
        return runner

    async def _checkpoint(
        self, client: Client, session: OpenSession, tool_names: list[str] | None
    ) -> list[str]:
        """A snapshot of the workspace at one of the run's checkpoints: the new entry's id, if any."""
        if self.checkpoint is None:
            return []
        emit = lambda event: self._event(session, event)  # noqa: E731
        entry_id = await self.checkpoint(client, session, emit, tool_names)
        return [entry_id] if entry_id is not None else []

    # ------------------------------------------------------------------ auto-compaction

    def _compaction_hooks(
        self, session: OpenSession, chat: ChatState, settings: Settings, info: ModelInfo
    ) -> CompactionHooks:
        config = RunConfig.from_settings(settings)
        config = RunConfig(**{**config.__dict__, "context_window": info.context_window})

        async def check(message: Message) -> CompactionDecision | None:
            entry_id = chat.entry_of.get(id(message))
            if entry_id is None or message.get("model") != info.id:
                return None
            decision = await self.host.run(
                session, lambda: self.compaction.check(session.manager, config, entry_id), writes=False
            )
            if decision is None:
                return None
            return CompactionDecision(decision.reason, decision.will_retry, decision.exhausted)

        async def compact(reason: str, will_retry: bool) -> bool:
            self._event(session, {"type": "compaction_start", "reason": reason})
            session.busy = None  # the compaction marks the session itself
            end: dict[str, Any] = {"type": "compaction_end", "reason": reason}
            try:
                result = await self.compaction.run_compaction(session, config, reason, will_retry=will_retry)
            except asyncio.CancelledError:
                raise
            except Exception as error:
                end.update(aborted=False, willRetry=False, errorMessage=redact(str(error)))
                self._event(session, end)
                return False
            finally:
                session.busy = PROMPT
            runner = chat.runner
            if runner is not None:
                runner.entry_ids.append(result["entryId"])
            end.update(result=result, aborted=False, willRetry=will_retry)
            self._event(session, end)
            return True

        async def reload() -> list[Message]:
            return await self.host.run(session, lambda: chat.entry_keys.load(session.manager), writes=False)

        def exhausted(reason: str) -> None:
            self._event(
                session,
                {"type": "compaction_end", "reason": reason, "aborted": False, "willRetry": False,
                 "errorMessage": OVERFLOW_EXHAUSTED},
            )  # fmt: skip

        return CompactionHooks(check, compact, reload, exhausted)

    # ------------------------------------------------------------------ approvals

    async def _approve(
        self,
        client: Client,
        session: OpenSession,
        chat: ChatState,
        call: Message,
        args: dict[str, Any],
        tool: Any,
        settings: Settings,
        runner: Runner,
    ) -> str | None:
        """The ``beforeToolCall`` hook: None lets the tool run, a text blocks it (pi's blocked result)."""
        name = tool.name
        cwd = session.manager.cwd
        call_id = str(call.get("id"))
        check = check_call(name, args, cwd, client.workspace_folders)
        if check.target is not None:  # the file the tool will write: exactly the one judged here
            chat.checked.record(call_id, CheckedTarget(check.target))
        if not check.needs_approval(settings.approval, name) or chat.allow.covers(name, args):
            return None
        if not self.approvers.can_ask(session.id, client):  # no approval_request nobody can answer
            return NO_CAPABILITY.format(tool=name)
        preview: dict[str, Any] = {}
        plan: ChangePlan | None = None
        try:
            context = ToolContext(
                cwd=cwd, abort=runner.abort_event, documents=None, on_update=lambda _r: None
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
        self._event(session, event)
        answer = await self.approvers.ask(session.id, client, request, runner.abort_event)
        chat.approvals.pop(call_id, None)
        if answer is None:  # the starting editor is there but nobody declared approvals
            answer = Answer("deny", NO_CAPABILITY.format(tool=name), False)
        answer, narrowed = fit_to_change(answer, call_id, name, args.get("path"), plan)  # hunks / content
        decision, reason, answered = answer.decision, answer.reason, answer.answered
        result: dict[str, Any] = {"type": "approval_result", "toolCallId": call_id, "decision": decision}
        if reason:
            result["reason"] = reason
        self._event(session, result)
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

    # ------------------------------------------------------------------ the other methods

    def abort(self, client: Client, session_id: str | None) -> dict[str, Any]:
        session = self.host.registry.resolve(client, session_id)
        chat = self._chats.get(session.id)
        if chat is None or chat.run is None:
            return {"aborted": False}
        chat.run.abort()  # also a run still being prepared: it then never reaches the model
        return {"aborted": True}

    def clear_queue(self, client: Client, session_id: str | None) -> dict[str, Any]:
        session = self.host.registry.resolve(client, session_id)
        steering, follow_up = self.chat(session).queues.clear()
        return {"steering": steering, "followUp": follow_up}

    async def run_state(self, client: Client, session_id: str | None) -> dict[str, Any]:
        session = self.host.registry.resolve(client, session_id)
        chat = self.chat(session)
        run = chat.run
        if run is not None and chat.last_event == "agent_end":
            # After agent_end the run only looks at compaction and the queues: an editor asking
            # right then (it redraws on agent_end) would see running: true and no event after
            # to end it. Wait for that last step (it is short, or it emits compaction_start).
            await asyncio.wait({run.ended}, timeout=FINISHING_WAIT)
        state: dict[str, Any] = {"running": chat.run is not None, "seq": chat.seq}
        live = chat.runner.snapshot() if chat.runner is not None else {"tools": []}
        if "partial" in live:
            state["partial"] = live["partial"]
        state["tools"] = live["tools"]
        state["queue"] = chat.queues.snapshot()
        state["pendingApprovals"] = list(chat.approvals.values())
        if session.compacting is not None:
            state["compaction"] = {"reason": session.compacting}
        return state

    async def set_model(
        self, client: Client, session_id: str | None, model_id: str | None, thinking_level: str | None
    ) -> dict[str, Any]:
        session = self.host.registry.resolve(client, session_id)
        if model_id is not None and find_model(model_id) is None:
            raise InvalidParams(f"modelId {model_id!r} is not a model this server knows (see pi/listModels)",
                                {"field": "modelId"})  # fmt: skip
        chat = self.chat(session)
        if chat.run is not None or session.busy is not None:
            raise SessionBusy(f"session {session.id} is busy; change the model when the run has ended",
                              {"busy": session.busy or "prompt"})  # fmt: skip
        current = self._resolve_model(session, client.settings)

        def write() -> tuple[dict[str, Any], list[str]]:
            info = find_model(model_id) if model_id is not None else current.info
            assert info is not None
            level = clamp_thinking_level(info, thinking_level or current.thinking_level)
            manager = session.manager
            ids: list[str] = []
            view = manager.context_view()
            recorded = view.model.get("modelId") if view.model is not None else None
            if info.id != recorded:
                ids.append(manager.append_model_change("anthropic", info.id))
            has_level = any(record.type == "thinking_level_change" for record in view.path)
            if level != view.thinking_level or not has_level:
                ids.append(manager.append_thinking_level_change(level))
            model = {"provider": "anthropic", "modelId": info.id}
            return {"model": model, "thinkingLevel": level, "entryIds": ids}, ids

        result, ids = await self.host.run(session, write, writes=True)
        if ids:
            self.host.emit(session, ops.Change("append", ids))
        return result

    def list_models(self, client: Client) -> dict[str, Any]:
        session = self.host.registry.get(client.active) if client.active is not None else None
        if session is not None:
            try:
                model = self._resolve_model(session, client.settings)
                current = {
                    "provider": "anthropic",
                    "modelId": model.info.id,
                    "thinkingLevel": model.thinking_level,
                }
            except ModelError:
                session = None
        if session is None:
            info = find_model(client.settings.model or DEFAULT_MODEL_ID) or find_model(DEFAULT_MODEL_ID)
            assert info is not None
            level = clamp_thinking_level(info, client.settings.thinking_level)
            current = {"provider": "anthropic", "modelId": info.id, "thinkingLevel": level}
        models = [model.to_wire() for model in MODELS.values()]
        # additive: whether a key is configured, so an editor can say how to set one before a prompt fails
        # agentDir: where pi's auth.json and settings live for this server (for the no-key notice)
        return {
            "models": models,
            "current": current,
            "hasApiKey": anthropic_api_key() is not None,
            "agentDir": str(agent_dir()),
        }

    async def session_stats(self, client: Client, session_id: str | None) -> dict[str, Any]:
        session = self.host.registry.resolve(client, session_id)
        settings = client.settings

        def stats() -> dict[str, Any]:
            view = session.manager.context_view()
            result = session_stats(view.messages())
            usage = self.compaction.context_usage(session.manager, view, settings)
            result["contextUsage"] = usage
            return result

        return await self.host.run(session, stats, writes=False)

    # ------------------------------------------------------------------ slash commands, user bash

    async def _commands(self, cwd: str) -> SlashCommands:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(None, load_slash_commands, cwd, str(agent_dir()))

    async def get_commands(self, cwd: str) -> dict[str, Any]:
        """``pi/getCommands``: prompt templates, then skills as ``skill:<name>`` (pi's order)."""
        return {"commands": (await self._commands(cwd)).to_wire()}

    async def bash(
        self, client: Client, session_id: str | None, command: str, exclude_from_context: bool
    ) -> dict[str, Any]:
        """``pi/bash``: the user's ``!cmd`` / ``!!cmd``, stored as pi's ``bashExecution`` message.

        During a run pi holds the message back until the run ends; so does this (the command runs
        at once, its entry is appended when the run is over). One command at a time per session, as
        pi's ``!cmd``: a second one meanwhile is SessionBusy. Cancelling kills the command.
        """
        session = self.host.registry.resolve(client, session_id)
        chat = self.chat(session)
        if chat.user_bash:  # checked and marked before any await: see active_run
            raise SessionBusy(f"session {session.id} is running a command of the user's (pi/bash); wait"
                              " for it or cancel it", {"busy": "bash"})  # fmt: skip
        chat.user_bash = True
        try:
            options = _shell_options(client.settings)
            abort = asyncio.Event()
            task = asyncio.ensure_future(
                run_user_bash(
                    command,
                    session.manager.cwd,
                    abort,
                    shell_path=options["shell_path"],
                    command_prefix=options["shell_command_prefix"],
                )
            )
            result = await until_done(task, abort.set)
        finally:
            chat.user_bash = False
        while (run := chat.run) is not None:  # held back until the run has ended
            await asyncio.wait({run.ended})
        message = result.to_message(command, now_ms(), True if exclude_from_context else None)
        entry_id = await self.host.run(session, lambda: session.manager.append_message(message), writes=True)
        self.host.emit(session, ops.Change("append", [entry_id]))
        await self._checkpoint(client, session, ["bash"])
        return {
            "output": result.output,
            "exitCode": result.exit_code,
            "cancelled": result.cancelled,
            "truncated": result.truncated,
            "entryId": entry_id,
        }


# ------------------------------------------------------------------------------ helpers


def user_message(text: str, images: list[dict[str, Any]]) -> Message:
    """pi's prompt message: a text block, then the images, stamped now."""
    content: list[dict[str, Any]] = [{"type": "text", "text": text}]
    content += [{"type": "image", "data": image["data"], "mimeType": image["mimeType"]} for image in images]
    return {"role": "user", "content": content, "timestamp": now_ms()}


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


def session_stats(messages: list[dict[str, Any]]) -> dict[str, Any]:
    """pi's ``getSessionStats`` over the context's messages (pi counts its agent's messages: after
    loading a session those are the branch's context, compaction summary included)."""
    counts = {"user": 0, "assistant": 0, "toolResult": 0}
    tool_calls = 0
    tokens = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0}
    cost = 0.0
    total = 0
    for message in messages:
        total += 1
        role = message.get("role")
        if role in counts:
            counts[role] += 1
        if role != "assistant":
            continue
        tool_calls += sum(1 for block in message.get("content") or [] if block.get("type") == "toolCall")
        usage = message.get("usage") or {}
        for key in tokens:
            value = usage.get(key)
            if isinstance(value, int | float):
                tokens[key] += int(value)
        spent = (usage.get("cost") or {}).get("total")
        if isinstance(spent, int | float):
            cost += spent
    return {
        "userMessages": counts["user"],
        "assistantMessages": counts["assistant"],
        "toolCalls": tool_calls,
        "toolResults": counts["toolResult"],
        "totalMessages": total,
        "tokens": {**tokens, "total": sum(tokens.values())},
        "cost": cost,
    }


async def until_done(task: asyncio.Future[T], on_cancel: Callable[[], None]) -> T:
    """``task``'s result; a cancellation of the caller calls ``on_cancel`` and keeps waiting (each
    further cancellation too: the task is never cancelled from here, only asked to stop)."""
    while True:
        try:
            return await asyncio.shield(task)
        except asyncio.CancelledError:
            if task.done():
                return task.result()
            on_cancel()


def _append_initial(session: OpenSession, entries: list[tuple[str, Any]]) -> list[str]:
    manager = session.manager
    ids: list[str] = []
    for kind, value in entries:
        if kind == "model_change":
            ids.append(manager.append_model_change("anthropic", value))
        else:
            ids.append(manager.append_thinking_level_change(value))
    return ids


def _shell_options(settings: Settings) -> dict[str, str | None]:
    """pi's ``shellPath`` / ``shellCommandPrefix`` (the user's settings only), for bash and ``!cmd``."""
    return {"shell_path": settings.shell_path, "shell_command_prefix": settings.shell_command_prefix}


def _create_tools(names: list[str], settings: Settings) -> list[Any]:
    try:
        return list(create_tools(names, **_shell_options(settings)))
    except ValueError as error:
        raise InvalidParams(f"setting tools: {error}", {"field": "tools"}) from None


def _provider_options(settings: Settings) -> dict[str, Any]:
    """pi's ``retry.provider.{maxRetries,timeoutMs}`` for the runs' SDK client, when set."""
    raw = settings.as_dict().get("retry")
    provider = raw.get("provider") if isinstance(raw, dict) else None
    options: dict[str, Any] = {}
    if isinstance(provider, dict):
        retries = provider.get("maxRetries")
        if isinstance(retries, int) and not isinstance(retries, bool) and retries >= 0:
            options["max_retries"] = retries
        timeout = provider.get("timeoutMs")
        if isinstance(timeout, int | float) and not isinstance(timeout, bool) and timeout > 0:
            options["timeout"] = timeout / 1000
    return options
