"""Quitting Neovim stops the server cleanly: no traceback in the server's log or Neovim's LSP log.

Neovim 0.7 sends ``shutdown`` twice on quit (the plugin stops its client, then Neovim's own exit
handler stops every client); pygls' shutdown died on that with "dictionary changed size during
iteration", logged a traceback and answered -32603, after which Neovim killed the server.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

from tests.nvim.headless import lsp_log
from tests.nvim.test_nvim_client import REPO, _server_cmd

SCRIPT = Path(__file__).with_name("quit.lua")


def _alive(pid: int) -> bool:
    """Whether ``pid`` still runs (an exited process nobody has reaped yet counts as ended)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def test_quitting_neovim_logs_no_traceback(tmp_path: Path, nvim: str) -> None:
    server_log = tmp_path / "server.log"
    ready = tmp_path / "ready.json"
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    config = tmp_path / "config.json"
    command = [*_server_cmd(), "--log-file", str(server_log), "--log-level", "info"]
    config.write_text(json.dumps({"cmd": command, "ready": str(ready)}))
    env = {
        **os.environ,
        "PI_NVIM_TEST_CONFIG": str(config),
        "PI_CODING_AGENT_DIR": str(tmp_path / "agent"),
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "NVIM_LOG_FILE": str(tmp_path / "nvim.log"),
    }
    env.pop("ANTHROPIC_API_KEY", None)
    done = subprocess.run(
        [
            nvim,
            "--headless",
            "--clean",
            "-u",
            "NONE",
            "-i",
            "NONE",
            "-n",
            "--cmd",
            f"set rtp+={REPO / 'nvim-client'}",
            "-c",
            f"luafile {SCRIPT}",
        ],
        cwd=workspace,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stdout.decode(errors="replace")[-2000:]
    info = json.loads(ready.read_text())
    assert info["ready"] is True
    # the server finishes its shutdown after Neovim is gone: wait for it to end
    deadline = time.monotonic() + 15
    while _alive(info["pid"]) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(info["pid"]), "the server did not exit after Neovim quit"
    log = server_log.read_text()
    assert "Traceback" not in log and "RuntimeError" not in log and " ERROR " not in log, log[-3000:]
    client_log = lsp_log(tmp_path)
    assert "Traceback" not in client_log and "RuntimeError" not in client_log, client_log[-3000:]
