"""Daemons for the tests: a command line no other process has (``sleep <random>.<random>``), the
pids that run it, and a fixture that kills exactly those (by pid) when the test ends."""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import signal


def sleep_marker() -> str:
    """A sleep length no other process uses: ``sleep <marker>`` lasts about a day and is ours."""
    return f"{90000 + secrets.randbelow(10000)}.{secrets.randbelow(10**9):09d}"


def marked_pids(marker: str) -> list[int]:
    """The processes whose arguments include ``marker`` (read from ``/proc/*/cmdline``)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as handle:
                args = handle.read().split(b"\0")
        except OSError:
            continue
        if marker.encode() in args:
            found.append(int(entry))
    return sorted(found)


async def wait_started(marker: str) -> None:
    """Wait until ``sleep <marker>`` runs (``setsid`` has made its session before it execs sleep);
    up to 30 s, which a server's start and first model call may take on a loaded machine."""
    for _ in range(3000):
        if any(_runs_sleep(pid) for pid in marked_pids(marker)):
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"sleep {marker} did not start")


def _runs_sleep(pid: int) -> bool:
    """Whether ``pid`` has exec'd ``sleep`` itself: before that it may still be ``setsid sleep …``,
    not yet in its own session, so a group kill sent then would still reach it."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            program = handle.read().split(b"\0")[0]
    except OSError:
        return False
    return os.path.basename(program) == b"sleep"


def kill_marked(marker: str) -> None:
    for pid in marked_pids(marker):
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


class Markers:
    """Markers handed out during one test; every process carrying one is killed afterwards."""

    def __init__(self) -> None:
        self.made: list[str] = []

    def new(self) -> str:
        marker = sleep_marker()
        self.made.append(marker)
        return marker

    def kill_all(self) -> None:
        for marker in self.made:
            kill_marked(marker)
