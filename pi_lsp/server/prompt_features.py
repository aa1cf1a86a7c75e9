"""pygls glue for the system prompt: the two pi/ handlers and the LSP features around them.

The logic lives in :class:`pi_lsp.service.prompt.PromptService` (``service.prompt``); this module
only validates params and connects LSP messages to it:

* ``pi/getSystemPrompt`` and ``pi/listSkills`` (listed in ``handlers.METHODS``);
* ``initialized`` starts server-side watching of the client's workspace folders and publishes the
  diagnostics of their prompt files; ``workspace/didChangeWorkspaceFolders`` adds/removes roots;
  ``shutdown`` stops this client's watching;
* ``textDocument/hover`` on a context file, SYSTEM.md/APPEND_SYSTEM.md or a skill file says how
  many tokens it adds to the system prompt (``null`` for any other file);
* ``workspace/didChangeWatchedFiles`` is handled in ``app.py`` and forwards its paths here.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from lsprotocol import types

from pi_lsp.paths import uri_to_path
from pi_lsp.service.errors import InvalidParams
from pi_lsp.service.prompt import resolve_cwd

if TYPE_CHECKING:
    from pygls.lsp.server import LanguageServer

    from pi_lsp.server.handlers import Context
    from pi_lsp.server.params import Params


def _opt_string_list(p: Params, name: str) -> list[str] | None:
    value = p.data.get(name)
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise InvalidParams(f"{name} must be an array of strings", {"field": name})
    return list(value)


async def get_system_prompt(ctx: Context, p: Params) -> Any:
    prompt = ctx.service.prompt
    cwd = prompt.request_cwd(ctx.client, p.session(), p.opt_string("cwd"))
    return await prompt.get_system_prompt(
        ctx.client,
        cwd,
        tools=_opt_string_list(p, "tools"),
        custom_prompt=p.opt_string("customPrompt"),
        append_prompt=p.opt_string("appendPrompt"),
    )


async def list_skills(ctx: Context, p: Params) -> Any:
    cwd = p.opt_string("cwd")  # default: the first workspace folder (not the active session's cwd)
    where = resolve_cwd(cwd, ctx.client) if cwd is not None else ctx.client.default_cwd
    return await ctx.service.prompt.list_skills(ctx.client, where)


def watched_files(ctx: Context, uris: Sequence[str]) -> None:
    """``workspace/didChangeWatchedFiles`` paths, fed to the prompt watcher's debouncer."""
    ctx.service.prompt.notify_paths([uri_to_path(uri) for uri in uris])


def _folders(server: LanguageServer, ctx: Context) -> list[str]:
    try:
        folders = [uri_to_path(folder.uri) for folder in server.workspace.folders.values()]
    except RuntimeError:  # no workspace: initialize never ran
        folders = []
    if not folders and ctx.client.workspace_root:
        folders = [ctx.client.workspace_root]
    return folders


def install(server: LanguageServer, ctx: Context) -> None:
    """Register the prompt's LSP features on one connection's server."""
    prompt = ctx.service.prompt

    @server.feature(types.INITIALIZED)
    def on_initialized(params: types.InitializedParams) -> None:
        prompt.initialized(ctx.client, _folders(server, ctx))

    @server.feature(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
    def on_folders(params: types.DidChangeWorkspaceFoldersParams) -> None:
        added = [uri_to_path(folder.uri) for folder in params.event.added or []]
        removed = [uri_to_path(folder.uri) for folder in params.event.removed or []]
        prompt.folders_changed(ctx.client, added, removed)

    @server.feature(types.SHUTDOWN)
    async def on_shutdown(*args: Any) -> None:
        await prompt.shutdown(ctx.client)

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    async def on_hover(params: types.HoverParams) -> types.Hover | None:
        uri = params.text_document.uri
        if not uri.startswith("file:"):
            return None
        text = await prompt.hover(ctx.client, uri_to_path(uri))
        if text is None:
            return None
        return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=text))
