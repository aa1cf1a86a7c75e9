"""``grep``: ripgrep over files (respecting .gitignore), formatted and limited as pi does."""

from __future__ import annotations

import json
import os
import stat
from typing import Any

from pi_lsp.agent.tools.base import ABORTED_TEXT, Tool, ToolContext, ToolError, ToolResult, text_result
from pi_lsp.agent.tools.external import find_program, run_lines
from pi_lsp.agent.tools.paths import resolve_to_cwd
from pi_lsp.agent.tools.schemas import GREP_PARAMETERS
from pi_lsp.agent.tools.search_output import finish_listing
from pi_lsp.agent.tools.truncate import DEFAULT_MAX_BYTES, GREP_MAX_LINE_LENGTH, truncate_line
from pi_lsp.jscompat import js_number, read_text
from pi_lsp.prompt import pi_text

DEFAULT_LIMIT = 100


class GrepTool(Tool):
    name = "grep"
    label = "grep"
    description = (
        "Look for a pattern inside files and get the matching lines with their file paths and line "
        f"numbers; .gitignore is honoured. At most {DEFAULT_LIMIT} matches or "
        f"{DEFAULT_MAX_BYTES // 1024}KB come back, whichever limit comes first, and lines longer than "
        f"{GREP_MAX_LINE_LENGTH} characters are shortened."
    )
    parameters = GREP_PARAMETERS
    prompt_snippet = pi_text.BUILTIN_TOOL_SNIPPETS["grep"]

    async def execute(self, tool_call_id: str, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        if ctx.abort.is_set():
            raise ToolError(ABORTED_TEXT)
        rg = find_program("rg")
        if rg is None:
            raise ToolError("ripgrep (rg) is not available and could not be downloaded")
        search_path = resolve_to_cwd(args.get("path") or ".", ctx.cwd)
        try:
            is_directory = stat.S_ISDIR(os.stat(search_path).st_mode)
        except OSError:
            raise ToolError(f"Path not found: {search_path}") from None
        context = args.get("context")
        context = context if context and context > 0 else 0
        limit = args.get("limit")
        limit = max(1, DEFAULT_LIMIT if limit is None else limit)
        argv = [rg, "--json", "--line-number", "--color=never", "--hidden"]
        if args.get("ignoreCase"):
            argv.append("--ignore-case")
        if args.get("literal"):
            argv.append("--fixed-strings")
        if args.get("glob"):
            argv += ["--glob", args["glob"]]
        argv += ["--", args["pattern"], search_path]

        matches: list[tuple[str, int, str | None]] = []
        count = 0

        def on_line(line: str) -> bool:
            nonlocal count
            if not line.strip() or count >= limit:
                return True
            try:
                event = json.loads(line)
            except ValueError:
                return True
            if not isinstance(event, dict) or event.get("type") != "match":
                return True
            count += 1
            data = event.get("data") or {}
            file_path = (data.get("path") or {}).get("text")
            number = data.get("line_number")
            text = (data.get("lines") or {}).get("text")
            if file_path and isinstance(number, int):
                matches.append((file_path, number, text))
            return count < limit

        code, stderr, stopped = await run_lines(argv, on_line, ctx.abort)
        if not stopped and code not in (0, 1):
            raise ToolError(
                stderr.strip()
                or f"ripgrep exited with code {js_number(code) if code is not None else 'null'}"
            )
        if count == 0:
            return text_result("No matches found")
        return _format(matches, search_path, is_directory, context, limit, stopped)


def _format(
    matches: list[tuple[str, int, str | None]],
    search_path: str,
    is_directory: bool,
    context: float,
    limit: float,
    limit_reached: bool,
) -> ToolResult:
    def display_path(file_path: str) -> str:
        if is_directory:
            relative = os.path.relpath(file_path, search_path)
            if relative and relative != "." and not relative.startswith(".."):
                return relative.replace("\\", "/")
        return os.path.basename(file_path)

    cache: dict[str, list[str]] = {}

    def file_lines(file_path: str) -> list[str]:
        if file_path not in cache:
            try:
                content = read_text(file_path)
                cache[file_path] = content.replace("\r\n", "\n").replace("\r", "\n").split("\n")
            except OSError:
                cache[file_path] = []
        return cache[file_path]

    lines_cut = False
    out: list[str] = []
    for file_path, number, text in matches:
        shown = display_path(file_path)
        if context == 0 and text is not None:
            clean = text.replace("\r\n", "\n").replace("\r", "").removesuffix("\n")
            cut, was_cut = truncate_line(clean)
            lines_cut = lines_cut or was_cut
            out.append(f"{shown}:{number}: {cut}")
            continue
        lines = file_lines(file_path)
        if not lines:
            out.append(f"{shown}:{number}: (unable to read file)")
            continue
        first = max(1, number - context) if context > 0 else number
        last = min(len(lines), number + context) if context > 0 else number
        current = first
        while current <= last:
            whole = float(current).is_integer() and 0 < current <= len(lines)
            line = lines[int(current) - 1] if whole else ""  # lines[1.5] is undefined in JS
            cut, was_cut = truncate_line(line.replace("\r", ""))
            lines_cut = lines_cut or was_cut
            separator = ":" if current == number else "-"
            out.append(f"{shown}{separator}{js_number(current)}{separator} {cut}")
            current += 1
    notice = None
    if limit_reached:
        notice = (
            f"{js_number(limit)} matches limit reached. Use limit={js_number(limit * 2)} for more, "
            "or refine pattern"
        )
    extra = []
    if lines_cut:
        extra.append(
            (
                f"Some lines truncated to {GREP_MAX_LINE_LENGTH} chars. Use read tool to see full lines",
                "linesTruncated",
                True,
            )
        )
    return finish_listing(out, notice, "matchLimitReached", limit if limit_reached else None, extra)
