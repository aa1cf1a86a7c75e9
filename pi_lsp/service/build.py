"""The composition root: the one place that builds every service and hands each what it needs.

:func:`build_service` makes the :class:`SessionHost` (open sessions, worker threads, listeners),
then each service with exactly the parts it uses, and registers the services' listeners on the
host. No service builds, imports or calls another; they meet only here. The server holds the
resulting :class:`PiService` and its handlers call ``service.<part>.<method>``.

Adding a service: write ``service/<name>.py`` with a class that takes the host (and whatever else
it needs) in its constructor; build it below (on first use, in :meth:`PiService._build`, when its
imports are heavy and the first requests do not need it, with its name in :data:`LAZY_SERVICES`);
register its listeners here; have :meth:`PiService.close` call its ``aclose()`` (or add it to
``closers``) if it starts background work; then add the handlers (see ARCHITECTURE.md, "Adding a
method").
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from pi_lsp.agent.documents import EditorDocuments
from pi_lsp.service.checkpoints import CheckpointService
from pi_lsp.service.host import SessionHost
from pi_lsp.service.registry import Client, Registry
from pi_lsp.service.sessions import SessionService
from pi_lsp.service.watch import FileWatcher
from pi_lsp.session.list_cache import SessionListCache
from pi_lsp.session.list_cache_disk import DiskStore

if TYPE_CHECKING:
    from pi_lsp.service.branch_summary import BranchSummaryService
    from pi_lsp.service.compaction import CompactionService
    from pi_lsp.service.model_clients import ModelClients
    from pi_lsp.service.prompt import PromptService
    from pi_lsp.service.runs import RunService

LAZY_SERVICES = ("compaction", "branch_summary", "prompt", "runs", "model_clients")
"""Built on first use, so a server answers its first session requests without importing the
agent, the LLM client, compaction or the system-prompt machinery (see docs/benchmarks.md).
``model_clients`` is the process's one cache of Anthropic SDK clients, which the runs borrow
(a client per run would build a TLS context and open a connection every time)."""


@dataclass(eq=False)
class PiService:
    """Every service of one server process, as built by :func:`build_service`.

    ``host``, ``sessions`` and ``documents`` exist from the start; the services in
    :data:`LAZY_SERVICES` are built (and their modules imported) when first used, once, from any
    thread (``pi/buildContext`` asks the compaction service in a worker). Listeners and closers of
    a service not built yet have nothing to do: it holds no state and runs nothing.
    """

    host: SessionHost
    sessions: SessionService
    documents: EditorDocuments
    checkpoints: CheckpointService
    closers: list[Callable[[], Awaitable[None]]] = field(default_factory=list)  # after the lazy ones
    reattach_grace: float = 0.0  # seconds a run outlives its connection (shared servers)
    _built: dict[str, Any] = field(default_factory=dict)
    _building: threading.RLock = field(default_factory=threading.RLock)  # runs builds the others
    _build_tasks: dict[str, asyncio.Future[Any]] = field(default_factory=dict)  # build_off_loop's

    def _lazy(self, name: str) -> Any:
        built = self._built.get(name)
        if built is None:
            with self._building:
                built = self._built.get(name)
                if built is None:
                    built = self._built[name] = self._build(name)
        return built

    def _build(self, name: str) -> Any:
        """One of :data:`LAZY_SERVICES`, its module imported now."""
        if name == "compaction":
            from pi_lsp.service.compaction import CompactionService

            return CompactionService(self.host)
        if name == "branch_summary":
            from pi_lsp.service.branch_summary import BranchSummaryService

            return BranchSummaryService(self.host)
        if name == "prompt":
            from pi_lsp.service.prompt import PromptService

            return PromptService(self.host)
        if name == "model_clients":
            from pi_lsp.service.model_clients import ModelClients

            return ModelClients()
        assert name == "runs"
        from pi_lsp.service.runs import RunService  # pi/prompt and its companions

        prompt_text = self.prompt.system_prompt_text
        return RunService(
            self.host,
            self.compaction,
            prompt_text,
            model_clients=self.model_clients,
            documents=self.documents,
            reattach_grace=self.reattach_grace,
            checkpoint=self.checkpoints.capture,
        )

    @property
    def compaction(self) -> CompactionService:
        return cast("CompactionService", self._lazy("compaction"))

    @property
    def branch_summary(self) -> BranchSummaryService:
        return cast("BranchSummaryService", self._lazy("branch_summary"))

    @property
    def prompt(self) -> PromptService:
        return cast("PromptService", self._lazy("prompt"))

    @property
    def runs(self) -> RunService:
        return cast("RunService", self._lazy("runs"))

    @property
    def model_clients(self) -> ModelClients:
        return cast("ModelClients", self._lazy("model_clients"))

    async def build_off_loop(self, name: str) -> None:
        """Build ``name`` (one of :data:`LAZY_SERVICES`) in a worker thread if it is not built yet:
        its first build imports seconds of modules, which on the event loop would stall every
        other request meanwhile (the first ``pi/compact`` and ``pi/prompt`` did).

        Requests that come meanwhile wait for the same build and go on in the order they came
        (a ``pi/abort`` sent right behind the first ``pi/prompt`` finds its run admitted); one
        that is cancelled does not cancel the build."""
        if name in self._built:
            return
        building = self._build_tasks.get(name)
        if building is None:
            building = asyncio.ensure_future(self.host.in_thread(lambda: self._lazy(name)))
            self._build_tasks[name] = building
            building.add_done_callback(lambda _: self._build_tasks.pop(name, None))
        await asyncio.shield(building)

    def built(self, name: str) -> Any:
        """The service ``name`` of :data:`LAZY_SERVICES` if it has been built, else None."""
        return self._built.get(name)

    @property
    def registry(self) -> Registry:
        return self.host.registry

    @property
    def watcher(self) -> FileWatcher:
        return self.host.watcher

    def connect(self, client: Client) -> None:
        self.host.connect(client)

    def running(self) -> bool:
        """Whether a run is in progress (a shared server waits for it before exiting when idle)."""
        runs = self.built("runs")
        return runs is not None and bool(runs.running())

    async def disconnect(self, client: Client) -> None:
        """The client's connection is gone: release its sessions, forget its state."""
        self.host.disconnect(client)

    async def close(self) -> None:
        """Server exit: stop the services' background work (the runs first, then the model clients
        they borrowed), then the host's threads."""
        for name in ("runs", "compaction", "prompt", "model_clients"):
            if (built := self.built(name)) is not None:
                await built.aclose()
        for close in self.closers:
            await close()
        await self.host.close()


def build_service(*, workers: int = 4, watch_interval: float = 0.3, reattach_grace: float = 0.0) -> PiService:
    """Build every service of one server process and wire their listeners on the host.

    ``reattach_grace`` > 0 (network transports only): a run goes on that long after its
    connection closed, so a reloaded editor window finds it still running."""
    host = SessionHost(workers=workers, watch_interval=watch_interval)
    documents = EditorDocuments()  # editors' open buffers, for the agent's tools

    def context_usage(*args: Any) -> Any:
        return service.compaction.context_usage(*args)

    async def before_close(client: Client, session: Any) -> None:
        if (runs := service.built("runs")) is not None:
            await runs.before_close(client, session)

    listing = SessionListCache(DiskStore())  # pi/listSessions, persisted under <agentDir>/pi-lsp
    service = PiService(
        host=host,
        sessions=SessionService(
            host, context_usage=context_usage, before_close=before_close, listing=listing
        ),
        documents=documents,
        checkpoints=CheckpointService(host),  # snapshots of runs' workspaces, restores
        closers=[lambda: host.in_thread(listing.close)],
        reattach_grace=reattach_grace,
    )

    def when_built(name: str, method: str) -> Callable[..., None]:
        def listener(*args: Any) -> None:
            if (built := service.built(name)) is not None:
                getattr(built, method)(*args)

        return listener

    # auto-compaction after assistant messages (builds the compaction service on the first append)
    host.append_listeners.append(lambda *args: service.compaction.on_append(*args))
    host.sessions_changed_listeners.append(when_built("prompt", "sessions_changed"))  # session cwds are roots
    host.sessions_changed_listeners.append(when_built("runs", "holders_changed"))  # approvals re-asked
    host.disconnect_listeners.append(when_built("prompt", "disconnect"))
    host.disconnect_listeners.append(when_built("runs", "disconnect"))  # a run ends with its connection
    host.disconnect_listeners.append(lambda client: documents.close_owner(str(client.id)))
    return service
