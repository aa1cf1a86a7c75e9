"""Running one of the Lua scripts of tests/nvim (which load ``harness.lua``) in a headless Neovim
against the real server and a fake model: the config file, the environment, the process; where
Neovim and the repository are, and the server command the plugin starts."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
NVIM = shutil.which("nvim")


def server_cmd() -> list[str]:
    """The server command the plugin starts (the repository's venv, unless overridden)."""
    override = os.environ.get("PI_NVIM_TEST_SERVER_CMD")  # a JSON list, e.g. to try another server
    if override:
        return list(json.loads(override))
    venv_python = REPO / ".venv" / "bin" / "python"
    python = str(venv_python) if venv_python.exists() else sys.executable
    return [python, "-m", "pi_lsp"]


def nvim_argv(script: Path, *, headless: bool = True) -> list[str]:
    """Neovim with no user config, the plugin on its runtime path, running ``script``."""
    assert NVIM is not None
    return [NVIM, *(["--headless"] if headless else []), "--clean", "-u", "NONE", "-i", "NONE", "-n",
            "--cmd", f"set rtp+={REPO / 'nvim-client'}", "-c", f"luafile {script}"]  # fmt: skip


async def run_lua(
    script: Path,
    tmp_path: Path,
    cwd: Path,
    env: Mapping[str, str],
    settings: dict[str, Any],
    timeout: float,
    **extra: Any,
) -> dict[str, Any]:
    """Run ``script`` with ``{cmd, settings, out, **extra}`` as its config; returns what it wrote to
    ``out`` (failing the test when Neovim failed or the script recorded an ``error``)."""
    out = tmp_path / "out.json"
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"cmd": server_cmd(), "settings": settings, "out": str(out), **extra}))
    full_env = {
        **env,
        "PI_NVIM_TEST_CONFIG": str(config),
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "NVIM_LOG_FILE": str(tmp_path / "nvim.log"),
    }
    assert NVIM is not None
    nvim = await asyncio.create_subprocess_exec(
        *nvim_argv(script),
        cwd=cwd, env=full_env, stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
    )  # fmt: skip
    output, _ = await asyncio.wait_for(nvim.communicate(), timeout)
    assert nvim.returncode == 0, output.decode(errors="replace")[-2000:]
    seen: dict[str, Any] = json.loads(out.read_text())
    assert "error" not in seen, (seen.get("current"), seen.get("error"), seen.get("messages"))
    return seen


def lsp_log(tmp_path: Path) -> str:
    """Neovim's LSP log of a run_lua run (empty when nothing was logged)."""
    path = tmp_path / "cache" / "nvim" / "lsp.log"
    return path.read_text() if path.exists() else ""
