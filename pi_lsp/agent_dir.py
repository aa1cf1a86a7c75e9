"""Where pi keeps its per-user files (the "agent dir"), resolved exactly as pi does."""

from __future__ import annotations

import os
from pathlib import Path

AGENT_DIR_ENV = "PI_CODING_AGENT_DIR"
SESSION_DIR_ENV = "PI_CODING_AGENT_SESSION_DIR"


def expand_home(value: str) -> str:
    """Expand a lone ``~`` or a leading ``~/`` to the home directory; anything else is verbatim."""
    if value == "~":
        return str(Path.home())
    if value.startswith("~/"):
        return str(Path.home() / value[2:])
    return value


def agent_dir() -> Path:
    """``$PI_CODING_AGENT_DIR`` (with ``~`` expansion) or ``~/.pi/agent``."""
    configured = os.environ.get(AGENT_DIR_ENV)
    if configured:
        return Path(expand_home(configured))
    return Path.home() / ".pi" / "agent"


def sessions_root(base: Path | None = None) -> Path:
    """``<agentDir>/sessions``: the parent of every per-project session folder."""
    return (base if base is not None else agent_dir()) / "sessions"
