"""The system prompt in the server: requests, server-side watching, diagnostics and hover text.

Domain code lives in :mod:`pi_lsp.prompt`; this service decides *for whom* and *when*:

* ``pi/getSystemPrompt`` / ``pi/listSkills`` (and a run's system prompt) run the domain's
  ``workspace_prompt`` / ``workspace_skills`` in a worker thread with the client's tokenizer.
* Each client has **roots**: its workspace folders (from ``initialized`` and
  ``workspace/didChangeWorkspaceFolders``) plus the cwd of every session it holds. One
  :class:`~pi_lsp.prompt.watch.PromptWatcher` per server process watches the union of all roots
  (server-side, so clients that cannot register file watchers, such as Neovim 0.7, are covered);
  it starts with the first root and stops when none is left (at ``shutdown`` or disconnect).
* For every client and root the service keeps the last build (prompt result, per-file LSP
  diagnostics, token contributions). When the watcher reports a burst of changes for a root, or a
  client sends ``workspace/didChangeWatchedFiles`` (fed into the same debouncer), the root is
  rebuilt, one ``pi/systemPromptChanged`` ``{cwd, sources}`` is sent, and then
  ``textDocument/publishDiagnostics`` for every file the old or new build covers (an empty list
  clears a file that was fixed or deleted). The notification does not wait for the diagnostics,
  which read every covered file once more.
* A file covered by several roots (the agent dir's AGENTS.md, global skills) gets the union of
  their diagnostics, without duplicates.
* The client's workspace ``.pi/settings.json`` gets a warning for each value its settings do not
  apply (``Settings.ignored_workspace_settings``), published after ``initialized`` and again
  whenever the settings change, but only when that list changed: each is reported once.
* ``pi/getSystemPrompt`` and hovers wait for pending root changes (:meth:`PromptService.settled`),
  so once a client has an answer, the roots it had added before are watched.
* Root changes (sessions opened or released, folders, shutdown) are *coalesced*: one sync loop
  runs at a time, and each pass takes in every change made before it began. A pass updates the
  watcher in one step (only new roots are planned), marks the requests it served as settled, then
  builds the roots that have no build yet, stopping early when another change arrives. A thousand
  sessions with distinct cwds cost a thousand plans and builds, not a million.

Everything here runs on the event loop except the builds (a two-thread executor of its own, so a
big skill tree never delays session work) and watcher start/stop. Nothing imports pygls.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Coroutine, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import orjson

from pi_lsp.paths import path_to_uri
from pi_lsp.prompt.assemble import PromptResult, SkillListJson, skill_list_json
from pi_lsp.prompt.diagnostics import LspDiagnostic, PromptFileIndex, settings_file_diagnostics
from pi_lsp.prompt.watch import PromptWatcher
from pi_lsp.prompt.workspace import workspace_prompt, workspace_skills
from pi_lsp.service.errors import InvalidParams
from pi_lsp.service.host import SessionHost
from pi_lsp.service.notifications import send, spawn
from pi_lsp.service.registry import Client

log = logging.getLogger(__name__)

CHANGED = "pi/systemPromptChanged"
PUBLISH = "textDocument/publishDiagnostics"
SETTINGS_FILE = "settings.json"


def _find(items: Sequence[Any], path: str, attribute: str) -> Any:
    """The item whose ``attribute`` names ``path``: same normalised path, else same real path."""
    key = os.path.normpath(path)
    for item in items:
        if os.path.normpath(getattr(item, attribute)) == key:
            return item
    try:
        real = os.path.realpath(path)
        return next((i for i in items if os.path.realpath(getattr(i, attribute)) == real), None)
    except (OSError, ValueError):
        return None


@dataclass(frozen=True)
class Build:
    """One assembled prompt for a root, with what the editor features need from it."""

    cwd: str
    tokenizer: str
    result: PromptResult
    index: PromptFileIndex
    diagnostics: dict[str, list[LspDiagnostic]]

    @property
    def files(self) -> set[str]:
        return set(self.diagnostics)

    def hover_text(self, path: str) -> str | None:
        """Markdown saying how many tokens ``path`` adds to this prompt; None if it is no source."""
        tokens = self.index.token_contribution(path)
        if tokens is None:
            return None
        skill = _find(self.result.skills, path, "file_path")
        source = _find(self.result.sources, path, "path")
        if skill is not None:
            what = f"skill `{skill.name}`"
            if source is None and skill.disable_model_invocation:
                what += ", hidden from the model by `disable-model-invocation`"
            elif source is None:
                what += ", not listed: the prompt has no `read` tool"
        elif source is not None:
            what = {
                "agents": "context file",
                "system": "SYSTEM.md: replaces pi's default prompt",
                "append": "APPEND_SYSTEM.md: appended to the prompt",
                "skill": "skill",
            }[source.kind]
        else:
            what = "a file"
        return (
            f"Adds {tokens:,} tokens to the system prompt ({what})\n\n"
            f"The whole system prompt for `{self.cwd}` is {self.result.tokens:,} tokens"
            f" ({self.tokenizer} tokenizer)."
        )


@dataclass(eq=False)
class ClientPromptState:
    """What the service remembers about one client."""

    folders: list[str] = field(default_factory=list)
    active: bool = True
    builds: dict[str, Build] = field(default_factory=dict)
    published: dict[str, list[LspDiagnostic]] = field(default_factory=dict)
    settings_diagnostics: dict[str, list[LspDiagnostic]] = field(default_factory=dict)
    settings_generation: int = 0


def _merge(lists: Iterable[list[LspDiagnostic]]) -> list[LspDiagnostic]:
    merged: list[LspDiagnostic] = []
    seen: set[bytes] = set()
    for diagnostics in lists:
        for diagnostic in diagnostics:
            key = orjson.dumps(diagnostic, option=orjson.OPT_SORT_KEYS)
            if key not in seen:
                seen.add(key)
                merged.append(diagnostic)
    return merged


class PromptService:
    """``pi/getSystemPrompt``, ``pi/listSkills``, prompt watching, diagnostics and hover."""

    def __init__(self, host: SessionHost, *, debounce: float = 0.1) -> None:
        self.host = host
        self.debounce = debounce
        self.executor = ThreadPoolExecutor(max_workers=2, thread_name_prefix="pi-lsp-prompt")
        self.watcher: PromptWatcher | None = None
        self._watched: set[str] = set()
        self._states: dict[Client, ClientPromptState] = {}
        self._sync_requested = 0  # sync requests so far
        self._sync_watched = 0  # requests whose roots the watcher has taken in
        self._sync_dirty = False
        self._sync_runner: asyncio.Task[Any] | None = None
        self._watched_event = asyncio.Event()
        self.syncs_run = 0
        """Passes of the sync loop (each serves every request made before it started)."""
        self._root_locks: dict[str, asyncio.Lock] = {}
        self._tasks: set[asyncio.Task[Any]] = set()
        self._closed = False

    # ------------------------------------------------------------------ helpers

    async def _in_thread(self, fn: Any) -> Any:
        return await asyncio.get_running_loop().run_in_executor(self.executor, fn)

    def _spawn(self, coroutine: Coroutine[Any, Any, Any]) -> asyncio.Task[Any] | None:
        """Run in the background, outside any request's context (its notifications go out at once)."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no event loop (a service used synchronously): nothing to watch
            loop = None
        if self._closed or loop is None:
            coroutine.close()
            return None
        task = spawn(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._done)
        return task

    def _spawn_sync(self) -> None:
        """Ask for a sync. Requests coalesce: one loop runs at a time and each of its passes
        serves every request made before the pass began, so opening a thousand sessions costs a
        few passes, not a thousand."""
        self._sync_requested += 1
        self._sync_dirty = True
        if self._sync_runner is None or self._sync_runner.done():
            self._sync_runner = self._spawn(self._sync_loop())

    async def settled(self) -> None:
        """Wait until roots added so far are watched (requests answer after that, so a client
        that opened a session and asked for its prompt is sure later saves are noticed). The
        builds and diagnostics for new roots go on in the background."""
        target = self._sync_requested
        while self._sync_watched < target:
            runner = self._sync_runner
            if runner is None or runner.done():  # closed, or the loop failed (and logged why)
                return
            await self._watched_event.wait()

    def _done(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("system prompt work failed", exc_info=task.exception())

    def _state(self, client: Client) -> ClientPromptState:
        state = self._states.get(client)
        if state is None:
            state = self._states[client] = ClientPromptState()
        return state

    def roots(self, client: Client) -> list[str]:
        """The client's workspace folders, then the cwds of the sessions it holds."""
        state = self._state(client)
        if not state.active:
            return []
        roots = dict.fromkeys(state.folders)
        for session_id in sorted(client.open):
            session = self.host.registry.get(session_id)
            if session is not None:
                roots.setdefault(os.path.normpath(os.path.abspath(session.manager.cwd)))
        return list(roots)

    async def watch_status(self, client: Client) -> dict[str, Any]:
        """What is watched for ``client``: the backend, its roots and the prompt files of its builds
        (once the roots added before the call are watched)."""
        await self.settled()
        watcher = self.watcher
        watched = set(watcher.roots()) if watcher is not None else set()
        builds = self._state(client).builds.values()
        return {
            "backend": watcher.backend_name if watcher is not None else None,
            "roots": [root for root in self.roots(client) if root in watched],
            "files": sorted({path for build in builds for path in build.files}),
        }

    def _lock(self, root: str) -> asyncio.Lock:
        lock = self._root_locks.get(root)
        if lock is None:
            lock = self._root_locks[root] = asyncio.Lock()
        return lock

    # ------------------------------------------------------------------ requests

    def request_cwd(self, client: Client, session_id: str | None, cwd: str | None) -> str:
        """``cwd``, else the cwd of ``session`` (its header cwd), else of the active session, else
        the first workspace folder."""
        if session_id is not None and cwd is not None:
            raise InvalidParams("give either session or cwd, not both", {"field": "cwd"})
        if cwd is not None:
            return client.resolve_path(cwd)  # checked at the edge (server/params.py)
        if session_id is not None:
            return self.host.registry.resolve(client, session_id).manager.cwd
        active = self.host.registry.get(client.active) if client.active is not None else None
        return active.manager.cwd if active is not None else client.default_cwd

    async def get_system_prompt(
        self,
        client: Client,
        cwd: str,
        *,
        tools: Sequence[str] | None,
        custom_prompt: str | None,
        append_prompt: str | None,
    ) -> dict[str, Any]:
        """``pi/getSystemPrompt``: pi's prompt for ``cwd`` as it is on disk now."""
        name = client.settings.tokenizer
        await self.settled()

        def build() -> PromptResult:
            return workspace_prompt(
                cwd, tools=tools, tokenizer=name, custom_prompt=custom_prompt, append_prompt=append_prompt
            )

        result: PromptResult = await self._in_thread(build)
        return dict(result.to_json())

    async def system_prompt_text(self, client: Client, cwd: str, tools: list[str]) -> str:
        """The system prompt an agent run sends for ``cwd`` with these tools."""
        result = await self.get_system_prompt(
            client, cwd, tools=tools, custom_prompt=None, append_prompt=None
        )
        return str(result["text"])

    async def list_skills(self, client: Client, cwd: str) -> SkillListJson:
        """``pi/listSkills``: every skill pi would load for ``cwd``, with diagnostics."""
        result: SkillListJson = await self._in_thread(lambda: skill_list_json(workspace_skills(cwd)))
        return result

    # ------------------------------------------------------------------ client lifecycle

    def initialized(self, client: Client, folders: Sequence[str]) -> None:
        """The client's workspace folders at ``initialized``: watch them and publish diagnostics."""
        state = self._state(client)
        state.active = True
        state.folders = list(dict.fromkeys(os.path.normpath(f) for f in folders if f))
        self._spawn_sync()
        client.settings.on_change = lambda: self._settings_changed(client)
        self._settings_changed(client)

    def folders_changed(self, client: Client, added: Sequence[str], removed: Sequence[str]) -> None:
        """``workspace/didChangeWorkspaceFolders``."""
        state = self._state(client)
        gone = {os.path.normpath(f) for f in removed}
        folders = [f for f in state.folders if f not in gone]
        folders.extend(os.path.normpath(f) for f in added if f)
        state.folders = list(dict.fromkeys(folders))
        self._spawn_sync()

    def sessions_changed(self) -> None:
        """A session was opened or released: session cwds are roots too."""
        self._spawn_sync()

    def notify_paths(self, paths: Sequence[str]) -> None:
        """``workspace/didChangeWatchedFiles`` from the client: the same debounced path as the watcher."""
        watcher = self.watcher
        if watcher is not None and paths:
            watcher.notify_paths(paths)

    async def shutdown(self, client: Client) -> None:
        """``shutdown``: this client watches nothing any more (the watcher stops with the last)."""
        self._state(client).active = False
        self._spawn_sync()
        await self.settled()

    def disconnect(self, client: Client) -> None:
        """The connection is gone: forget the client (nothing is sent to it any more)."""
        self._states.pop(client, None)
        client.settings.on_change = None
        self._spawn_sync()

    async def aclose(self) -> None:
        """Server exit: stop watching and the build threads."""
        self._closed = True
        for task in list(self._tasks):
            task.cancel()
        watcher, self.watcher = self.watcher, None
        self._watched.clear()
        if watcher is not None:
            await self._in_thread(watcher.stop)
        self.executor.shutdown(wait=False, cancel_futures=True)

    # ------------------------------------------------------------------ roots, builds, diagnostics

    async def sync(self) -> None:
        """Make the watcher and every client's builds match the current roots (and wait for all
        of it; requests wait only for the watcher, :meth:`settled`)."""
        if self._closed:
            return
        self._spawn_sync()
        while (runner := self._sync_runner) is not None and not runner.done():
            await asyncio.wait([runner])

    def _clients(self) -> list[Client]:
        return [c for c in list(self.host.registry.clients) if c in self._states or c.open]

    async def _sync_loop(self) -> None:
        while self._sync_dirty and not self._closed:
            self._sync_dirty = False
            served = self._sync_requested
            self.syncs_run += 1
            wanted: dict[str, None] = {}
            for client in self._clients():
                wanted.update(dict.fromkeys(self.roots(client)))
            await self._watch(list(wanted))
            self._sync_watched = served
            event, self._watched_event = self._watched_event, asyncio.Event()
            event.set()
            await self._sync_builds()

    async def _sync_builds(self) -> None:
        """Builds (and published diagnostics) for roots that have none; stops early when a new
        sync is asked for, whose pass picks up where this one left off."""
        for client in self._clients():
            state = self._state(client)
            if not state.active:  # shut down: nothing more is sent to it
                state.builds.clear()
                state.published.clear()
                continue
            roots = self.roots(client)
            current = set(roots)
            for root in [r for r in state.builds if r not in current]:
                old = state.builds.pop(root)
                self._publish(client, state, old.files)
            for root in roots:
                if self._sync_dirty or self._closed:
                    return
                build = state.builds.get(root)
                if build is None or build.tokenizer != client.settings.tokenizer:
                    await self.ensure_build(client, root)

    async def _watch(self, roots: list[str]) -> None:
        wanted = set(roots)
        if wanted == self._watched and (self.watcher is not None or not wanted):
            return
        if not wanted:
            watcher, self.watcher = self.watcher, None
            self._watched = set()
            if watcher is not None:
                await self._in_thread(watcher.stop)
                log.info("prompt watcher stopped")
            return
        if self.watcher is None:
            self.watcher = PromptWatcher(
                self._on_change, debounce=self.debounce, loop=asyncio.get_running_loop()
            )
        watcher = self.watcher
        added = [r for r in roots if r not in self._watched]
        removed = [r for r in self._watched if r not in wanted]
        self._watched = wanted

        def apply() -> None:
            watcher.update_roots(added, removed)
            watcher.start()

        await self._in_thread(apply)
        if added:
            log.info("prompt watcher (%s) watching %s", watcher.backend_name, ", ".join(added))
        if removed:
            log.info("prompt watcher no longer watching %s", ", ".join(removed))

    async def _assemble(self, root: str, tokenizer_name: str) -> PromptResult:
        # The tokenizer too is made in the thread: the first one loads its ranks (about a second),
        # which on the event loop would stop every other request meanwhile.
        result: PromptResult = await self._in_thread(lambda: workspace_prompt(root, tokenizer=tokenizer_name))
        return result

    async def _complete(self, root: str, tokenizer_name: str, result: PromptResult) -> Build:
        """Per-file diagnostics and token contributions of an assembled prompt (reads the files)."""

        def index() -> Build:
            files = PromptFileIndex(result)
            return Build(root, tokenizer_name, result, files, files.all_diagnostics())

        built: Build = await self._in_thread(index)
        return built

    async def _build(self, root: str, tokenizer_name: str) -> Build:
        return await self._complete(root, tokenizer_name, await self._assemble(root, tokenizer_name))

    async def ensure_build(self, client: Client, root: str, *, fresh: bool = False) -> Build:
        """The client's build of ``root``; built (and its diagnostics published) when missing, made
        with another tokenizer, or ``fresh`` is asked for."""
        async with self._lock(root):
            state = self._state(client)
            build = state.builds.get(root)
            if fresh or build is None or build.tokenizer != client.settings.tokenizer:
                old = build
                build = await self._build(root, client.settings.tokenizer)
                state.builds[root] = build
                self._publish(client, state, build.files | (old.files if old is not None else set()))
            return build

    def _settings_changed(self, client: Client) -> None:
        """The client's settings changed (a layer was read or replaced): check its workspace file."""
        if client in self._states:
            self._spawn(self._publish_settings(client))

    async def _publish_settings(self, client: Client) -> None:
        """Warnings on the workspace's ``.pi/settings.json`` for the values it may not set; sent
        only when they differ from what was last sent (each is reported once)."""
        state = self._state(client)
        state.settings_generation += 1
        generation = state.settings_generation
        settings = client.settings
        path = settings.workspace_settings_path
        ignored = [(item.key, item.message) for item in settings.ignored_workspace_settings()]
        found: list[LspDiagnostic] = []
        if path is not None and ignored:  # a small file: not queued behind the prompt builds
            found = await asyncio.to_thread(settings_file_diagnostics, path, ignored)
        newer = generation != state.settings_generation
        if newer or self._states.get(client) is not state or not state.active:
            return  # a newer change publishes instead; or the client is gone or shut down
        current = {path: found} if path is not None and found else {}
        if current == state.settings_diagnostics:
            return
        previous, state.settings_diagnostics = state.settings_diagnostics, current
        self._publish(client, state, set(previous) | set(current))

    def _publish(self, client: Client, state: ClientPromptState, paths: Iterable[str]) -> None:
        """Send the merged diagnostics of each path (an empty list where nothing is wrong)."""
        for path in sorted(set(paths)):
            lists = [build.diagnostics.get(path, []) for build in state.builds.values()]
            merged = _merge([*lists, state.settings_diagnostics.get(path, [])])
            try:
                uri = path_to_uri(path)
            except ValueError:  # not an absolute path: nothing an editor could show
                continue
            send(client, PUBLISH, {"uri": uri, "diagnostics": merged})
            if merged:
                state.published[path] = merged
            else:
                state.published.pop(path, None)

    def _on_change(self, cwd: str, changed: list[str]) -> Coroutine[Any, Any, None]:
        """The watcher's callback (on the event loop): rebuild ``cwd`` in a task."""
        return self.rebuild(cwd, changed)

    async def rebuild(self, cwd: str, changed: Sequence[str] = ()) -> None:
        """One burst of changes under ``cwd``: rebuild, ``pi/systemPromptChanged``, then the
        diagnostics of every file the old or new build covers."""
        if self._closed:
            return
        clients = [c for c in list(self.host.registry.clients) if cwd in self.roots(c)]
        if not clients:
            return
        if any(os.path.basename(p) == SETTINGS_FILE for p in changed):
            for client in clients:
                await client.settings.reload_files_async()
        async with self._lock(cwd):
            names = list(dict.fromkeys(client.settings.tokenizer for client in clients))
            results = {name: await self._assemble(cwd, name) for name in names}
            # The notification first (a chat view shows the new prompt size at once), then the
            # per-file diagnostics, which read every covered file once more.
            for client in clients:
                sources = [dict(s.to_json()) for s in results[client.settings.tokenizer].sources]
                send(client, CHANGED, {"cwd": cwd, "sources": sources})
            builds = {name: await self._complete(cwd, name, result) for name, result in results.items()}
            for client in clients:
                build = builds[client.settings.tokenizer]
                state = self._state(client)
                old = state.builds.get(cwd)
                state.builds[cwd] = build
                self._publish(client, state, build.files | (old.files if old is not None else set()))

    # ------------------------------------------------------------------ hover

    async def hover(self, client: Client, path: str) -> str | None:
        """Markdown for a hover on ``path``: its token contribution, or None for other files.

        Only Markdown files can feed the prompt, so any other hover costs nothing. The builds kept
        for the client's roots answer first; a Markdown file they do not know may have been created
        within the watcher's debounce time, so the roots whose prompt it can be part of (all of
        them when nothing is watched) are then rebuilt once to be sure. With a thousand session
        roots, a hover on some README rebuilds none of them.
        """
        if not path.lower().endswith(".md"):
            return None
        path = os.path.normpath(os.path.abspath(path))
        await self.settled()
        roots = self.roots(client)
        state = self._state(client)
        for root in roots:
            build = state.builds.get(root)
            if build is not None and build.tokenizer == client.settings.tokenizer:
                text = build.hover_text(path)
                if text is not None:
                    return text
        watcher = self.watcher
        covering = watcher.roots_covering(path) if watcher is not None else set(roots)
        for root in roots:
            if root in covering:
                text = (await self.ensure_build(client, root, fresh=True)).hover_text(path)
                if text is not None:
                    return text
        return None

    def published(self, client: Client) -> dict[str, list[LspDiagnostic]]:
        """The non-empty diagnostics last published to ``client``, by path (for tests and tools)."""
        return dict(self._state(client).published)
