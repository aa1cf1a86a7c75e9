"""Neovim on a real pseudo-terminal, for the tests that use the *stock* ``vim.ui.select``: it calls
``inputlist()``, which blocks reading the terminal, so a test must read what Neovim drew and type
the answer as a user would. A Lua script (loading ``harness.lua``) drives the plugin; this side
waits for each question on the screen, keeps the screen up to it, types the answer, and finally
waits for the script's ``out`` file."""

from __future__ import annotations

import asyncio
import fcntl
import json
import os
import pty
import re
import select
import signal
import struct
import termios
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.agent.chat_support import MODEL, Workspace
from tests.llm.fake_anthropic import FakeAnthropic, Reply
from tests.nvim.headless import REPO, server_cmd
from tests.pi.pi_rpc import write_agent_dir

QUESTION = b"Type number and <Enter>"  # inputlist()'s own line: a question is on the screen
ANSI = re.compile(
    rb"\x1b(\[[0-9;?<>=]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)|[()][0-9A-Za-z]|[=>78DEHMNOPZc])"
)


@dataclass
class Answer:
    """Type ``keys`` once ``wanted`` (default: inputlist()'s question) is on the screen. Neovim may
    draw an earlier question again, so a test with several questions waits for each one's own text."""

    keys: bytes
    wanted: bytes = QUESTION


@dataclass
class Screens:
    """What Neovim drew up to each answer (ANSI codes removed), how many answers were typed, and
    what it drew after the last one until the script's result was written (``final``)."""

    shown: list[str] = field(default_factory=list)
    answered: int = 0
    final: str = ""

    def tail(self) -> str:
        return self.shown[-1][-3000:] if self.shown else ""


def _read_until(fd: int, wanted: bytes, deadline: float, screen: bytearray) -> bool:
    """Append what Neovim writes to ``screen`` until ``wanted`` appears in it, terminal codes
    removed (False at the deadline)."""
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.2)
        if not ready:
            continue
        try:
            chunk = os.read(fd, 65536)
        except OSError:  # the child closed the terminal
            return wanted in ANSI.sub(b"", bytes(screen))
        if not chunk:
            return wanted in ANSI.sub(b"", bytes(screen))
        screen.extend(chunk)
        if wanted in ANSI.sub(b"", bytes(screen)):
            return True
    return False


def _drive(nvim: str, script: Path, env: dict[str, str], cwd: Path, out: Path, answers: list[Answer],
           timeout: float) -> Screens:  # fmt: skip
    argv = [
        nvim, "--clean", "-u", "NONE", "-i", "NONE", "-n",
        "--cmd", f"set rtp+={REPO / 'nvim-client'}", "-c", f"luafile {script}",
    ]  # fmt: skip
    pid, fd = pty.fork()
    if pid == 0:  # the child: Neovim on the terminal
        os.chdir(cwd)
        os.execve(nvim, argv, env)
    screens = Screens()
    try:
        fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
        os.kill(pid, signal.SIGWINCH)
        deadline = time.monotonic() + timeout
        for answer in answers:
            screen = bytearray()
            asked = _read_until(fd, answer.wanted, deadline, screen)
            screens.shown.append(ANSI.sub(b"", bytes(screen)).decode(errors="replace"))
            if not asked:
                break
            os.write(fd, answer.keys)
            screens.answered += 1
        rest = bytearray()
        while not out.exists() and time.monotonic() < deadline:
            _read_until(fd, b"\x00never", min(deadline, time.monotonic() + 0.5), rest)
        screens.final = ANSI.sub(b"", bytes(rest)).decode(errors="replace")
        return screens
    finally:
        for _ in range(50):
            if os.waitpid(pid, os.WNOHANG)[0]:
                break
            time.sleep(0.1)
        else:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        os.close(fd)


async def run_tty(
    nvim: str,
    script: Path,
    tmp_path: Path,
    cwd: Path,
    env: dict[str, str],
    settings: dict[str, Any],
    answers: list[Answer],
    timeout: float,
) -> tuple[Screens, dict[str, Any]]:
    """Run ``script`` with ``{cmd, settings, out}`` as its config in Neovim on a terminal, typing
    ``answers`` in turn; returns the screens and what the script wrote to ``out``."""
    out = tmp_path / "out.json"
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"cmd": server_cmd(), "settings": settings, "out": str(out)}))
    full_env = {
        **env,
        "TERM": "xterm-256color",
        "PI_NVIM_TEST_CONFIG": str(config),
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "NVIM_LOG_FILE": str(tmp_path / "nvim.log"),
    }
    screens = await asyncio.to_thread(_drive, nvim, script, full_env, cwd, out, answers, timeout)
    assert screens.answered == len(answers), (screens.answered, screens.tail())
    assert out.exists(), f"the script wrote no result; screen:\n{screens.tail()}"
    seen: dict[str, Any] = json.loads(out.read_text())
    assert "error" not in seen, (seen.get("error"), seen.get("messages"), screens.tail())
    return screens, seen


async def run_tty_with_model(
    nvim: str,
    script: Path,
    tmp_path: Path,
    ws: Workspace,
    replies: list[Reply],
    answers: list[Answer],
    timeout: float,
    **settings: Any,
) -> tuple[Screens, dict[str, Any], FakeAnthropic]:
    """:func:`run_tty` against the loopback fake model answering ``replies``, in ``ws`` (which the
    caller cleans up); ``settings`` go over the plugin's base (the model, the workspace's session
    folder). Returns the fake too, for the requests it received."""
    async with FakeAnthropic(replies) as fake:
        write_agent_dir(ws.agent_dir, fake.url, ws.settings)
        config = {"model": MODEL, "sessionDir": str(ws.sessions), **settings}
        screens, seen = await run_tty(
            nvim, script, tmp_path, ws.cwd, ws.server_env(fake.url), config, answers, timeout
        )
    return screens, seen, fake
