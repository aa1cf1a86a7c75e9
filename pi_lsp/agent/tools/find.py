"""``find``: file paths matching a glob, found by fd (respecting .gitignore) as pi runs it."""

from __future__ import annotations

import os
from typing import Any

from pi_lsp.agent.tools.base import ABORTED_TEXT, Tool, ToolContext, ToolError, ToolResult, text_result
from pi_lsp.agent.tools.external import find_program, run_lines
from pi_lsp.agent.tools.paths import resolve_to_cwd
from pi_lsp.agent.tools.schemas import FIND_PARAMETERS
from pi_lsp.agent.tools.search_output import finish_listing
from pi_lsp.agent.tools.truncate import DEFAULT_MAX_BYTES
from pi_lsp.jscompat import js_number
from pi_lsp.prompt import pi_text

DEFAULT_LIMIT = 1000
NO_REQUIRE_GIT = "--no-require-git"
OLD_FD_COMPLAINT = "Found argument '--no-require-git' which wasn't expected"


class FindTool(Tool):
    name = "find"
    label = "find"
    description = (
        "Find files whose paths match a glob pattern; paths come back relative to the folder searched, "
        f"and .gitignore is honoured. At most {DEFAULT_LIMIT} results or {DEFAULT_MAX_BYTES // 1024}KB "
        "are returned, whichever limit comes first."
    )
    parameters = FIND_PARAMETERS
    prompt_snippet = pi_text.BUILTIN_TOOL_SNIPPETS["find"]

    async def execute(self, tool_call_id: str, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        if ctx.abort.is_set():
            raise ToolError(ABORTED_TEXT)
        search_path = resolve_to_cwd(args.get("path") or ".", ctx.cwd)
        limit = args.get("limit")
        limit = DEFAULT_LIMIT if limit is None else limit
        fd = find_program("fd")
        if fd is None:
            raise ToolError("fd is not available and could not be downloaded")
        pattern: str = args["pattern"]
        argv = [
            fd,
            "--glob",
            "--color=never",
            "--hidden",
            NO_REQUIRE_GIT,
            "--max-results",
            js_number(limit),
        ]
        if "/" in pattern:
            argv.append("--full-path")
            if not pattern.startswith("/") and not pattern.startswith("**/") and pattern != "**":
                pattern = f"**/{pattern}"
        argv += ["--", pattern, search_path]
        lines: list[str] = []

        def on_line(line: str) -> bool:
            lines.append(line)
            return True

        code, stderr, _ = await run_lines(argv, on_line, ctx.abort)
        if code != 0 and not lines and OLD_FD_COMPLAINT in stderr:
            # fd before 8.7 (Debian 12's fdfind) lacks the flag and refuses to run, which makes pi's
            # find fail outright there. Without it .gitignore still counts inside git repositories.
            argv.remove(NO_REQUIRE_GIT)
            code, stderr, _ = await run_lines(argv, on_line, ctx.abort)
        output = "\n".join(lines)
        if code != 0 and not output:
            raise ToolError(
                stderr.strip() or f"fd exited with code {js_number(code) if code is not None else 'null'}"
            )
        if not output:
            return text_result("No files found matching pattern")
        found: list[str] = []
        for raw in lines:
            line = raw.removesuffix("\r").strip()
            if not line:
                continue
            slash = line.endswith("/") or line.endswith("\\")
            relative = (
                line[len(search_path) + 1 :]
                if line.startswith(search_path)
                else os.path.relpath(line, search_path)
            )
            if slash and not relative.endswith("/"):
                relative += "/"
            found.append(relative.replace(os.sep, "/"))
        reached = len(found) >= limit
        notice = None
        if reached:
            notice = (
                f"{js_number(limit)} results limit reached. Use limit={js_number(limit * 2)} for more, "
                "or refine pattern"
            )
        return finish_listing(found, notice, "resultLimitReached", limit if reached else None)
