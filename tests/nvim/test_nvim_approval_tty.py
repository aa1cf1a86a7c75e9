"""An edit's approval with the *stock* ``vim.ui.select`` in a Neovim drawn on a real pseudo-terminal:
the stock picker calls ``inputlist()``, which blocks before Neovim redraws, so the diff split must be
drawn before the question is asked. The test reads the bytes Neovim writes to the terminal and checks
that the diff's text is on the screen when the question is, then answers it by typing ``1<CR>``."""

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
from pathlib import Path
from typing import Any

from tests.agent.chat_support import MODEL, Workspace
from tests.llm.fake_anthropic import FakeAnthropic, Reply, Text, ToolUse, assistant_stream
from tests.nvim.test_nvim_client import REPO, _server_cmd
from tests.pi.pi_rpc import write_agent_dir

SCRIPT = Path(__file__).with_name("approval_tty.lua")
QUESTION = b"Type number and <Enter>"  # inputlist()'s own line: the question is on the screen
NEW_TEXT = "agent-wrote-this-line"
ANSI = re.compile(
    rb"\x1b(\[[0-9;?<>=]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)|[()][0-9A-Za-z]|[=>78DEHMNOPZc])"
)


def _read_until(fd: int, wanted: bytes, deadline: float, screen: bytearray) -> bool:
    """Append what Neovim writes to ``screen`` until ``wanted`` appears (False at the deadline)."""
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.2)
        if not ready:
            continue
        try:
            chunk = os.read(fd, 65536)
        except OSError:  # the child closed the terminal
            return wanted in screen
        if not chunk:
            return wanted in screen
        screen.extend(chunk)
        if wanted in screen:
            return True
    return False


def _drive(nvim: str, env: dict[str, str], cwd: Path, out: Path, timeout: float) -> tuple[bytes, int]:
    """Run Neovim on a pseudo-terminal; returns the screen bytes up to the question and its exit code."""
    argv = [
        nvim, "--clean", "-u", "NONE", "-i", "NONE", "-n",
        "--cmd", f"set rtp+={REPO / 'nvim-client'}", "-c", f"luafile {SCRIPT}",
    ]  # fmt: skip
    pid, fd = pty.fork()
    if pid == 0:  # the child: Neovim on the terminal
        os.chdir(cwd)
        os.execve(nvim, argv, env)
    try:
        fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
        os.kill(pid, signal.SIGWINCH)
        deadline = time.monotonic() + timeout
        screen = bytearray()
        asked = _read_until(fd, QUESTION, deadline, screen)
        shown = bytes(screen)
        if asked:
            os.write(fd, b"1\r")  # "Allow"
            while not out.exists() and time.monotonic() < deadline:
                _read_until(fd, b"\x00never", min(deadline, time.monotonic() + 0.5), bytearray())
        return shown, int(asked)
    finally:
        for _ in range(50):
            if os.waitpid(pid, os.WNOHANG)[0]:
                break
            time.sleep(0.1)
        else:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        os.close(fd)


async def test_stock_select_shows_the_diff_before_asking(tmp_path: Path, nvim: str) -> None:
    edit = ToolUse(
        "toolu_E", "edit", {"path": "hello.txt", "edits": [{"oldText": "line one", "newText": NEW_TEXT}]}
    )
    replies = [
        Reply(events=assistant_stream(edit, message_id="m_e")),
        Reply(events=assistant_stream(Text("Edited."), message_id="m_d")),
    ]
    ws = Workspace({"hello.txt": "line one\n"})
    try:
        async with FakeAnthropic(replies) as fake:
            write_agent_dir(ws.agent_dir, fake.url, ws.settings)
            out = tmp_path / "out.json"
            config = tmp_path / "config.json"
            settings: dict[str, Any] = {"model": MODEL, "sessionDir": str(ws.sessions), "approval": "ask"}
            config.write_text(json.dumps({"cmd": _server_cmd(), "settings": settings, "out": str(out)}))
            env = {
                **ws.server_env(fake.url),
                "TERM": "xterm-256color",
                "PI_NVIM_TEST_CONFIG": str(config),
                "XDG_CACHE_HOME": str(tmp_path / "cache"),
                "XDG_STATE_HOME": str(tmp_path / "state"),
                "XDG_DATA_HOME": str(tmp_path / "data"),
                "NVIM_LOG_FILE": str(tmp_path / "nvim.log"),
            }
            shown, asked = await asyncio.to_thread(_drive, nvim, env, ws.cwd, out, 60)
        edited = (ws.cwd / "hello.txt").read_text()
    finally:
        ws.cleanup()

    text = ANSI.sub(b"", shown).decode(errors="replace")
    assert asked, text[-3000:]
    assert "pi: allow edit" in text
    # the diff split was drawn before inputlist() blocked: its added line is on the screen
    assert "+" + NEW_TEXT in text, text[-3000:]
    seen = json.loads(out.read_text())
    assert "error" not in seen, seen
    assert edited == NEW_TEXT + "\n"  # "1<CR>" answered Allow and the edit was made
