"""pygls glue for the system prompt's LSP features; the logic lives in ``service.prompt``.

* ``initialized`` starts server-side watching of the client's workspace folders and publishes the
  diagnostics of their prompt files; ``workspace/didChangeWorkspaceFolders`` adds/removes roots;
  ``shutdown`` stops this client's watching;
* ``textDocument/hover`` on a context file, SYSTEM.md/APPEND_SYSTEM.md or a skill file says how
  many tokens it adds to the system prompt (``null`` for any other file);
* ``workspace/didChangeWatchedFiles`` is handled in ``app.py`` and forwards its paths here.

The two ``pi/`` methods (``pi/getSystemPrompt``, ``pi/listSkills``) are in ``handlers.py`` with
every other ``pi/`` method.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from pi_lsp.paths import uri_to_path, usable_path
from pi_lsp.server.context import Context


def _paths(uris: Sequence[str]) -> list[str]:
    """The paths of ``uris``, without those no file can have (NUL, lone surrogate)."""
    return [path for path in map(uri_to_path, uris) if usable_path(path)]


def watched_files(ctx: Context, uris: Sequence[str]) -> None:
    """``workspace/didChangeWatchedFiles`` paths, fed to the prompt watcher's debouncer."""
    ctx.service.prompt.notify_paths(_paths(uris))


def _folders(server: LanguageServer, ctx: Context) -> list[str]:
    try:
        folders = _paths([folder.uri for folder in server.workspace.folders.values()])
    except RuntimeError:  # no workspace: initialize never ran
        folders = []
    if not folders and ctx.client.workspace_root:
        folders = [ctx.client.workspace_root]
    return folders


def install(server: LanguageServer, ctx: Context) -> None:
    """Register the prompt's LSP features on one connection's server.

    This builds the (lazy) prompt service, deliberately: ``initialized``, which every client sends
    next, starts watching its folders. What must not wait for it, the first session requests, has
    been answered before pygls took the connection (``early.py``)."""
    prompt = ctx.service.prompt

    @server.feature(types.INITIALIZED)
    def on_initialized(params: types.InitializedParams) -> None:
        prompt.initialized(ctx.client, _folders(server, ctx))

    @server.feature(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
    def on_folders(params: types.DidChangeWorkspaceFoldersParams) -> None:
        added = _paths([folder.uri for folder in params.event.added or []])
        removed = _paths([folder.uri for folder in params.event.removed or []])
        ctx.client.change_folders(added, removed)  # the approval policy's boundary
        prompt.folders_changed(ctx.client, added, removed)

    @server.feature(types.SHUTDOWN)
    async def on_shutdown(*args: Any) -> None:
        ctx.client.leaving = True  # the requests shutdown cancels were not cancelled by the user
        await prompt.shutdown(ctx.client)

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    async def on_hover(params: types.HoverParams) -> types.Hover | None:
        uri = params.text_document.uri
        paths = _paths([uri]) if uri.startswith("file:") else []
        if not paths:
            return None
        text = await prompt.hover(ctx.client, paths[0])
        if text is None:
            return None
        return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=text))
