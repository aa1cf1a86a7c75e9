"""``bash``: run a command in the session's cwd; output tail-truncated, the rest kept in a file.

A non-zero exit, a timeout or an abort fails the call with the output so far followed by pi's
status line (``Command exited with code N`` …). Partial output goes to ``ctx.on_update`` at most
every 100 ms, cumulative, the first update being empty, as pi sends it.
"""

from __future__ import annotations

import asyncio
import math
import time
from typing import Any

from pi_lsp.agent.tools.base import Tool, ToolContext, ToolError, ToolResult
from pi_lsp.agent.tools.output import OutputAccumulator
from pi_lsp.agent.tools.process import append_note
from pi_lsp.agent.tools.schemas import BASH_PARAMETERS
from pi_lsp.agent.tools.shell import ShellKilled, ShellSetupError, ShellTimedOut, run_shell
from pi_lsp.agent.tools.truncate import DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, format_size
from pi_lsp.jscompat import js_number
from pi_lsp.prompt import pi_text

UPDATE_THROTTLE_S = 0.1


class BashTool(Tool):
    name = "bash"
    label = "bash"
    description = (
        "Run a bash command in the current working directory and get back its stdout and stderr. "
        f"Only the last {DEFAULT_MAX_LINES} lines or {DEFAULT_MAX_BYTES // 1024}KB of output are "
        "returned, whichever limit comes first; when output is cut, all of it is saved to a "
        "temporary file. A timeout in seconds can be given."
    )
    parameters = BASH_PARAMETERS
    prompt_snippet = pi_text.BUILTIN_TOOL_SNIPPETS["bash"]

    def __init__(self, shell_path: str | None = None, command_prefix: str | None = None) -> None:
        self.shell_path = shell_path
        self.command_prefix = command_prefix

    async def preview(self, args: dict[str, Any], ctx: ToolContext) -> dict[str, Any] | None:
        return {"command": args["command"]}

    async def execute(self, tool_call_id: str, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        command: str = args["command"]
        timeout: float | None = args.get("timeout")
        if self.command_prefix:
            command = f"{self.command_prefix}\n{command}"
        output = OutputAccumulator("pi-bash", files=ctx.output_files)
        updates = _Updates(ctx, output)
        ctx.on_update(ToolResult([], None))

        def on_data(chunk: bytes) -> None:
            output.append(chunk)
            updates.schedule()

        try:
            try:
                exit_info = await run_shell(
                    command, ctx.cwd, on_data, abort=ctx.abort, timeout=timeout, shell_path=self.shell_path
                )
            except ShellSetupError as exc:
                raise ToolError(str(exc)) from exc
            except ShellKilled as killed:
                text, _ = _format(output, updates.finish(), "")
                if killed.left_running is not None:
                    text = append_note(text, killed.left_running.note())
                if isinstance(killed, ShellTimedOut):
                    status = f"Command timed out after {js_number(timeout or 0)} seconds"
                else:
                    status = "Command aborted"
                raise ToolError(append_note(text, status)) from None
            text, details = _format(output, updates.finish())
            if exit_info.left_running is not None:
                text = append_note(text, exit_info.left_running.note())
            if exit_info.exit_code not in (0, None):
                raise ToolError(append_note(text, f"Command exited with code {exit_info.exit_code}"))
            return ToolResult([{"type": "text", "text": text}], details)
        finally:
            updates.cancel()
            output.close()


Snapshot = tuple[str, dict[str, Any], str | None]


def _format(output: OutputAccumulator, snapshot: Snapshot, empty: str = "(no output)") -> tuple[str, Any]:
    content, truncation, full_path = snapshot
    text = content or empty
    if not truncation["truncated"]:
        return text, None
    where = f"Full output: {full_path}"
    if output.file_cap is not None:
        where = f"First {format_size(output.file_cap)} of the output: {full_path}"
    details = {"truncation": truncation, "fullOutputPath": full_path}
    start = truncation["totalLines"] - truncation["outputLines"] + 1
    end = truncation["totalLines"]
    if truncation["lastLinePartial"]:
        text += (
            f"\n\n[Showing last {format_size(truncation['outputBytes'])} of line {end} (line is "
            f"{format_size(output.last_line_bytes)}). {where}]"
        )
    elif truncation["truncatedBy"] == "lines":
        text += f"\n\n[Showing lines {start}-{end} of {end}. {where}]"
    else:
        text += (
            f"\n\n[Showing lines {start}-{end} of {end} ({format_size(DEFAULT_MAX_BYTES)} limit). {where}]"
        )
    return text, details


class _Updates:
    """pi's throttle: an update at most every 100 ms while output arrives, one more at the end."""

    def __init__(self, ctx: ToolContext, output: OutputAccumulator) -> None:
        self._ctx = ctx
        self._output = output
        self._loop = asyncio.get_running_loop()
        self._timer: asyncio.TimerHandle | None = None
        self._dirty = False
        self._last = -math.inf

    def schedule(self) -> None:
        self._dirty = True
        delay = UPDATE_THROTTLE_S - (time.monotonic() - self._last)
        if delay <= 0:
            self.cancel()
            self._emit()
        elif self._timer is None:
            self._timer = self._loop.call_later(delay, self._fire)

    def _fire(self) -> None:
        self._timer = None
        self._emit()

    def _emit(self) -> None:
        if not self._dirty:
            return
        self._dirty = False
        self._last = time.monotonic()
        content, truncation, full_path = self._output.snapshot(persist_if_truncated=True)
        details: dict[str, Any] = {}
        if truncation["truncated"]:
            details["truncation"] = truncation
        if full_path is not None:
            details["fullOutputPath"] = full_path
        self._ctx.on_update(ToolResult([{"type": "text", "text": content}], details))

    def finish(self) -> Snapshot:
        """Flush the last update, close the temp file and return the final snapshot."""
        self._output.finish()
        self.cancel()
        self._emit()
        snapshot = self._output.snapshot(persist_if_truncated=True)
        self._output.close()
        return snapshot

    def cancel(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
