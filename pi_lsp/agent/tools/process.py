"""A tool's child process (bash's shell, rg, fd): its own process group, output handed over as it
arrives, and an end that waits for the child's exit, never for its pipes.

A process the command leaves behind (``setsid cmd &``, ``nohup cmd &``, ``(cmd &)``, a double
fork) inherits the output pipes and can hold them open for as long as it lives. Waiting for the
pipes to close would wedge the tool, and with it the run, the session and a shared server's idle
exit. So, as pi does (``waitForChildProcess``), the wait is for the child's exit; what is still
in the pipes is read for up to :data:`EXIT_STDIO_GRACE_S`, then the pipes are closed and the
processes still holding them are named (:class:`LeftRunning`) so that the user can decide.
An abort, a timeout or :meth:`ChildProcess.kill` SIGKILLs the whole group; a process that left
the group on purpose (``setsid``) escapes that and is reported like any other.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import stat
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from pi_lsp.aborts import done_before_abort

EXIT_STDIO_GRACE_S = 0.1  # pi's EXIT_STDIO_GRACE_MS
KILLED_EXIT_WAIT_S = 2.0  # a SIGKILLed child is reaped at once unless stuck in the kernel

OnData = Callable[[bytes], None]


def kill_process_group(pid: int) -> None:
    """SIGKILL the whole group led by ``pid`` (or just ``pid`` when that fails)."""
    try:
        os.killpg(pid, signal.SIGKILL)
    except OSError:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


@dataclass(frozen=True)
class LeftRunning:
    """Processes that still held the command's output pipes after it ended: ``(pid, name)`` each,
    empty when they could not be found (no ``/proc``)."""

    processes: tuple[tuple[int, str], ...]

    def note(self) -> str:
        """The line the tool result ends with, for the model and the user."""
        if not self.processes:
            return (
                "[A background process started by this command is still running and holds its "
                "output open; what it prints from now on is not shown.]"
            )
        named = ", ".join(f"pid {pid} ({name})" if name else f"pid {pid}" for pid, name in self.processes)
        pids = " ".join(str(pid) for pid, _ in self.processes)
        return (
            f"[Still running in the background, started by this command: {named}. It holds the "
            f"command's output open; what it prints from now on is not shown. `kill {pids}` stops it.]"
        )


def append_note(text: str, note: str) -> str:
    """``text``, a blank line, ``note`` (pi's layout for its status lines)."""
    return f"{text}\n\n{note}" if text else note


@dataclass
class ProcessEnd:
    exit_code: int | None  # None when the child died from a signal (as node's null)
    aborted: bool  # the abort event was set by the time it ended
    timed_out: bool
    left_running: LeftRunning | None  # None: every pipe was closed by the end


class _Protocol(asyncio.SubprocessProtocol):
    """Routes each pipe's data and tells the child's exit apart from the pipes' end."""

    def __init__(self, loop: asyncio.AbstractEventLoop, on_stdout: OnData, on_stderr: OnData) -> None:
        self.exited: asyncio.Future[None] = loop.create_future()
        self.pipes_closed: asyncio.Future[None] = loop.create_future()
        self._handlers = {1: on_stdout, 2: on_stderr}
        self._open = {1, 2}

    def pipe_data_received(self, fd: int, data: bytes) -> None:
        self._handlers[fd](data)

    def pipe_connection_lost(self, fd: int, exc: Exception | None) -> None:
        self._open.discard(fd)
        if not self._open and not self.pipes_closed.done():
            self.pipes_closed.set_result(None)

    def process_exited(self) -> None:
        if not self.exited.done():
            self.exited.set_result(None)


class ChildProcess:
    """A started child: :meth:`wait` for its end (always call it), :meth:`kill` to stop it early."""

    def __init__(self, transport: asyncio.SubprocessTransport, protocol: _Protocol) -> None:
        self._transport = transport
        self._protocol = protocol
        self.pid = transport.get_pid()
        self._pipe_inodes = _pipe_inodes(transport)
        self._killed = False

    @classmethod
    async def start(
        cls,
        argv: Sequence[str],
        *,
        on_stdout: OnData,
        on_stderr: OnData,
        cwd: str | None = None,
        env: Mapping[str, str] | None = None,
    ) -> ChildProcess:
        """Start ``argv`` in a new session (so its group can be killed whole), stdin closed."""
        loop = asyncio.get_running_loop()
        transport, protocol = await loop.subprocess_exec(
            lambda: _Protocol(loop, on_stdout, on_stderr),
            *argv,
            cwd=cwd,
            env=dict(env) if env is not None else None,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,
        )
        return cls(transport, protocol)

    def kill(self) -> None:
        """SIGKILL the child's whole process group."""
        self._killed = True
        kill_process_group(self.pid)

    async def wait(self, abort: asyncio.Event, timeout: float | None = None) -> ProcessEnd:
        """Wait for the child's exit, or kill its group on ``abort`` or after ``timeout`` seconds
        (None or <= 0: none); then give the pipes a short grace, close them and report who still
        held them. A cancelled wait kills the group too."""
        exited = self._protocol.exited
        timed_out = False
        try:
            limit = timeout if timeout is not None and timeout > 0 else None
            if not await done_before_abort(exited, abort, limit):
                timed_out = not abort.is_set()
                self.kill()
                await asyncio.wait({exited}, timeout=KILLED_EXIT_WAIT_S)
            await asyncio.wait({self._protocol.pipes_closed}, timeout=EXIT_STDIO_GRACE_S)
            if abort.is_set() and not self._killed:  # aborted during the grace: as pi, kill the group
                self.kill()
            left = None
            if not self._protocol.pipes_closed.done():
                left = LeftRunning(await asyncio.to_thread(pipe_holders, self._pipe_inodes))
        except asyncio.CancelledError:
            self.kill()
            raise
        finally:
            self._transport.close()
        code = self._transport.get_returncode()
        return ProcessEnd(
            exit_code=code if code is not None and code >= 0 else None,
            aborted=abort.is_set(),
            timed_out=timed_out,
            left_running=left,
        )


def _pipe_inodes(transport: asyncio.SubprocessTransport) -> frozenset[int]:
    inodes = set()
    for fd in (1, 2):
        pipe_transport = transport.get_pipe_transport(fd)
        pipe = pipe_transport.get_extra_info("pipe") if pipe_transport is not None else None
        if pipe is None:
            continue
        with contextlib.suppress(OSError, ValueError):
            info = os.fstat(pipe.fileno())
            if stat.S_ISFIFO(info.st_mode):
                inodes.add(info.st_ino)
    return frozenset(inodes)


def pipe_holders(inodes: frozenset[int], proc: str = "/proc") -> tuple[tuple[int, str], ...]:
    """``(pid, name)`` of every other process with one of these pipes open (the write ends the
    command's leftovers inherited; this process holds the read ends). Empty without ``/proc``."""
    targets = {f"pipe:[{inode}]" for inode in inodes}
    own = os.getpid()
    try:
        entries = os.listdir(proc)
    except OSError:
        return ()
    found: list[tuple[int, str]] = []
    for entry in entries:
        if not entry.isdigit() or int(entry) == own:
            continue
        fd_dir = f"{proc}/{entry}/fd"
        try:
            fds = os.listdir(fd_dir)
        except OSError:  # gone, or another user's
            continue
        for fd in fds:
            try:
                if os.readlink(f"{fd_dir}/{fd}") in targets:
                    found.append((int(entry), _process_name(proc, entry)))
                    break
            except OSError:
                continue
    return tuple(sorted(found))


def _process_name(proc: str, pid: str) -> str:
    try:
        with open(f"{proc}/{pid}/comm", encoding="utf-8", errors="replace") as handle:
            return handle.read().strip()
    except OSError:
        return ""
