"""The composition root: the one place that builds every service and hands each what it needs.

:func:`build_service` makes the :class:`SessionHost` (open sessions, worker threads, listeners),
then each service with exactly the parts it uses, and registers the services' listeners on the
host. No service builds, imports or calls another; they meet only here. The server holds the
resulting :class:`PiService` and its handlers call ``service.<part>.<method>``.

Adding a service: write ``service/<name>.py`` with a class that takes the host (and whatever else
it needs) in its constructor; build it below; register its listeners here; add an ``aclose()`` to
``closers`` if it starts background work; add it as a field of :class:`PiService`; then add the
handlers (see ARCHITECTURE.md, "Adding a method").
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from pi_lsp.agent.documents import EditorDocuments
from pi_lsp.service.branch_summary import BranchSummaryService
from pi_lsp.service.compaction import CompactionService
from pi_lsp.service.host import SessionHost
from pi_lsp.service.prompt import PromptService
from pi_lsp.service.registry import Client, Registry
from pi_lsp.service.runs import RunService
from pi_lsp.service.sessions import SessionService
from pi_lsp.service.watch import FileWatcher
from pi_lsp.session.list_cache import SessionListCache
from pi_lsp.session.list_cache_disk import DiskStore


@dataclass(eq=False)
class PiService:
    """Every service of one server process, as built by :func:`build_service`."""

    host: SessionHost
    sessions: SessionService
    compaction: CompactionService
    branch_summary: BranchSummaryService
    prompt: PromptService
    runs: RunService
    documents: EditorDocuments
    closers: list[Callable[[], Awaitable[None]]] = field(default_factory=list)

    @property
    def registry(self) -> Registry:
        return self.host.registry

    @property
    def watcher(self) -> FileWatcher:
        return self.host.watcher

    def connect(self, client: Client) -> None:
        self.host.connect(client)

    async def disconnect(self, client: Client) -> None:
        """The client's connection is gone: release its sessions, forget its state."""
        self.host.disconnect(client)

    async def close(self) -> None:
        """Server exit: stop the services' background work, then the host's threads."""
        for close in self.closers:
            await close()
        await self.host.close()


def build_service(*, workers: int = 4, watch_interval: float = 0.3) -> PiService:
    """Build every service of one server process and wire their listeners on the host."""
    host = SessionHost(workers=workers, watch_interval=watch_interval)
    compaction = CompactionService(host)
    prompt = PromptService(host)
    documents = EditorDocuments()  # editors' open buffers, for the agent's tools
    listing = SessionListCache(DiskStore())  # pi/listSessions, persisted under <agentDir>/pi-lsp
    runs = RunService(host, compaction, prompt.system_prompt_text, documents=documents)  # pi/prompt
    service = PiService(
        host=host,
        sessions=SessionService(
            host, context_usage=compaction.context_usage, before_close=runs.before_close, listing=listing
        ),
        compaction=compaction,
        branch_summary=BranchSummaryService(host),
        prompt=prompt,
        runs=runs,
        documents=documents,
        closers=[runs.aclose, compaction.aclose, prompt.aclose, lambda: host.in_thread(listing.close)],
    )
    host.append_listeners.append(compaction.on_append)  # auto-compaction after assistant messages
    host.sessions_changed_listeners.append(prompt.sessions_changed)  # session cwds are prompt roots
    host.disconnect_listeners.append(prompt.disconnect)
    host.disconnect_listeners.append(runs.disconnect)  # a run ends with the connection that started it
    host.disconnect_listeners.append(lambda client: documents.close_owner(str(client.id)))
    return service
