"""The user's own shell command (pi's ``!cmd`` / ``!!cmd``, our ``pi/bash``).

Unlike the model's bash tool, the output is cleaned for display (ANSI escapes, control
characters and carriage returns removed), a failing exit code is not an error, and the result
is what pi records as a ``bashExecution`` message.
"""

from __future__ import annotations

import asyncio
import codecs
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pi_lsp.agent.tools.output_files import SERVER_OUTPUT_FILES, CappedFile, OutputFiles
from pi_lsp.agent.tools.process import LeftRunning, append_note
from pi_lsp.agent.tools.shell import ShellAborted, run_shell
from pi_lsp.agent.tools.truncate import DEFAULT_MAX_BYTES, truncate_tail
from pi_lsp.jscompat import js_len

_ST = "(?:\x1b\\\\|\x9c)"
_STRING_CONTROLS = "\x18\x1a\x1b\x80-\x9f"
# Terminal escape sequences, in the order they must be tried: Linux palette, OSC strings,
# DCS/SOS/PM/APC strings, CSI sequences, and the other ESC sequences.
ANSI_ESCAPES = re.compile(
    "|".join(
        (
            f"\x1b\\](?:P[0-9A-Fa-f]{{7}}|R)(?:\x07|{_ST})?",
            f"(?:\x1b\\]|\x9d)[^\x07{_STRING_CONTROLS}]*(?:\x07|{_ST})",
            f"(?:\x1b[PX^_k]|[\x90\x98\x9e\x9f])[^{_STRING_CONTROLS}]*{_ST}",
            "(?:\x1b\\[|\x9b)[\x30-\x3f]*[\x20-\x2f]*[\x40-\x7e]",
            "\x1b(?:[\x20-\x2f]+[\x30-\x7e]|[0-9A-PR-TZcf-oq-uy=><~|}])",
        )
    )
)
_UNPRINTABLE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufff9-\ufffb\r]")


def clean_output(text: str) -> str:
    """Escape sequences, control characters (tab and newline kept) and ``\\r`` removed."""
    if "\x1b" in text or "\x9b" in text:
        text = ANSI_ESCAPES.sub("", text)
    return _UNPRINTABLE.sub("", text)


@dataclass
class UserBashResult:
    output: str
    exit_code: int | None  # None when cancelled or killed by a signal
    cancelled: bool
    truncated: bool
    full_output_path: str | None

    def to_message(
        self, command: str, timestamp: int, exclude_from_context: bool | None = None
    ) -> dict[str, Any]:
        """pi's ``bashExecution`` message (keys in pi's order; unset ones left out as pi's JSON does)."""
        message: dict[str, Any] = {"role": "bashExecution", "command": command, "output": self.output}
        if self.exit_code is not None:
            message["exitCode"] = self.exit_code
        message["cancelled"] = self.cancelled
        message["truncated"] = self.truncated
        if self.full_output_path is not None:
            message["fullOutputPath"] = self.full_output_path
        message["timestamp"] = timestamp
        if exclude_from_context is not None:
            message["excludeFromContext"] = exclude_from_context
        return message


async def run_user_bash(
    command: str,
    cwd: str,
    abort: asyncio.Event,
    on_output: Callable[[str], None] | None = None,
    *,
    shell_path: str | None = None,
    command_prefix: str | None = None,
    output_files: OutputFiles = SERVER_OUTPUT_FILES,
) -> UserBashResult:
    """Run the user's command; ``abort`` cancels it (whole process group killed).

    A missing cwd or shell raises :class:`~pi_lsp.agent.tools.shell.ShellSetupError` (pi throws).
    A process the command leaves holding its output does not keep this waiting: the output ends
    with a note naming it (after the truncation, which is pi's).
    """
    if command_prefix:
        command = f"{command_prefix}\n{command}"
    decoder = codecs.getincrementaldecoder("utf-8")("replace")
    chunks: list[str] = []
    kept_units = 0
    raw_bytes = 0
    temp: CappedFile | None = None

    def ensure_file() -> CappedFile:
        nonlocal temp
        if temp is None:
            temp = output_files.create("pi-bash")
            temp.write("".join(chunks).encode("utf-8", "surrogatepass"))
        return temp

    def on_data(data: bytes) -> None:
        nonlocal kept_units, raw_bytes
        raw_bytes += len(data)
        text = clean_output(decoder.decode(data))
        if raw_bytes > DEFAULT_MAX_BYTES:
            ensure_file()
        if temp is not None:
            temp.write(text.encode("utf-8", "surrogatepass"))
        chunks.append(text)
        kept_units += js_len(text)
        while kept_units > DEFAULT_MAX_BYTES * 2 and len(chunks) > 1:
            kept_units -= js_len(chunks.pop(0))
        if on_output is not None:
            on_output(text)

    cancelled = False
    exit_code: int | None = None
    left_running: LeftRunning | None = None
    try:
        try:
            exit_info = await run_shell(command, cwd, on_data, abort=abort, shell_path=shell_path)
            exit_code = exit_info.exit_code
            left_running = exit_info.left_running
        except ShellAborted as aborted:
            cancelled = True
            left_running = aborted.left_running
        cancelled = cancelled or abort.is_set()
        full = "".join(chunks)
        truncation = truncate_tail(full)
        if truncation["truncated"]:
            ensure_file()
        output = truncation["content"] if truncation["truncated"] else full
        if left_running is not None:
            note = append_note(output, left_running.note())[len(output) :]
            output += note
            if on_output is not None:
                on_output(note)
        return UserBashResult(
            output=output,
            exit_code=None if cancelled else exit_code,
            cancelled=cancelled,
            truncated=truncation["truncated"],
            full_output_path=temp.path if temp is not None else None,
        )
    finally:
        if temp is not None:
            temp.close()
