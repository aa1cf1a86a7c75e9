"""``write``: create or overwrite a file with the given content (parent folders created)."""

from __future__ import annotations

import asyncio
import os
from typing import Any

from pi_lsp.agent.tools.base import Tool, ToolContext, ToolResult, text_result, until_aborted
from pi_lsp.agent.tools.diff import unified_diff
from pi_lsp.agent.tools.editor_guard import refuse_unsaved
from pi_lsp.agent.tools.files import encode_text, ensure_parent_dirs, read_for_diff, replace_file
from pi_lsp.agent.tools.mutation_queue import file_mutation
from pi_lsp.agent.tools.paths import resolve_to_cwd
from pi_lsp.agent.tools.schemas import WRITE_PARAMETERS
from pi_lsp.jscompat import js_len
from pi_lsp.prompt import pi_text


class WriteTool(Tool):
    name = "write"
    label = "write"
    description = (
        "Put content into a file: a missing file is created, an existing one is replaced. Any missing "
        "parent folders are created too."
    )
    parameters = WRITE_PARAMETERS
    prompt_snippet = pi_text.BUILTIN_TOOL_SNIPPETS["write"]
    prompt_guidelines = pi_text.BUILTIN_TOOL_GUIDELINES["write"]
    mutates_files = True

    async def preview(self, args: dict[str, Any], ctx: ToolContext) -> dict[str, Any] | None:
        absolute = resolve_to_cwd(args["path"], ctx.cwd)
        before = await asyncio.to_thread(read_for_diff, absolute)
        return {"path": absolute, "diff": unified_diff(absolute, before, args["content"])}

    async def execute(self, tool_call_id: str, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        path: str = args["path"]
        content: str = args["content"]
        absolute = resolve_to_cwd(path, ctx.cwd)
        async with file_mutation(absolute):
            refuse_unsaved(ctx, absolute, path)

            def work() -> None:
                ensure_parent_dirs(os.path.dirname(absolute))
                replace_file(absolute, encode_text(content))

            await until_aborted(asyncio.to_thread(work), ctx.abort)
        return text_result(f"Successfully wrote {js_len(content)} bytes to {path}")
