"""``write``: create or overwrite a file with the given content (parent folders created).

The file written is the call's real target (``targets.py``), the one its approval judged, with what
the user let through of the content when they narrowed it (``review.py``).
"""

from __future__ import annotations

import asyncio
from typing import Any

from pi_lsp.agent.tools.base import Tool, ToolContext, ToolResult, text_result, until_aborted
from pi_lsp.agent.tools.diff import unified_diff
from pi_lsp.agent.tools.editor_guard import refuse_unsaved
from pi_lsp.agent.tools.files import decode_text, encode_text, read_for_diff, write_file
from pi_lsp.agent.tools.mutation_queue import file_mutation
from pi_lsp.agent.tools.review import review_fields
from pi_lsp.agent.tools.schemas import WRITE_PARAMETERS
from pi_lsp.agent.tools.targets import ChangePlan, approved_change, file_target, preview_fields
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

    async def plan_change(self, args: dict[str, Any], ctx: ToolContext) -> ChangePlan:
        target = file_target(args["path"], ctx.cwd)
        before = await asyncio.to_thread(read_for_diff, target.real)
        text = decode_text(before) if before is not None else None
        content: str = args["content"]
        diff = unified_diff(target.real, text, content)
        preview = {**preview_fields(target), "diff": diff, **review_fields(text, content)}
        return ChangePlan(target, before, preview, content)

    async def preview(self, args: dict[str, Any], ctx: ToolContext) -> dict[str, Any] | None:
        return (await self.plan_change(args, ctx)).preview

    async def execute(self, tool_call_id: str, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        path: str = args["path"]
        content: str = args["content"]
        target = file_target(path, ctx.cwd)
        approved, narrowed = approved_change(ctx, tool_call_id, target, path)
        written = narrowed.content if narrowed is not None else content
        async with file_mutation(target.real):
            await refuse_unsaved(ctx, target.real, path)
            work = asyncio.to_thread(write_file, target, encode_text(written), approved=approved)
            await until_aborted(work, ctx.abort)
        if narrowed is not None:
            return text_result(narrowed.result_text("write", path))
        return text_result(f"Successfully wrote {js_len(content)} bytes to {path}")
