"""setup() without ``cmd`` in a real headless Neovim: the server is found in a ``.venv`` (not on
PATH; on 0.11 it is registered with ``vim.lsp.config`` and a user's own ``vim.lsp.config("pi", ...)`` is
merged over it), the client declares approvals, session commands' messages fit one line (no "Press ENTER"),
``:help pi.txt`` opens the plugin's doc, and with no server anywhere the error says what to set."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.nvim.binaries import _version_of
from tests.nvim.headless import REPO

SCRIPT = Path(__file__).with_name("setup.lua")
LAZY_SCRIPT = Path(__file__).with_name("lazy_spec.lua")


def _path_without_pi_lsp() -> str:
    dirs = os.environ.get("PATH", "").split(os.pathsep)
    return os.pathsep.join(d for d in dirs if d and not (Path(d) / "pi-lsp").exists())


@pytest.mark.skipif(not (REPO / ".venv" / "bin" / "pi-lsp").exists(), reason="needs make setup's .venv")
def test_setup_without_cmd_finds_the_venv_server(tmp_path: Path, nvim: str) -> None:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    out = tmp_path / "out.json"
    env = {
        **os.environ,
        "PATH": _path_without_pi_lsp(),
        "PI_NVIM_TEST_OUT": str(out),
        "PI_NVIM_TEST_SERVER_DIR": str(REPO),
        "PI_CODING_AGENT_DIR": str(tmp_path / "agent"),
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "NVIM_LOG_FILE": str(tmp_path / "nvim.log"),
    }
    done = subprocess.run(
        [nvim, "--headless", "--clean", "-u", "NONE", "-i", "NONE", "-n",
         "--cmd", f"set rtp+={REPO / 'nvim-client'}", "-c", f"luafile {SCRIPT}"],
        cwd=workspace, env=env, stdin=subprocess.DEVNULL, capture_output=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout.decode(errors="replace")[-2000:]
    seen = json.loads(out.read_text())
    assert seen["cmd"] == [str(REPO / ".venv" / "bin" / "pi-lsp")]
    assert seen["ready"] is True and seen["approvals"] is True
    if _version_of(nvim) == "0.7":
        assert "lsp_config_cmd" not in seen and seen["user_mark"] is None
    else:  # 0.11: the plugin's vim.lsp.config("pi"), with the user's own vim.lsp.config merged over it
        assert seen["lsp_config_cmd"][0] == str(REPO / ".venv" / "bin" / "pi-lsp"), seen["lsp_config_cmd"]
        assert seen["user_mark"] == "merged"
    assert seen["messages"] and seen["messages"][0].startswith("pi: new session ")
    assert all(len(m) < seen["columns"] and "\n" not in m for m in seen["messages"]), seen["messages"]
    assert seen["help_ok"] is True and seen["help_file"] == "pi.txt"
    # `:help pi` opens the plugin's help (its own *pi* tag), not another topic
    assert seen["help_pi_ok"] is True and seen["help_pi_path"] == str(REPO / "nvim-client" / "doc" / "pi.txt")
    assert "*pi*" in seen["help_pi_line"]
    assert seen["agents_attached"] is True and seen["pi_clients"] == 1  # attached, no second server
    assert seen["missing_client"] is True
    assert "cmd =" in seen["missing_message"] and "server_dirs" in seen["missing_message"]


def test_committed_help_tags_are_current(tmp_path: Path, nvim: str) -> None:
    """doc/tags is committed so :help works without :helptags; it must match the doc."""
    doc = tmp_path / "doc"
    doc.mkdir()
    (doc / "pi.txt").write_text((REPO / "nvim-client" / "doc" / "pi.txt").read_text())
    subprocess.run(
        [nvim, "--headless", "--clean", "-u", "NONE", "-c", f"helptags {doc}", "-c", "qa!"],
        stdin=subprocess.DEVNULL, capture_output=True, timeout=30, check=True,
    )  # fmt: skip
    assert (doc / "tags").read_text() == (REPO / "nvim-client" / "doc" / "tags").read_text()


def _lazy_spec() -> str:
    """The Lua table of the README's lazy.nvim section (its first ```lua block)."""
    readme = (REPO / "nvim-client" / "README.md").read_text(encoding="utf-8")
    section = readme.split("### lazy.nvim", 1)[1]
    block = section.split("```lua\n", 1)[1].split("```", 1)[0]
    return "return " + block


def test_readme_lazy_spec_loads_the_plugin(tmp_path: Path, nvim: str) -> None:
    """The documented lazy.nvim spec is valid Lua, its ``main`` module's setup() takes its
    ``opts`` (known options, known chat keys) and its ``cmd`` list names commands that exist."""
    spec = tmp_path / "spec.lua"
    spec.write_text(_lazy_spec())
    out = tmp_path / "out.json"
    env = {**os.environ, "PI_NVIM_TEST_SPEC": str(spec), "PI_NVIM_TEST_OUT": str(out),
           "XDG_STATE_HOME": str(tmp_path / "state"), "XDG_CACHE_HOME": str(tmp_path / "cache")}  # fmt: skip
    done = subprocess.run(
        [nvim, "--headless", "--clean", "-u", "NONE", "-i", "NONE", "-n",
         "--cmd", f"set rtp+={REPO / 'nvim-client'}", "-c", f"luafile {LAZY_SCRIPT}"],
        cwd=tmp_path, env=env, stdin=subprocess.DEVNULL, capture_output=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout.decode(errors="replace")[-2000:]
    seen = json.loads(out.read_text())
    assert "error" not in seen, seen["error"]
    assert seen["main"] == "pi" and "PiChat" in seen["cmd"]
    assert (
        seen["missing_commands"] == [] and seen["unknown_options"] == [] and seen["unknown_chat_keys"] == []
    )
    assert seen["key_map_yank"] == "gy"
