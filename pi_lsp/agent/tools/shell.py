"""Running a shell command the way pi does: its own process group, both pipes read as data
arrives, killed as a whole group with SIGKILL on abort or timeout.

pi spawns ``/bin/bash -c <command>`` detached (a new process group), waits for the exit plus the
end of both pipes, and gives daemonised descendants that keep a pipe open 100 ms before it stops
listening. The same here; ``killpg`` reaches every process the command started that did not
leave the group on purpose.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
from collections.abc import Callable
from dataclasses import dataclass

from pi_lsp.agent_dir import agent_dir

EXIT_STDIO_GRACE_S = 0.1
_READ_SIZE = 65536


class ShellAborted(Exception):
    """The command was killed because the run was aborted."""


class ShellTimedOut(Exception):
    """The command was killed because its timeout passed."""


class ShellSetupError(Exception):
    """The command could not be started (missing cwd or shell); the text is pi's."""


def shell_command(shell_path: str | None = None) -> list[str]:
    """``[shell, "-c"]``: the configured shell, else /bin/bash, bash on PATH, or sh."""
    if shell_path:
        if os.path.exists(shell_path):
            return [shell_path, "-c"]
        raise ShellSetupError(f"Custom shell path not found: {shell_path}")
    if os.path.exists("/bin/bash"):
        return ["/bin/bash", "-c"]
    return [shutil.which("bash") or "sh", "-c"]


def shell_env() -> dict[str, str]:
    """The server's environment with pi's tool folder (``<agentDir>/bin``) first on PATH."""
    env = dict(os.environ)
    bin_dir = str(agent_dir() / "bin")
    current = env.get("PATH", "")
    if bin_dir not in [entry for entry in current.split(os.pathsep) if entry]:
        env["PATH"] = os.pathsep.join(part for part in (bin_dir, current) if part)
    return env


def kill_process_group(pid: int) -> None:
    """SIGKILL the whole group led by ``pid`` (or just ``pid`` when that fails)."""
    try:
        os.killpg(pid, signal.SIGKILL)
    except OSError:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


@dataclass
class ShellExit:
    exit_code: int | None  # None when the shell itself died from a signal (as node's null)


async def run_shell(
    command: str,
    cwd: str,
    on_data: Callable[[bytes], None],
    *,
    abort: asyncio.Event,
    timeout: float | None = None,
    shell_path: str | None = None,
    env: dict[str, str] | None = None,
) -> ShellExit:
    """Run ``command``; raise ShellAborted / ShellTimedOut after killing the group."""
    argv = shell_command(shell_path)
    if not os.path.exists(cwd):
        raise ShellSetupError(f"Working directory does not exist: {cwd}\nCannot execute bash commands.")
    if abort.is_set():  # pi spawns and kills at once; not starting at all is the same, minus the race
        raise ShellAborted
    process = await asyncio.create_subprocess_exec(
        *argv,
        command,
        cwd=cwd,
        env=env if env is not None else shell_env(),
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        start_new_session=True,
    )
    timed_out = False
    killed = False

    def kill() -> None:
        nonlocal killed
        killed = True
        kill_process_group(process.pid)

    async def pump(stream: asyncio.StreamReader | None) -> None:
        if stream is None:
            return
        while chunk := await stream.read(_READ_SIZE):
            on_data(chunk)

    readers = [asyncio.ensure_future(pump(process.stdout)), asyncio.ensure_future(pump(process.stderr))]
    loop = asyncio.get_running_loop()
    timer = None
    if timeout is not None and timeout > 0:

        def on_timeout() -> None:
            nonlocal timed_out
            timed_out = True
            kill()

        timer = loop.call_later(timeout, on_timeout)
    abort_watch = asyncio.ensure_future(abort.wait())
    abort_watch.add_done_callback(lambda _: None if abort_watch.cancelled() else kill())
    try:
        await process.wait()
        _, pending = await asyncio.wait(readers, timeout=EXIT_STDIO_GRACE_S)
        for reader in pending:
            reader.cancel()
    except asyncio.CancelledError:
        kill()
        for reader in readers:
            reader.cancel()
        raise
    finally:
        if timer is not None:
            timer.cancel()
        abort_watch.cancel()
        for stream in (process.stdout, process.stderr):
            transport = getattr(stream, "_transport", None)
            if transport is not None:
                transport.close()
    if abort.is_set():
        raise ShellAborted
    if timed_out:
        raise ShellTimedOut
    code = process.returncode
    return ShellExit(code if code is not None and code >= 0 else None)
