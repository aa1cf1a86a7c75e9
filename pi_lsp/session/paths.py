"""Session folders and file names exactly as pi lays them out."""

from __future__ import annotations

from pathlib import Path

from pi_lsp.agent_dir import sessions_root
from pi_lsp.session.ids import file_timestamp

SESSION_SUFFIX = ".jsonl"


def encode_cwd(cwd: str) -> str:
    """pi's folder name for a cwd: one leading separator dropped, ``/ \\ :`` → ``-``, wrapped in ``--``."""
    text = cwd[1:] if cwd.startswith(("/", "\\")) else cwd
    for char in "/\\:":
        text = text.replace(char, "-")
    return f"--{text}--"


def default_session_dir(cwd: str, agent_dir: Path | None = None, *, create: bool = True) -> Path:
    """``<agentDir>/sessions/<encoded cwd>``, created on demand as pi does."""
    directory = sessions_root(agent_dir) / encode_cwd(cwd)
    if create:
        directory.mkdir(parents=True, exist_ok=True)
    return directory


def session_file_name(header_timestamp: str, session_id: str) -> str:
    """``<timestamp with : and . as ->_<id>.jsonl``."""
    return f"{file_timestamp(header_timestamp)}_{session_id}{SESSION_SUFFIX}"
