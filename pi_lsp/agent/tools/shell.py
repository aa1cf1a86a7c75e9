"""Running a shell command the way pi does: ``<shell> -c <command>`` in its own process group,
both pipes read as data arrives, the whole group SIGKILLed on abort or timeout.

The process handling (waiting for the shell's exit rather than its pipes, the grace for what is
left in them, the processes left holding them) is :mod:`pi_lsp.agent.tools.process`, shared with
rg and fd.
"""

from __future__ import annotations

import asyncio
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass

from pi_lsp.agent.tools.process import ChildProcess, LeftRunning
from pi_lsp.agent_dir import agent_dir


class ShellKilled(Exception):
    """The command was killed; ``left_running``: what still held its output (a setsid daemon
    escapes the group kill)."""

    def __init__(self, left_running: LeftRunning | None = None) -> None:
        super().__init__()
        self.left_running = left_running


class ShellAborted(ShellKilled):
    """The command was killed because the run was aborted."""


class ShellTimedOut(ShellKilled):
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


GIT_REPOSITORY_VARIABLES = frozenset(
    {
        "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_COMMON_DIR", "GIT_CONFIG", "GIT_CONFIG_COUNT",
        "GIT_CONFIG_PARAMETERS", "GIT_DIR", "GIT_GRAFT_FILE", "GIT_IMPLICIT_WORK_TREE",
        "GIT_INDEX_FILE", "GIT_INTERNAL_SUPER_PREFIX", "GIT_NO_REPLACE_OBJECTS",
        "GIT_OBJECT_DIRECTORY", "GIT_PREFIX", "GIT_REPLACE_REF_BASE", "GIT_SHALLOW_FILE",
        "GIT_WORK_TREE",
    }
)  # fmt: skip
"""git's repository-local variables (``git rev-parse --local-env-vars``): a server started where
they are set (from a git hook, say) must not make a command's ``git`` work on another repository
than the one of the session's folder. The user's other ``GIT_*`` preferences pass."""


def shell_env() -> dict[str, str]:
    """The server's environment, without git's repository-local variables, with pi's tool folder
    (``<agentDir>/bin``) first on PATH."""
    env = {key: value for key, value in os.environ.items() if key not in GIT_REPOSITORY_VARIABLES}
    bin_dir = str(agent_dir() / "bin")
    current = env.get("PATH", "")
    if bin_dir not in [entry for entry in current.split(os.pathsep) if entry]:
        env["PATH"] = os.pathsep.join(part for part in (bin_dir, current) if part)
    return env


@dataclass
class ShellExit:
    exit_code: int | None  # None when the shell itself died from a signal (as node's null)
    left_running: LeftRunning | None = None  # what still held the output when the shell exited


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
    """Run ``command`` (stdout and stderr both to ``on_data``, as they arrive); raise
    ShellAborted / ShellTimedOut after killing the group."""
    argv = shell_command(shell_path)
    if not os.path.exists(cwd):
        raise ShellSetupError(f"Working directory does not exist: {cwd}\nCannot execute bash commands.")
    if abort.is_set():  # pi spawns and kills at once; not starting at all is the same, minus the race
        raise ShellAborted
    child = await ChildProcess.start(
        [*argv, command],
        on_stdout=on_data,
        on_stderr=on_data,
        cwd=cwd,
        env=env if env is not None else shell_env(),
    )
    end = await child.wait(abort, timeout)
    if end.aborted:
        raise ShellAborted(end.left_running)
    if end.timed_out:
        raise ShellTimedOut(end.left_running)
    return ShellExit(end.exit_code, end.left_running)
