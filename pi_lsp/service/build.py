"""The composition root: the one place that builds every service and hands each what it needs.

:func:`build_service` makes the :class:`SessionHost` (open sessions, worker threads, listeners),
then each service with exactly the parts it uses, and registers the services' listeners on the
host. No service builds, imports or calls another; they meet only here. The server holds the
resulting :class:`PiService` and its handlers call ``service.<part>.<method>``.

Adding a service: write ``service/<name>.py`` with a class that takes the host (and whatever else
it needs) in its constructor; build it below (on first use, as a :class:`Lazy` field of
:class:`LazyServices` made in :meth:`PiService.__post_init__`, when its imports are heavy and the
first requests do not need it); register its listeners here; have :meth:`PiService.close` call
its ``aclose()`` (or add it to ``closers``) if it starts background work; then add the handlers
(see ARCHITECTURE.md, "Adding a method").
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from pi_lsp.agent.documents import EditorDocuments
from pi_lsp.service.host import SessionHost
from pi_lsp.service.registry import Client, Registry
from pi_lsp.service.sessions import SessionService
from pi_lsp.service.warm_up import WarmUp, quiet_seconds
from pi_lsp.service.watch import FileWatcher
from pi_lsp.session.list_cache import SessionListCache
from pi_lsp.session.list_cache_disk import DiskStore

if TYPE_CHECKING:
    from pi_lsp.service.branch_summary import BranchSummaryService
    from pi_lsp.service.checkpoints import CheckpointService
    from pi_lsp.service.compaction import CompactionService
    from pi_lsp.service.model_clients import ModelClients
    from pi_lsp.service.prompt import PromptService
    from pi_lsp.service.runs import RunService

T = TypeVar("T")

BUILD_WAIT_AT_CLOSE = 10.0
"""Seconds server exit waits for a service build under way (a build takes ~2 s of imports)."""


class Lazy(Generic[T]):
    """A service built on first use, once, from any thread (``pi/buildContext`` asks the
    compaction service in a worker); ``make`` imports its module.

    Each has its own lock. Building the runs builds the services they are given, so a build may
    take the locks of those it uses, never the other way round: no cycle, and a request that needs
    the compaction service waits for that build only, not for a warm-up's whole build of the runs."""

    def __init__(self, make: Callable[[], T]) -> None:
        self._make = make
        self._lock = threading.Lock()
        self._value: T | None = None

    def get(self) -> T:
        value = self._value
        if value is None:
            with self._lock:
                value = self._value
                if value is None:
                    value = self._value = self._make()
        return value

    @property
    def built(self) -> T | None:
        """The service if it has been built, else None (its listeners and closers skip it)."""
        return self._value


@dataclass(frozen=True)
class LazyServices:
    """The services built on first use, so a server answers its first session requests without
    importing the agent, the LLM client, compaction, checkpoints or the system-prompt machinery (see
    docs/benchmarks.md). ``model_clients`` is the process's one cache of Anthropic SDK clients,
    which the runs borrow (a client per run would build a TLS context and open a connection every
    time)."""

    compaction: Lazy[CompactionService]
    branch_summary: Lazy[BranchSummaryService]
    prompt: Lazy[PromptService]
    runs: Lazy[RunService]
    model_clients: Lazy[ModelClients]
    checkpoints: Lazy[CheckpointService]


@dataclass(eq=False)
class PiService:
    """Every service of one server process, as built by :func:`build_service`.

    ``host``, ``sessions`` and ``documents`` exist from the start; those of :attr:`lazy` are built
    (and their modules imported) when first used. Listeners and closers of a service not built
    yet have nothing to do: it holds no state and runs nothing.
    """

    host: SessionHost
    sessions: SessionService
    documents: EditorDocuments
    closers: list[Callable[[], Awaitable[None]]] = field(default_factory=list)  # after the lazy ones
    reattach_grace: float = 0.0  # seconds a run outlives its connection (shared servers)
    lazy: LazyServices = field(init=False)
    warm_up: WarmUp = field(init=False)  # transports touch it per message (service/warm_up.py)
    _build_tasks: dict[int, asyncio.Future[Any]] = field(default_factory=dict)  # build_off_loop's

    def __post_init__(self) -> None:
        self.lazy = LazyServices(
            compaction=Lazy(self._make_compaction),
            branch_summary=Lazy(self._make_branch_summary),
            prompt=Lazy(self._make_prompt),
            runs=Lazy(self._make_runs),
            model_clients=Lazy(self._make_model_clients),
            checkpoints=Lazy(self._make_checkpoints),
        )
        self.warm_up = WarmUp(self.warm, quiet_seconds())

    def _make_compaction(self) -> CompactionService:
        from pi_lsp.service.compaction import CompactionService

        return CompactionService(self.host)

    def _make_branch_summary(self) -> BranchSummaryService:
        from pi_lsp.service.branch_summary import BranchSummaryService

        return BranchSummaryService(self.host)

    def _make_prompt(self) -> PromptService:
        from pi_lsp.service.prompt import PromptService

        return PromptService(self.host)

    def _make_checkpoints(self) -> CheckpointService:
        from pi_lsp.service.checkpoints import CheckpointService  # snapshots of runs' workspaces, restores

        return CheckpointService(self.host)

    def _make_model_clients(self) -> ModelClients:
        from pi_lsp.service.model_clients import ModelClients

        return ModelClients()

    def _make_runs(self) -> RunService:
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
        return self.lazy.compaction.get()

    @property
    def branch_summary(self) -> BranchSummaryService:
        return self.lazy.branch_summary.get()

    @property
    def prompt(self) -> PromptService:
        return self.lazy.prompt.get()

    @property
    def runs(self) -> RunService:
        return self.lazy.runs.get()

    @property
    def model_clients(self) -> ModelClients:
        return self.lazy.model_clients.get()

    @property
    def checkpoints(self) -> CheckpointService:
        return self.lazy.checkpoints.get()

    async def build_off_loop(self, lazy: Lazy[Any]) -> None:
        """Build ``lazy`` (one of :attr:`lazy`) in a worker thread if it is not built yet: its
        first build imports seconds of modules, which on the event loop would stall every other
        request meanwhile (the first ``pi/compact`` and ``pi/prompt`` did).

        Requests that come meanwhile wait for the same build and go on in the order they came
        (a ``pi/abort`` sent right behind the first ``pi/prompt`` finds its run admitted); one
        that is cancelled does not cancel the build."""
        if lazy.built is not None:
            return
        key = id(lazy)
        building = self._build_tasks.get(key)
        if building is None:
            building = asyncio.ensure_future(self.host.in_thread(lazy.get))
            self._build_tasks[key] = building
            building.add_done_callback(lambda _: self._build_tasks.pop(key, None))
        await asyncio.shield(building)

    async def warm(self) -> None:
        """Build, off the event loop, what a first prompt needs: the run service (the agent, its
        tools, checkpoints) and the Anthropic SDK's modules (the client itself needs the key the
        run resolves). The modules are imported first, holding no service's lock, so the build
        itself holds them for moments only."""
        await self.host.in_thread(_import_run_modules)
        await self.build_off_loop(self.lazy.runs)
        from pi_lsp.llm.anthropic_client import import_sdk

        await self.host.in_thread(import_sdk)

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
        runs = self.lazy.runs.built
        return runs is not None and runs.running()

    async def disconnect(self, client: Client) -> None:
        """The client's connection is gone: release its sessions, forget its state."""
        self.host.disconnect(client)

    async def close(self) -> None:
        """Server exit: stop the services' background work (the runs first, then the model clients
        they borrowed), then the host's threads. A build still under way (the warm-up's, a first
        prompt's) is waited for, briefly, so that what it built is closed too."""
        await self.warm_up.aclose()
        if building := list(self._build_tasks.values()):
            await asyncio.wait(building, timeout=BUILD_WAIT_AT_CLOSE)
        lazy = self.lazy
        closing: tuple[Lazy[Any], ...] = (lazy.runs, lazy.compaction, lazy.prompt, lazy.model_clients)
        for each in closing:
            if (built := each.built) is not None:
                await built.aclose()
        for close in self.closers:
            await close()
        await self.host.close()


def _import_run_modules() -> None:
    """The modules the run service's build imports (seconds of CPU), without building anything."""
    import pi_lsp.service.checkpoints
    import pi_lsp.service.compaction
    import pi_lsp.service.model_clients
    import pi_lsp.service.prompt
    import pi_lsp.service.runs  # noqa: F401


def build_service(*, workers: int = 4, watch_interval: float = 0.3, reattach_grace: float = 0.0) -> PiService:
    """Build every service of one server process and wire their listeners on the host.

    ``reattach_grace`` > 0 (network transports only): a run goes on that long after its
    connection closed, so a reloaded editor window finds it still running."""
    host = SessionHost(workers=workers, watch_interval=watch_interval)
    documents = EditorDocuments()  # editors' open buffers, for the agent's tools

    def context_usage(*args: Any) -> Any:
        return service.compaction.context_usage(*args)

    async def before_close(client: Client, session: Any) -> None:
        if (runs := service.lazy.runs.built) is not None:
            await runs.before_close(client, session)

    listing = SessionListCache(DiskStore())  # pi/listSessions, persisted under <agentDir>/pi-lsp
    service = PiService(
        host=host,
        sessions=SessionService(
            host, context_usage=context_usage, before_close=before_close, listing=listing
        ),
        documents=documents,
        closers=[lambda: host.in_thread(listing.close)],
        reattach_grace=reattach_grace,
    )

    lazy = service.lazy

    def prompt_roots_changed() -> None:
        if (prompt := lazy.prompt.built) is not None:
            prompt.sessions_changed()  # session cwds are roots

    def approvals_reasked() -> None:
        if (runs := lazy.runs.built) is not None:
            runs.holders_changed()

    def prompt_disconnect(client: Client) -> None:
        if (prompt := lazy.prompt.built) is not None:
            prompt.disconnect(client)

    def runs_disconnect(client: Client) -> None:
        if (runs := lazy.runs.built) is not None:
            runs.disconnect(client)  # a run ends with its connection

    # auto-compaction after assistant messages (builds the compaction service on the first append)
    host.append_listeners.append(lambda *args: service.compaction.on_append(*args))
    host.sessions_changed_listeners.append(prompt_roots_changed)
    host.sessions_changed_listeners.append(approvals_reasked)
    host.disconnect_listeners.append(prompt_disconnect)
    host.disconnect_listeners.append(runs_disconnect)
    host.disconnect_listeners.append(lambda client: documents.close_owner(str(client.id)))
    return service
