"""Finding and running the search programs pi uses (``rg``, and ``fd`` — ``fdfind`` on Debian).

pi looks in its own tool folder (``<agentDir>/bin``) first, then on PATH; it downloads them
when missing, which we never do (the tool then fails with pi's offline message).
"""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import Callable

from pi_lsp.agent.tools.base import ABORTED_TEXT, ToolError
from pi_lsp.agent.tools.process import ChildProcess
from pi_lsp.agent_dir import agent_dir

_NAMES = {"rg": ("rg",), "fd": ("fd", "fdfind")}
STDERR_MAX_BYTES = 64 * 1024  # rg and fd say what went wrong in a line or two


def find_program(tool: str) -> str | None:
    local = agent_dir() / "bin" / tool
    if local.exists():
        return str(local)
    for name in _NAMES[tool]:
        if found := shutil.which(name):
            return found
    return None


async def run_lines(
    argv: list[str], on_line: Callable[[str], bool], abort: asyncio.Event
) -> tuple[int | None, str, bool]:
    """Run ``argv``, feeding stdout lines to ``on_line`` until it returns False (then the program's
    process group is killed). Returns (exit code or None when stopped by a signal, stderr,
    stopped early). An abort kills it and fails with pi's ``Operation aborted``.

    The end is the program's exit (:class:`~pi_lsp.agent.tools.process.ChildProcess`), not its
    pipes': a wrapper script in ``<agentDir>/bin`` whose rg is stuck on a FIFO cannot wedge it."""
    lines = LineSplitter()
    errors = bytearray()
    stopped = False
    child: ChildProcess | None = None

    def on_stdout(data: bytes) -> None:
        nonlocal stopped
        for line in lines.feed(data):
            if stopped:
                return
            text = line.decode("utf-8", "replace").removesuffix("\r")
            if not on_line(text):
                stopped = True
                if child is not None:
                    child.kill()

    def on_stderr(data: bytes) -> None:
        errors.extend(data[: max(STDERR_MAX_BYTES - len(errors), 0)])

    if abort.is_set():
        raise ToolError(ABORTED_TEXT)
    child = await ChildProcess.start(argv, on_stdout=on_stdout, on_stderr=on_stderr)
    end = await child.wait(abort)
    if end.aborted:
        raise ToolError(ABORTED_TEXT)
    if not stopped:
        for line in lines.rest():
            text = line.decode("utf-8", "replace").removesuffix("\r")
            if not on_line(text):
                stopped = True
                break
    return end.exit_code, errors.decode("utf-8", "replace"), stopped


class LineSplitter:
    """Bytes in, whole lines out (without the newline), however long a line is."""

    def __init__(self) -> None:
        self._partial = bytearray()

    def feed(self, data: bytes) -> list[bytes]:
        self._partial.extend(data)
        if b"\n" not in data:
            return []
        *complete, rest = bytes(self._partial).split(b"\n")
        self._partial = bytearray(rest)
        return complete

    def rest(self) -> list[bytes]:
        """The last line, when the output did not end with a newline."""
        return [bytes(self._partial)] if self._partial else []
