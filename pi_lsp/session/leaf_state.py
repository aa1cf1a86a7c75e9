"""Remembering the leaf across server restarts without touching the session file.

pi reopens a session at its last line. When the user moved the leaf (navigation, setLeaf) without
appending, we keep that position in a small side file under ``<agentDir>/pi-lsp/leaves/`` keyed by
session id, together with the id of the file's last entry at that moment. On open it is honoured
only while the file still ends with that entry; once anyone appends, pi's rule applies again. The
session file itself stays byte-for-byte what pi expects.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

import orjson

from pi_lsp.agent_dir import agent_dir
from pi_lsp.atomic_file import replace_atomically
from pi_lsp.regular_files import open_regular

MAX_SIDE_FILE_BYTES = 64 * 1024  # a side file is one small JSON object


def default_state_dir() -> Path:
    return agent_dir() / "pi-lsp" / "leaves"


class LeafStore:
    """Side files ``<session id>.json`` holding ``{file, leafId, lastEntryId}``."""

    def __init__(self, directory: Path | None = None) -> None:
        self.directory = directory if directory is not None else default_state_dir()

    def _path(self, session_id: str) -> Path:
        safe = "".join(char if char.isalnum() or char in "-_" else "_" for char in session_id)
        return self.directory / f"{safe}.json"

    def save(self, session_id: str, file: str, leaf_id: str | None, last_entry_id: str | None) -> None:
        data = orjson.dumps({"file": file, "leafId": leaf_id, "lastEntryId": last_entry_id})
        target = self._path(session_id)
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            replace_atomically(target, data)
        except OSError:
            pass  # best effort: losing the side file only means reopening at the last line

    def clear(self, session_id: str) -> None:
        with contextlib.suppress(OSError):
            self._path(session_id).unlink()

    def restore(self, session_id: str, file: str, last_entry_id: str | None) -> tuple[bool, str | None]:
        """(found, leaf) when a side file matches this file and its current last entry."""
        try:
            with open_regular(self._path(session_id), max_bytes=MAX_SIDE_FILE_BYTES) as handle:
                data: Any = orjson.loads(handle.read())
        except (OSError, orjson.JSONDecodeError):
            return False, None
        if not isinstance(data, dict) or data.get("file") != file:
            return False, None
        if data.get("lastEntryId") != last_entry_id:
            return False, None
        leaf = data.get("leafId")
        return True, leaf if isinstance(leaf, str) else None
