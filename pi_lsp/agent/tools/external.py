"""Finding and running the search programs pi uses (``rg``, and ``fd`` — ``fdfind`` on Debian).

pi looks in its own tool folder (``<agentDir>/bin``) first, then on PATH; it downloads them
when missing, which we never do (the tool then fails with pi's offline message).
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
from collections.abc import Callable

from pi_lsp.aborts import done_before_abort
from pi_lsp.agent.tools.base import ABORTED_TEXT, ToolError
from pi_lsp.agent_dir import agent_dir

_NAMES = {"rg": ("rg",), "fd": ("fd", "fdfind")}


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
    """Run ``argv``, feeding stdout lines to ``on_line`` until it returns False (then the program
    is stopped with SIGTERM). Returns (exit code or None when stopped by a signal, stderr,
    stopped early). An abort stops it and fails with pi's ``Operation aborted``."""
    process = await asyncio.create_subprocess_exec(
        *argv,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    stopped = False

    def stop() -> None:
        with contextlib.suppress(ProcessLookupError):
            process.terminate()

    async def read_out() -> None:
        nonlocal stopped
        assert process.stdout is not None
        while line := await process.stdout.readline():
            if stopped:
                continue
            text = line.decode("utf-8", "replace").rstrip("\n")
            text = text.removesuffix("\r")
            if not on_line(text):
                stopped = True
                stop()

    async def read_err() -> bytes:
        assert process.stderr is not None
        return await process.stderr.read()

    work = asyncio.gather(read_out(), read_err(), process.wait())
    if not await done_before_abort(work, abort):
        stop()
        with contextlib.suppress(Exception):
            await work
        raise ToolError(ABORTED_TEXT)
    _, err, code = work.result()
    if abort.is_set():
        raise ToolError(ABORTED_TEXT)
    return (code if code >= 0 else None), err.decode("utf-8", "replace"), stopped
