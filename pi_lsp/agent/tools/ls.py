"""``ls``: one directory's entries, sorted as pi sorts them, ``/`` after directories."""

from __future__ import annotations

import asyncio
import os
import stat
from typing import Any

from pi_lsp.agent.tools.base import Tool, ToolContext, ToolError, ToolResult, text_result, until_aborted
from pi_lsp.agent.tools.collation import sort_names
from pi_lsp.agent.tools.paths import resolve_to_cwd
from pi_lsp.agent.tools.schemas import LS_PARAMETERS
from pi_lsp.agent.tools.search_output import finish_listing
from pi_lsp.agent.tools.truncate import DEFAULT_MAX_BYTES
from pi_lsp.jscompat import js_number, node_error_message
from pi_lsp.prompt import pi_text

DEFAULT_LIMIT = 500


class LsTool(Tool):
    name = "ls"
    label = "ls"
    description = (
        "List what a directory contains, alphabetically, with a trailing '/' on subdirectories; "
        f"dotfiles are included. At most {DEFAULT_LIMIT} entries or {DEFAULT_MAX_BYTES // 1024}KB "
        "are returned, whichever limit comes first."
    )
    parameters = LS_PARAMETERS
    prompt_snippet = pi_text.BUILTIN_TOOL_SNIPPETS["ls"]

    async def execute(self, tool_call_id: str, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        directory = resolve_to_cwd(args.get("path") or ".", ctx.cwd)
        limit = args.get("limit")
        limit = DEFAULT_LIMIT if limit is None else limit
        return await until_aborted(asyncio.to_thread(_list, directory, limit), ctx.abort)


def _list(directory: str, limit: float) -> ToolResult:
    if not os.path.exists(directory):
        raise ToolError(f"Path not found: {directory}")
    if not os.path.isdir(directory):
        raise ToolError(f"Not a directory: {directory}")
    try:
        names = os.listdir(directory)
    except OSError as exc:
        raise ToolError(f"Cannot read directory: {node_error_message(exc, 'scandir', directory)}") from exc
    entries: list[str] = []
    limit_reached = False
    for name in sort_names(names):
        if len(entries) >= limit:
            limit_reached = True
            break
        try:
            mode = os.stat(os.path.join(directory, name)).st_mode
        except OSError:
            continue  # e.g. a dangling link: pi skips what it cannot stat
        entries.append(name + ("/" if stat.S_ISDIR(mode) else ""))
    if not entries:
        return text_result("(empty directory)")
    notice = None
    if limit_reached:
        notice = f"{js_number(limit)} entries limit reached. Use limit={js_number(limit * 2)} for more"
    return finish_listing(entries, notice, "entryLimitReached", limit if limit_reached else None)
