"""Quitting Neovim stops the server cleanly: no traceback in the server's log or Neovim's LSP log.

Neovim 0.7 sends ``shutdown`` twice on quit (the plugin stops its client, then Neovim's own exit
handler stops every client); pygls' shutdown died on that with "dictionary changed size during
iteration", logged a traceback and answered -32603, after which Neovim killed the server.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import time
from pathlib import Path
from typing import Any

from tests.agent.chat_support import MODEL, Workspace
from tests.llm.fake_anthropic import FakeAnthropic, Reply, Text, assistant_stream
from tests.nvim.headless import REPO, lsp_log, server_cmd
from tests.pi.pi_rpc import write_agent_dir

SCRIPT = Path(__file__).with_name("quit.lua")


def _alive(pid: int) -> bool:
    """Whether ``pid`` still runs (an exited process nobody has reaped yet counts as ended)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def _quit(nvim: str, tmp_path: Path, cwd: Path, env: dict[str, str], **extra: Any) -> tuple[str, str]:
    """Run quit.lua (``extra`` goes into its config) and wait for the server to end; returns the
    server's log and Neovim's LSP log."""
    server_log = tmp_path / "server.log"
    ready = tmp_path / "ready.json"
    config = tmp_path / "config.json"
    command = [*server_cmd(), "--log-file", str(server_log), "--log-level", "info"]
    config.write_text(json.dumps({"cmd": command, "ready": str(ready), **extra}))
    full_env = {
        **env,
        "PI_NVIM_TEST_CONFIG": str(config),
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "NVIM_LOG_FILE": str(tmp_path / "nvim.log"),
    }
    done = subprocess.run(
        [nvim, "--headless", "--clean", "-u", "NONE", "-i", "NONE", "-n",
         "--cmd", f"set rtp+={REPO / 'nvim-client'}", "-c", f"luafile {SCRIPT}"],
        cwd=cwd, env=full_env, stdin=subprocess.DEVNULL, capture_output=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout.decode(errors="replace")[-2000:]
    info = json.loads(ready.read_text())
    assert info["ready"] is True
    # the server finishes its shutdown after Neovim is gone: wait for it to end
    deadline = time.monotonic() + 15
    while _alive(info["pid"]) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(info["pid"]), "the server did not exit after Neovim quit"
    return server_log.read_text(), lsp_log(tmp_path)


def test_quitting_neovim_logs_no_traceback(tmp_path: Path, nvim: str) -> None:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    env = {**os.environ, "PI_CODING_AGENT_DIR": str(tmp_path / "agent")}
    env.pop("ANTHROPIC_API_KEY", None)
    log, client_log = _quit(nvim, tmp_path, workspace, env)
    assert "Traceback" not in log and "RuntimeError" not in log and " ERROR " not in log, log[-3000:]
    assert "Traceback" not in client_log and "RuntimeError" not in client_log, client_log[-3000:]


async def test_quitting_during_a_run_logs_no_traceback(tmp_path: Path, nvim: str) -> None:
    """Quitting while a reply streams: the plugin aborts the run before it stops the server, so
    the run never writes to a closed stdout ("ValueError: I/O operation on closed file")."""
    partial = assistant_stream(Text("Partial reply that never ends"), message_id="m_slow")
    ws = Workspace()
    try:
        async with FakeAnthropic([Reply(events=partial, stall_after=5)]) as fake:
            write_agent_dir(ws.agent_dir, fake.url, ws.settings)
            settings = {"model": MODEL, "sessionDir": str(ws.sessions)}
            env = ws.server_env(fake.url)
            log, client_log = await asyncio.to_thread(
                _quit, nvim, tmp_path, ws.cwd, env, settings=settings, prompt="hello"
            )
    finally:
        ws.cleanup()
    assert "Traceback" not in log and "closed file" not in log and " ERROR " not in log, log[-3000:]
    assert "Traceback" not in client_log, client_log[-3000:]
