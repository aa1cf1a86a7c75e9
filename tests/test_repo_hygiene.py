"""The repository tracks no symbolic links: a link committed from a developer's worktree (to a
shared node_modules or tool folder) points nowhere on a fresh clone and breaks CI's installs."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def test_no_symbolic_links_are_tracked() -> None:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    listing = subprocess.run(
        ["git", "ls-files", "-s"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    links = [line.split("\t", 1)[1] for line in listing.splitlines() if line.startswith("120000 ")]
    assert links == [], f"symbolic links are tracked (git rm --cached them): {links}"
