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
from pi_lsp.agent.tools.files import (
    decode_text,
    encode_text,
    held_folder,
    read_for_diff,
    read_held,
    refuse_changed,
    replace_held,
)
from pi_lsp.agent.tools.mutation_queue import file_mutation
from pi_lsp.agent.tools.review import Narrowed, review_fields
from pi_lsp.agent.tools.schemas import EDIT_PARAMETERS
from pi_lsp.agent.tools.targets import (
    ChangePlan,
    FileTarget,
    approved_change,
    content_digest,
    file_target,
    preview_fields,
)
from pi_lsp.jscompat import errno_code as error_code
from pi_lsp.prompt import pi_text
from pi_lsp.regular_files import open_regular

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

    async def plan_change(self, args: dict[str, Any], ctx: ToolContext) -> ChangePlan:
        """The unified diff the edit would make (also as hunks, with the whole new file), or
        ``error`` when it would fail (nothing written)."""
        target = file_target(args["path"], ctx.cwd)
        fields = preview_fields(target)
        try:
            edits = _replacements(args)
            raw, before, after = await asyncio.to_thread(_planned_change, target, args["path"], edits)
        except ToolError as exc:
            now = await asyncio.to_thread(read_for_diff, target.real)
            return ChangePlan(target, now, {**fields, "error": str(exc)})
        diff = unified_diff(target.real, before, after)
        return ChangePlan(target, raw, {**fields, "diff": diff, **review_fields(before, after)}, after)

    async def preview(self, args: dict[str, Any], ctx: ToolContext) -> dict[str, Any] | None:
        return (await self.plan_change(args, ctx)).preview

    async def execute(self, tool_call_id: str, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        edits = _replacements(args)
        path: str = args["path"]
        target = file_target(path, ctx.cwd)
        approved, narrowed = approved_change(ctx, tool_call_id, target, path)
        async with file_mutation(target.real):
            await refuse_unsaved(ctx, target.real, path)
            work = asyncio.to_thread(_edit_file, target, path, edits, approved, narrowed)
            diff, first_changed = await until_aborted(work, ctx.abort)
        details: dict[str, Any] = {"diff": diff}
        if first_changed is not None:
            details["firstChangedLine"] = first_changed
        if narrowed is not None:
            return text_result(narrowed.result_text("edit", path), details)
        return text_result(f"Successfully replaced {len(edits)} block(s) in {path}.", details)


def _replacements(args: dict[str, Any]) -> list[Replacement]:
    edits = args.get("edits")
    if not isinstance(edits, list) or not edits:
        raise ToolError(NO_EDITS)
    return [Replacement(e["oldText"], e["newText"]) for e in edits]


def _check_editable(real: str, path: str) -> None:
    """pi's ``Could not edit file`` when the file is not readable+writable, EISDIR for a folder."""
    try:
        os.stat(real)
        if not os.access(real, os.R_OK | os.W_OK):
            raise PermissionError(13, "Permission denied")
    except OSError as exc:
        raise ToolError(f"Could not edit file: {path}. Error code: {error_code(exc)}.") from exc
    if os.path.isdir(real):
        raise ToolError("EISDIR: illegal operation on a directory, read")
    if not os.path.isfile(real):  # pi would read a FIFO or /dev/zero forever
        raise ToolError(f"Could not edit file: {path}. It is not a regular file (a FIFO, socket or device).")


def _change(raw: str, path: str, edits: list[Replacement]) -> tuple[str, str, str]:
    """(the LF text matched against, the LF result, the result as the file will hold it: BOM and
    line endings kept) of applying ``edits`` to the file text ``raw``."""
    bom, text = strip_bom(raw)
    base, result = apply_replacements(normalize_to_lf(text), edits, path)
    return base, result, bom + restore_line_endings(result, detect_line_ending(text))


def _planned_change(target: FileTarget, path: str, edits: list[Replacement]) -> tuple[bytes, str, str]:
    """(bytes now, file text now, file text after) without writing."""
    _check_editable(target.real, path)
    with open_regular(target.real) as handle:
        data = handle.read()
    raw = decode_text(data)
    return data, raw, _change(raw, path, edits)[2]


def _edit_file(
    target: FileTarget, path: str, edits: list[Replacement], approved: str | None, narrowed: Narrowed | None
) -> tuple[str, int | None]:
    """Read, check against what was approved, replace (with what the user let through of the
    change, when they narrowed it); the file is written only if it is still the one read when the
    new text is ready."""
    _check_editable(target.real, path)
    with held_folder(target, create=False) as folder_fd:
        data, read = read_held(folder_fd, target)
        refuse_changed(approved, content_digest(data), target, "edit")
        base, result, after = _change(decode_text(data), path, edits)
        if narrowed is not None:  # held to the previewed text above, so the narrowing fits it
            after = narrowed.content
            result = normalize_to_lf(strip_bom(after)[1])
        replace_held(folder_fd, target, encode_text(after), read=read, tool="edit")
    return numbered_diff(base, result)
