"""Running one of the Lua scripts of tests/nvim (which load ``harness.lua``) in a headless Neovim
against the real server and a fake model: the config file, the environment, the process."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]


def server_cmd() -> list[str]:
    """The server command the plugin starts (the repository's venv, unless overridden)."""
    override = os.environ.get("PI_NVIM_TEST_SERVER_CMD")  # a JSON list, e.g. to try another server
    if override:
        return list(json.loads(override))
    venv_python = REPO / ".venv" / "bin" / "python"
    python = str(venv_python) if venv_python.exists() else sys.executable
    return [python, "-m", "pi_lsp"]


async def run_lua(
    nvim: str,
    script: Path,
    tmp_path: Path,
    cwd: Path,
    env: Mapping[str, str],
    settings: dict[str, Any],
    timeout: float,
    **extra: Any,
) -> dict[str, Any]:
    """Run ``script`` in the Neovim binary ``nvim`` with ``{cmd, settings, out, **extra}`` as its config;
    returns what it wrote to ``out`` (failing the test if Neovim failed or the script recorded an error)."""
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
    nvim = await asyncio.create_subprocess_exec(
        nvim, "--headless", "--clean", "-u", "NONE", "-i", "NONE", "-n",
        "--cmd", f"set rtp+={REPO / 'nvim-client'}", "-c", f"luafile {script}",
        cwd=cwd, env=full_env, stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
    )  # fmt: skip
    output, _ = await asyncio.wait_for(nvim.communicate(), timeout)
    assert nvim.returncode == 0, output.decode(errors="replace")[-2000:]
    seen: dict[str, Any] = json.loads(out.read_text())
    assert "error" not in seen, (seen.get("current"), seen.get("error"), seen.get("messages"))
    # the plugin uses each version's own API: no deprecation warning on a newer Neovim
    deprecated = [m for m in seen.get("messages", []) if "deprecated" in str(m)]
    assert not deprecated, deprecated
    return seen


def lsp_log(tmp_path: Path) -> str:
    """Neovim's LSP log of a run (empty when nothing was logged): 0.7 writes it under
    $XDG_CACHE_HOME, 0.8 and later under $XDG_STATE_HOME."""
    for home in ("cache", "state"):
        path = tmp_path / home / "nvim" / "lsp.log"
        if path.exists():
            return path.read_text()
    return ""
