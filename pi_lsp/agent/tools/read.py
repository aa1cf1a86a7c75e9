"""``read``: a file's text with pi's paging and truncation notices, or an image block."""

from __future__ import annotations

import asyncio
import os
from typing import Any

from pi_lsp.agent.tools.base import Tool, ToolContext, ToolError, ToolResult, until_aborted
from pi_lsp.agent.tools.images import SNIFF_BYTES, prepare_image, sniff_image_mime
from pi_lsp.agent.tools.paths import resolve_read_path
from pi_lsp.agent.tools.schemas import READ_PARAMETERS
from pi_lsp.agent.tools.truncate import (
    DEFAULT_MAX_BYTES,
    DEFAULT_MAX_LINES,
    format_size,
    truncate_head,
    utf8_len,
)
from pi_lsp.jscompat import js_number as num
from pi_lsp.jscompat import js_slice
from pi_lsp.jscompat import node_error_message as node_message
from pi_lsp.prompt import pi_text

UNSAVED_NOTE = (
    "[This file has unsaved changes in the user's editor: the text above is the editor's version, "
    "which differs from the file on disk.]"
)
IMAGE_OMITTED_NOTE = "[Image omitted: could not be resized below the inline image size limit.]"


class ReadTool(Tool):
    name = "read"
    label = "read"
    description = (
        "Show what a file contains. Works for text files and for images (jpg, png, gif, webp), which "
        f"come back as attachments. Text output stops after {DEFAULT_MAX_LINES} lines or "
        f"{DEFAULT_MAX_BYTES // 1024}KB, whichever comes first; page through big files with "
        "offset/limit, continuing from the given offset until you have read all you need."
    )
    parameters = READ_PARAMETERS
    prompt_snippet = pi_text.BUILTIN_TOOL_SNIPPETS["read"]
    prompt_guidelines = pi_text.BUILTIN_TOOL_GUIDELINES["read"]

    async def execute(self, tool_call_id: str, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        path: str = args["path"]
        absolute = resolve_read_path(path, ctx.cwd)
        editor_text = await ctx.documents.editor_text(absolute) if ctx.documents is not None else None
        work = asyncio.to_thread(_read, path, absolute, args.get("offset"), args.get("limit"), editor_text)
        return await until_aborted(work, ctx.abort)


def _read(
    path: str, absolute: str, offset: float | None, limit: float | None, editor_text: str | None
) -> ToolResult:
    if editor_text is not None:
        result = _text_result(path, editor_text, offset, limit)
        result.content[0]["text"] += f"\n\n{UNSAVED_NOTE}"
        return result
    try:
        os.stat(absolute)
    except OSError as exc:
        raise ToolError(node_message(exc, "access", absolute)) from exc
    if not os.access(absolute, os.R_OK):
        raise ToolError(f"EACCES: permission denied, access '{absolute}'")
    if os.path.isdir(absolute):
        raise ToolError("EISDIR: illegal operation on a directory, read")
    try:
        with open(absolute, "rb") as handle:
            raw = handle.read()
    except OSError as exc:
        raise ToolError(node_message(exc, "open", absolute)) from exc
    mime = sniff_image_mime(raw[:SNIFF_BYTES])
    if mime is not None:
        return _image_result(raw, mime)
    return _text_result(path, raw.decode("utf-8", "replace"), offset, limit)


def _image_result(raw: bytes, mime: str) -> ToolResult:
    prepared = prepare_image(raw, mime)
    if prepared is None:
        return ToolResult([{"type": "text", "text": f"Read image file [{mime}]\n{IMAGE_OMITTED_NOTE}"}])
    note = f"Read image file [{prepared.mime_type}]"
    if dimension_note := prepared.dimension_note():
        note += f"\n{dimension_note}"
    return ToolResult(
        [
            {"type": "text", "text": note},
            {"type": "image", "data": prepared.data, "mimeType": prepared.mime_type},
        ]
    )


def _text_result(path: str, text: str, offset: float | None, limit: float | None) -> ToolResult:
    lines = text.split("\n")
    total = len(lines)
    start = max(0, offset - 1) if offset else 0
    start_display = start + 1
    if start >= total:
        raise ToolError(f"Offset {num(offset or 0)} is beyond end of file ({total} lines total)")
    user_limited: float | None = None
    if limit is not None:
        end = min(start + limit, total)
        selected = "\n".join(js_slice(lines, start, end))
        user_limited = end - start
    else:
        selected = "\n".join(js_slice(lines, start))
    truncation = truncate_head(selected)
    details: dict[str, Any] | None = None
    if truncation["firstLineExceedsLimit"]:
        first = lines[int(start)]
        output = (
            f"[Line {num(start_display)} is {format_size(utf8_len(first))}, exceeds "
            f"{format_size(DEFAULT_MAX_BYTES)} limit. Use bash: sed -n '{num(start_display)}p' {path} | "
            f"head -c {DEFAULT_MAX_BYTES}]"
        )
        details = {"truncation": truncation}
    elif truncation["truncated"]:
        end_display = start_display + truncation["outputLines"] - 1
        output = truncation["content"]
        by_bytes = truncation["truncatedBy"] != "lines"
        limit_text = f" ({format_size(DEFAULT_MAX_BYTES)} limit)" if by_bytes else ""
        output += (
            f"\n\n[Showing lines {num(start_display)}-{num(end_display)} of {total}{limit_text}. "
            f"Use offset={num(end_display + 1)} to continue.]"
        )
        details = {"truncation": truncation}
    elif user_limited is not None and start + user_limited < total:
        remaining = total - (start + user_limited)
        output = (
            f"{truncation['content']}\n\n[{num(remaining)} more lines in file. "
            f"Use offset={num(start + user_limited + 1)} to continue.]"
        )
    else:
        output = truncation["content"]
    return ToolResult([{"type": "text", "text": output}], details)
