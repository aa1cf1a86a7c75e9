"""Agent runs on open sessions: ``pi/prompt`` and its companions, without pygls.

One run at a time per session (:mod:`.active_run`: admitted and registered when the prompt arrives).
A run is started by a client's ``pi/prompt`` and executed in its own task (so ``pi/abort``, queued
messages, ``pi/getRunState`` and other clients are served meanwhile);
every event goes to every client holding the session as ``pi/event {sessionId, seq, event}``, and
every message is appended to the session when it ends, under the session's lock, as pi writes it.
Approvals are asked of the client that started the run (``pi/requestApproval``).

This module admits, prepares and ends runs; the parts live beside it: a session's chat state
(:mod:`.chat_state`), one run's hooks and runner (:mod:`.run_hooks`), the model choice
(:mod:`.model_choice`), ``pi/getSessionStats`` (:mod:`.session_stats`) and ``pi/bash``
(:mod:`.user_shell`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from pi_lsp.agent.documents import EditorDocuments
from pi_lsp.agent.loop import Message, now_ms
from pi_lsp.agent.tools import create_tools
from pi_lsp.agent_dir import agent_dir
from pi_lsp.llm.auth import anthropic_api_key
from pi_lsp.llm.convert import ConversionCache
from pi_lsp.prompt.commands import SlashCommands, load_slash_commands
from pi_lsp.secrets import redact
from pi_lsp.service import entries as ops
from pi_lsp.service.active_run import PROMPT, ActiveRun, admit
from pi_lsp.service.approvers import Approvers
from pi_lsp.service.chat_state import ChatState, until_done
from pi_lsp.service.entry_keys import EntryKeys
from pi_lsp.service.errors import InvalidParams, ModelError, SessionBusy
from pi_lsp.service.host import SessionHost
from pi_lsp.service.model_choice import append_initial, check_model_id, list_models, resolve_model, set_model
from pi_lsp.service.model_clients import ModelClients, provider_options
from pi_lsp.service.notifications import spawn
from pi_lsp.service.registry import Client, OpenSession
from pi_lsp.service.run_hooks import RunHooks, RunParts, RunSetup
from pi_lsp.service.session_stats import session_stats
from pi_lsp.service.settings import Settings
from pi_lsp.service.user_shell import run_user_command, shell_options

if TYPE_CHECKING:
    from pi_lsp.service.compaction import CompactionService

log = logging.getLogger(__name__)

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
FINISHING_WAIT = 0.5
"""Seconds ``pi/getRunState`` waits for a run between its ``agent_end`` and its real end."""


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
        self._parts = RunParts(
            host, compaction, self.approvers, self.conversions, documents, self._event, self._checkpoint
        )

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
            chat = ChatState(session.id, lambda event: self._event(session, event))
            self._chats[session.id] = chat
        return chat

    def _event(self, session: OpenSession, event: dict[str, Any]) -> None:
        """``pi/event`` to every client holding the session; a failing client never stops the run."""
        chat = self.chat(session)
        chat.seq += 1
        chat.last_event = event.get("type")
        params = {"sessionId": session.id, "seq": chat.seq, "event": event}
        self.host.broadcast(session, "pi/event", params)

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
            model = resolve_model(session, settings)
            api_key = anthropic_api_key()
            if not api_key:
                raise ModelError(NO_KEY, {"retryable": False})
            cwd = session.manager.cwd
            tools = _create_tools(settings)
            system = ""
            if not run.aborted:
                system = await self.system_prompt(client, cwd, [tool.name for tool in tools])
            if not run.aborted:
                sdk = await self.model_clients.borrow(api_key, **provider_options(settings))
            entry_ids += await self.host.run(
                session, lambda: append_initial(session, model.initial_entries), writes=True
            )
            if entry_ids:
                self.host.emit(session, ops.Change("append", list(entry_ids)))
            chat.entry_keys = keys = EntryKeys()
            context = await self.host.run(session, lambda: keys.load(session.manager), writes=False)
            setup = RunSetup(model, tools, system, sdk, settings)
            runner = RunHooks(self._parts, client, session, chat, setup, context).runner
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

    async def _checkpoint(
        self, client: Client, session: OpenSession, tool_names: list[str] | None
    ) -> list[str]:
        """A snapshot of the workspace at one of the run's checkpoints: the new entry's id, if any."""
        if self.checkpoint is None:
            return []
        emit = lambda event: self._event(session, event)  # noqa: E731
        entry_id = await self.checkpoint(client, session, emit, tool_names)
        return [entry_id] if entry_id is not None else []

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
        check_model_id(model_id)
        chat = self.chat(session)
        if chat.run is not None or session.busy is not None:
            raise SessionBusy(f"session {session.id} is busy; change the model when the run has ended",
                              {"busy": session.busy or "prompt"})  # fmt: skip
        return await set_model(self.host, session, client.settings, model_id, thinking_level)

    def list_models(self, client: Client) -> dict[str, Any]:
        return list_models(self.host.registry, client)

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
        """``pi/bash``: the user's ``!cmd`` / ``!!cmd`` (:mod:`.user_shell`), then a checkpoint."""
        session = self.host.registry.resolve(client, session_id)
        after = lambda: self._checkpoint(client, session, ["bash"])  # noqa: E731
        chat = self.chat(session)
        return await run_user_command(
            self.host, session, chat, client.settings, command, exclude_from_context, after
        )


# ------------------------------------------------------------------------------ helpers


def user_message(text: str, images: list[dict[str, Any]]) -> Message:
    """pi's prompt message: a text block, then the images, stamped now."""
    content: list[dict[str, Any]] = [{"type": "text", "text": text}]
    content += [{"type": "image", "data": image["data"], "mimeType": image["mimeType"]} for image in images]
    return {"role": "user", "content": content, "timestamp": now_ms()}


def _create_tools(settings: Settings) -> list[Any]:
    try:
        return list(create_tools(settings.tools, **shell_options(settings)))
    except ValueError as error:
        raise InvalidParams(f"setting tools: {error}", {"field": "tools"}) from None
