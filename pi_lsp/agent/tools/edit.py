"""``edit``: targeted exact-text replacements in one file, with pi's matching rules and diff."""

from __future__ import annotations

import asyncio
import json
import os
from typing import Any

from pi_lsp.agent.tools.base import Tool, ToolContext, ToolError, ToolResult, text_result, until_aborted
from pi_lsp.agent.tools.diff import numbered_diff, unified_diff
from pi_lsp.agent.tools.edit_match import (
    Replacement,
    apply_replacements,
    detect_line_ending,
    normalize_to_lf,
    restore_line_endings,
    strip_bom,
)
from pi_lsp.agent.tools.editor_guard import refuse_unsaved
from pi_lsp.agent.tools.files import decode_text, encode_text, replace_file
from pi_lsp.agent.tools.mutation_queue import file_mutation
from pi_lsp.agent.tools.paths import resolve_to_cwd
from pi_lsp.agent.tools.schemas import EDIT_PARAMETERS
from pi_lsp.jscompat import errno_code as error_code
from pi_lsp.prompt import pi_text

NO_EDITS = "Edit tool input is invalid. edits must contain at least one replacement."


class EditTool(Tool):
    name = "edit"
    label = "edit"
    description = (
        "Change one file by replacing exact text. Each edits[].oldText has to pick out one unique "
        "stretch of the original file that no other entry overlaps. When two changes hit the same "
        "block or neighbouring lines, combine them into one entry rather than sending overlapping "
        "ones, and leave out long unchanged passages instead of using them to join distant changes."
    )
    parameters = EDIT_PARAMETERS
    prompt_snippet = pi_text.BUILTIN_TOOL_SNIPPETS["edit"]
    prompt_guidelines = pi_text.BUILTIN_TOOL_GUIDELINES["edit"]
    mutates_files = True

    def prepare_arguments(self, args: Any) -> Any:
        """pi's repairs: ``edits`` sent as a JSON string, and the legacy top-level oldText/newText.

        Returns a new dict (pi changes the caller's object in place; ours never does).
        """
        if not isinstance(args, dict):
            return args
        prepared = dict(args)
        if isinstance(prepared.get("edits"), str):
            try:
                parsed = json.loads(prepared["edits"])
            except ValueError:
                parsed = None
            if isinstance(parsed, list):
                prepared["edits"] = parsed
        old_text, new_text = prepared.get("oldText"), prepared.get("newText")
        if not isinstance(old_text, str) or not isinstance(new_text, str):
            return prepared
        edits = list(prepared["edits"]) if isinstance(prepared.get("edits"), list) else []
        edits.append({"oldText": old_text, "newText": new_text})
        rest = {k: v for k, v in prepared.items() if k not in ("oldText", "newText")}
        return {**rest, "edits": edits}

    async def preview(self, args: dict[str, Any], ctx: ToolContext) -> dict[str, Any] | None:
        """The unified diff the edit would make, or ``error`` when it would fail (nothing written)."""
        absolute = resolve_to_cwd(args["path"], ctx.cwd)
        try:
            edits = _replacements(args)
            before, after = await asyncio.to_thread(_planned_change, absolute, args["path"], edits)
        except ToolError as exc:
            return {"path": absolute, "error": str(exc)}
        return {"path": absolute, "diff": unified_diff(absolute, before, after)}

    async def execute(self, tool_call_id: str, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        edits = _replacements(args)
        path: str = args["path"]
        absolute = resolve_to_cwd(path, ctx.cwd)
        async with file_mutation(absolute):
            refuse_unsaved(ctx, absolute, path)
            work = asyncio.to_thread(_edit_file, absolute, path, edits)
            diff, first_changed = await until_aborted(work, ctx.abort)
        details: dict[str, Any] = {"diff": diff}
        if first_changed is not None:
            details["firstChangedLine"] = first_changed
        return text_result(f"Successfully replaced {len(edits)} block(s) in {path}.", details)


def _replacements(args: dict[str, Any]) -> list[Replacement]:
    edits = args.get("edits")
    if not isinstance(edits, list) or not edits:
        raise ToolError(NO_EDITS)
    return [Replacement(e["oldText"], e["newText"]) for e in edits]


def _load(absolute: str, path: str) -> str:
    """The file's text, failing with pi's ``Could not edit file`` when it is not readable+writable."""
    try:
        os.stat(absolute)
        if not os.access(absolute, os.R_OK | os.W_OK):
            raise PermissionError(13, "Permission denied")
    except OSError as exc:
        raise ToolError(f"Could not edit file: {path}. Error code: {error_code(exc)}.") from exc
    if os.path.isdir(absolute):
        raise ToolError("EISDIR: illegal operation on a directory, read")
    with open(absolute, "rb") as handle:
        return decode_text(handle.read())


def _planned_change(absolute: str, path: str, edits: list[Replacement]) -> tuple[str, str]:
    """(file text now, file text after) without writing: BOM and line endings as they would be."""
    raw = _load(absolute, path)
    bom, text = strip_bom(raw)
    ending = detect_line_ending(text)
    _base, result = apply_replacements(normalize_to_lf(text), edits, path)
    return raw, bom + restore_line_endings(result, ending)


def _edit_file(absolute: str, path: str, edits: list[Replacement]) -> tuple[str, int | None]:
    raw = _load(absolute, path)
    bom, text = strip_bom(raw)
    ending = detect_line_ending(text)
    base, result = apply_replacements(normalize_to_lf(text), edits, path)
    replace_file(absolute, encode_text(bom + restore_line_endings(result, ending)))
    return numbered_diff(base, result)
