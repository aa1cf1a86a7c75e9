"""Compaction for open sessions: context usage, dry runs, summaries and auto-compaction.

The domain lives in :mod:`pi_lsp.compaction` (what to summarise, token counts) and
:mod:`pi_lsp.llm` (writing the summary); this module runs it on open sessions the way pi's
``AgentSession`` does, without knowing about pygls:

* **usage** — ``pi/buildContext`` reports pi's ``getContextUsage`` for the requested leaf, counted
  with the configured tokenizer and remembered per session in a :class:`TokenCache`. Only the part
  of the branch after the last assistant usage is looked at, so the cost does not grow with the
  session.
* **prepare / compact** — prepared under the session's lock, summarised outside it (one long
  operation per session: a second gets SessionBusy), then appended under the lock. Any failure,
  cancellation or conflicting change leaves the session, and its file, exactly as they were.
* **auto-compaction** — after an assistant message is appended through ``pi/appendEntry``, pi's
  ``_checkCompaction`` decides (threshold, context overflow with one recovery, stale-usage guard)
  and the compaction runs in the background, announced by ``pi/compactionStarted`` /
  ``pi/compactionEnded``. The server does not run the agent loop, so "retry after overflow" is
  left to the client: the end notification carries ``willRetry: true``.

Branch summaries (``pi/navigate`` with ``summarize``) live in :mod:`.branch_summary`; both use
:mod:`.summarizing` for the model call.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import weakref
from collections.abc import Coroutine, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from pi_lsp.compaction.prepare import CompactionPreparation, prepare_compaction
from pi_lsp.compaction.tokenizers import shared_tokenizer
from pi_lsp.compaction.tokens import (
    ContextUsage,
    UsageSettings,
    context_entries,
    context_usage_for_path,
)
from pi_lsp.gcpause import gc_paused
from pi_lsp.llm import NothingToCompactError
from pi_lsp.llm import compact as summarise
from pi_lsp.secrets import redact
from pi_lsp.service.auto_compaction import OVERFLOW_EXHAUSTED, Decision, SessionCompactionState, decide
from pi_lsp.service.compaction_config import RunConfig
from pi_lsp.service.entries import Change
from pi_lsp.service.errors import INTERNAL_ERROR, NothingToCompact, PiError, from_exception
from pi_lsp.service.host import SessionHost
from pi_lsp.service.model_choice import context_window
from pi_lsp.service.notifications import after_response, spawn
from pi_lsp.service.progress import Progress
from pi_lsp.service.record_entries import RecordEntry, usage_path
from pi_lsp.service.registry import Client, OpenSession
from pi_lsp.service.settings import Settings
from pi_lsp.service.summarizing import check_unchanged, summarise_off_loop, summarizer_for
from pi_lsp.session import SessionManager
from pi_lsp.session.view import ContextView

log = logging.getLogger(__name__)


# ------------------------------------------------------------------------------------ state


@dataclass
class Prepared:
    """A preparation and what the append step needs to check that nothing moved meanwhile."""

    preparation: CompactionPreparation | None
    leaf_id: str | None
    path_length: int
    last_type: str | None
    thinking_level: Any
    model: Mapping[str, Any] | None


class CompactionService:
    """Compaction of the host's sessions; one per server process (built by ``build_service``)."""

    def __init__(self, host: SessionHost) -> None:
        self.host = host
        self._states: weakref.WeakKeyDictionary[SessionManager, SessionCompactionState] = (
            weakref.WeakKeyDictionary()
        )
        self._lock = threading.Lock()
        self._tasks: set[asyncio.Task[Any]] = set()

    async def aclose(self) -> None:
        """Cancel background compactions (server shutdown); nothing half-done is written."""
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    # ------------------------------------------------------------------ helpers

    def state(self, manager: SessionManager) -> SessionCompactionState:
        with self._lock:
            state = self._states.get(manager)
            if state is None:
                state = self._states[manager] = SessionCompactionState()
            return state

    def broadcast(self, session: OpenSession, method: str, params: dict[str, Any]) -> None:
        """Compaction events describe a running request: they go out before its response."""
        self.host.broadcast(session, method, params, before_response=True)

    def _spawn(self, coro: Coroutine[Any, Any, Any]) -> None:
        task = spawn(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # ------------------------------------------------------------------ usage

    @staticmethod
    def config_of(session: OpenSession, settings: Settings) -> RunConfig:
        """The settings of a compaction of ``session``, with its model's window (under its lock)."""
        return RunConfig.from_settings(settings, context_window(session.manager, settings))

    def context_usage(self, manager: SessionManager, view: ContextView, settings: Settings) -> dict[str, Any]:
        """The ContextUsage of a built context for ``pi/buildContext`` (runs under the lock)."""
        window = context_window(manager, settings)
        usage = self.usage_of_view(manager, view, window, settings.compaction, settings.tokenizer)
        return dict(usage)

    def usage_of_view(
        self,
        manager: SessionManager,
        view: ContextView,
        context_window: int,
        thresholds: UsageSettings,
        tokenizer_name: str,
    ) -> ContextUsage:
        entries = usage_path(view.path, view.compaction_index)
        return context_usage_for_path(
            entries, context_window, thresholds, shared_tokenizer(tokenizer_name), self.state(manager).cache
        )

    # ------------------------------------------------------------------ prepare

    def _prepare_locked(self, manager: SessionManager, config: RunConfig) -> Prepared:
        # The collector paused: its full passes over a big session's heap, triggered by these
        # allocations, hold the interpreter lock for up to a second each (every thread stalls).
        with gc_paused():
            view = manager.context_view()
            records = view.path
            entries = [RecordEntry(record) for record in records]
            preparation = prepare_compaction(entries, config.compaction, self.state(manager).cache)
        return Prepared(
            preparation,
            manager.leaf_id,
            len(records),
            records[-1].type if records else None,
            view.thinking_level,
            view.model,
        )

    @staticmethod
    def _nothing(prepared: Prepared) -> NothingToCompact:
        if prepared.path_length == 0:
            return NothingToCompact("nothing to compact: the branch is empty")
        if prepared.last_type == "compaction":
            return NothingToCompact(
                "nothing to compact: the branch is already compacted (its last entry is a compaction)"
            )
        return NothingToCompact("nothing to compact: no messages before the kept region")

    async def prepare(self, client: Client, session_id: str | None, keep_recent_tokens: int | None) -> Any:
        """``pi/prepareCompaction``: pi's ``prepareCompaction`` on the current branch; writes nothing."""
        session = self.host.registry.resolve(client, session_id)
        settings = client.settings

        def run() -> Any:
            config = RunConfig.from_settings(
                settings, context_window(session.manager, settings), keep_recent_tokens
            )
            prepared = self._prepare_locked(session.manager, config)
            if prepared.preparation is None:
                raise self._nothing(prepared)
            return prepared.preparation.summary_view()

        return await self.host.run(session, run, writes=False)

    # ------------------------------------------------------------------ compact

    async def compact(
        self,
        client: Client,
        session_id: str | None,
        custom_instructions: str | None = None,
        progress: Progress | None = None,
    ) -> dict[str, Any]:
        """``pi/compact``: a manual compaction of the current branch."""
        session = self.host.registry.resolve(client, session_id)
        config = await self.host.run(session, lambda: self.config_of(session, client.settings), writes=False)
        return await self.run_compaction(session, config, "manual", custom_instructions, progress)

    async def run_compaction(
        self,
        session: OpenSession,
        config: RunConfig,
        reason: str,
        custom_instructions: str | None = None,
        progress: Progress | None = None,
        *,
        will_retry: bool = False,
    ) -> dict[str, Any]:
        """One compaction with its ``pi/compactionStarted`` / ``pi/compactionEnded`` events.

        Raises the protocol error (NothingToCompact, ModelError, ...) or CancelledError; in every
        such case nothing was written.
        """
        progress = progress or Progress()
        with session.exclusive("compaction"), self._compacting(session, reason):
            self.broadcast(session, "pi/compactionStarted", {"sessionId": session.id, "reason": reason})
            progress.begin("Compacting session", "preparing")
            try:
                result = await self._compact(session, config, custom_instructions, progress)
            except asyncio.CancelledError:
                progress.end("cancelled; nothing was written")
                self._ended(session, reason, aborted=True)
                raise
            except BaseException as error:
                mapped = from_exception(error) if isinstance(error, Exception) else None
                progress.end("failed; nothing was written")
                if reason != "manual" and isinstance(mapped, NothingToCompact):
                    self._ended(session, reason)  # as pi: an automatic run with nothing to do ends quietly
                else:
                    self._ended(session, reason, error=error, mapped=mapped)
                raise
            progress.end(f"compacted: {result['tokensBefore']} → {result['tokensAfter']} tokens")
            self._ended(session, reason, result=result, will_retry=will_retry)
        self.host.emit(session, Change("compaction", [result["entryId"]]))
        return result

    @staticmethod
    @contextlib.contextmanager
    def _compacting(session: OpenSession, reason: str) -> Iterator[None]:
        """Mark the compaction running, so ``pi/getRunState`` can tell a client that joins late."""
        session.compacting = reason
        try:
            yield
        finally:
            session.compacting = None

    def _ended(
        self,
        session: OpenSession,
        reason: str,
        *,
        result: dict[str, Any] | None = None,
        error: BaseException | None = None,
        mapped: PiError | None = None,
        aborted: bool = False,
        will_retry: bool = False,
        message: str | None = None,
    ) -> None:
        params: dict[str, Any] = {"sessionId": session.id, "reason": reason}
        if result is not None:
            params["result"] = result
        if error is not None or message is not None:
            if message is None:
                text = mapped.message if mapped is not None else f"{type(error).__name__}: {error}"
                prefix = {
                    "manual": "Compaction failed: ",
                    "overflow": "Context overflow recovery failed: ",
                }.get(reason, "Auto-compaction failed: ")
                message = prefix + text
            params["error"] = redact(message)
            params["errorCode"] = mapped.code if mapped is not None else INTERNAL_ERROR
            if mapped is not None and mapped.data is not None:
                params["errorData"] = mapped.data
        params["aborted"] = aborted
        params["willRetry"] = will_retry
        self.broadcast(session, "pi/compactionEnded", params)

    async def _compact(
        self,
        session: OpenSession,
        config: RunConfig,
        custom_instructions: str | None,
        progress: Progress,
    ) -> dict[str, Any]:
        manager = session.manager
        prepared = await self.host.run(session, lambda: self._prepare_locked(manager, config), writes=False)
        preparation = prepared.preparation
        if preparation is None or preparation.is_empty():
            raise self._nothing(prepared)
        count = len(preparation.messages_to_summarize) + len(preparation.turn_prefix_messages)
        async with summarizer_for(config, prepared.model) as summarizer:
            progress.report(f"summarising {count} messages ({summarizer.name})")
            try:
                thinking = prepared.thinking_level
                result = await summarise_off_loop(
                    summarizer,
                    lambda: summarise(preparation, summarizer, custom_instructions, thinking),
                    self.host.in_thread,
                )
            except NothingToCompactError as error:
                raise NothingToCompact(str(error)) from None
        progress.report("writing the compaction entry")

        def write() -> dict[str, Any]:
            check_unchanged(self.host.registry, session, prepared.leaf_id, "compaction")
            entry_id = manager.append_compaction(
                result["summary"],
                result["firstKeptEntryId"],
                result["tokensBefore"],
                dict(result["details"]),
                from_hook=False,
            )
            return {
                "entryId": entry_id,
                "summary": result["summary"],
                "firstKeptEntryId": result["firstKeptEntryId"],
                "tokensBefore": result["tokensBefore"],
                "tokensAfter": self._tokens_after(manager, config),
                "details": dict(result["details"]),
                "summarizer": summarizer.name,
            }

        return await self.host.run(session, write, writes=True)

    def _tokens_after(self, manager: SessionManager, config: RunConfig) -> int:
        """Context size right after a compaction, counted locally with the configured tokenizer."""
        tokenizer = shared_tokenizer(config.tokenizer)
        cache = self.state(manager).cache
        with gc_paused():  # as in _prepare_locked
            entries = [RecordEntry(record) for record in manager.context_view().path]
            return sum(cache.entry_tokens(entry, tokenizer) for entry in context_entries(entries))

    # ------------------------------------------------------------------ auto-compaction

    def on_append(self, client: Client, session: OpenSession, result: Mapping[str, Any]) -> None:
        """Listener of ``pi/appendEntry``: user messages reset the overflow flag; assistant messages
        are checked for auto-compaction in the background once the append has been answered."""
        entry_id = result.get("id")
        record = session.manager.get_record(entry_id) if isinstance(entry_id, str) else None
        if record is None or record.type != "message":
            return
        if record.role == "user":
            self.state(session.manager).overflow_attempted = False
            return
        if record.role != "assistant":
            return
        settings = client.settings
        after_response(lambda: self._spawn(self._auto(settings, session, record.id or "")))

    async def _auto(self, settings: Settings, session: OpenSession, entry_id: str) -> None:
        def check() -> tuple[RunConfig, Decision | None]:
            config = self.config_of(session, settings)
            return config, self.check(session.manager, config, entry_id)

        try:
            config, decision = await self.host.run(session, check, writes=False)
        except Exception:
            log.exception("auto-compaction check failed")
            return
        if decision is None:
            return
        if decision.exhausted:
            self._ended(session, decision.reason, message=OVERFLOW_EXHAUSTED)
            return
        if self.host.registry.get(session.id) is not session:
            return
        if session.busy is not None:
            log.info("auto-compaction (%s) skipped: a %s is already running", decision.reason, session.busy)
            return
        try:
            await self.run_compaction(session, config, decision.reason, will_retry=decision.will_retry)
        except asyncio.CancelledError:
            raise
        except Exception as error:  # already reported by pi/compactionEnded
            log.info("auto-compaction (%s) did not complete: %s", decision.reason, redact(str(error)))

    def check(self, manager: SessionManager, config: RunConfig, entry_id: str) -> Decision | None:
        """pi's ``_checkCompaction`` for the assistant message ``entry_id`` (runs under the lock)."""
        return decide(manager, config, entry_id, self.state(manager))
