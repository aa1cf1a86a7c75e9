"""Read a session file without changing it (for the CLI's ``tree`` and ``context``).

Opening through :class:`SessionManager` migrates v1/v2 files on disk, which an inspection command
must not do; here old files are migrated in memory only. The leaf is the one the server would
reopen the session at (pi's last entry, or a leaf the server remembered after navigation).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pi_lsp.session.errors import EntryNotFoundError, InvalidSessionFileError
from pi_lsp.session.index import SessionIndex, TreeNode
from pi_lsp.session.jsonl import dumps_compact
from pi_lsp.session.leaf_state import LeafStore
from pi_lsp.session.loader import read_lines
from pi_lsp.session.migrations import CURRENT_SESSION_VERSION, migrate_entries
from pi_lsp.session.records import EntryRecord
from pi_lsp.session.view import ContextView, build_view


@dataclass
class SessionSnapshot:
    path: str
    header: dict[str, Any]
    index: SessionIndex
    leaf_id: str | None
    diagnostics: list[dict[str, Any]] = field(default_factory=list)

    @property
    def session_id(self) -> str:
        value = self.header.get("id")
        return value if isinstance(value, str) else ""

    def tree(self) -> list[TreeNode]:
        return self.index.tree()

    def context(self, leaf_id: str | None = None) -> ContextView:
        """The context of ``leaf_id`` (default: the snapshot's leaf)."""
        target = self.leaf_id if leaf_id is None else leaf_id
        if leaf_id is not None and leaf_id not in self.index.by_id:
            raise EntryNotFoundError(leaf_id)
        return build_view(self.index.path_to(target))


def load_snapshot(path: str | Path) -> SessionSnapshot:
    """Parse ``path``; raises InvalidSessionFileError (or OSError) when it is not a session."""
    file = Path(path)
    if not file.is_file():
        raise InvalidSessionFileError(
            str(file), "no such file" if not file.exists() else "not a regular file"
        )
    read = read_lines(file)
    if read.header is None or not read.first_object_is_header:
        raise InvalidSessionFileError(str(file), "no session header")
    header = read.header
    records = read.records
    diagnostics = list(read.diagnostics)
    version = header.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version < CURRENT_SESSION_VERSION:
        migrated = read_lines(file, keep_objects=True)
        objects = [obj for obj in migrated.objects or [] if isinstance(obj, dict)]
        from_version = migrate_entries(objects)
        header = next((obj for obj in objects if obj.get("type") == "session"), header)
        records = [EntryRecord(obj, dumps_compact(obj), 0) for obj in objects if obj.get("type") != "session"]
        diagnostics.insert(
            0, {"severity": "info", "message": f"version {from_version} file, migrated in memory only"}
        )
    index = SessionIndex()
    index.extend(records)
    leaf = index.records[-1].id if index.records else None
    session_id = header.get("id")
    if isinstance(session_id, str):
        found, saved = LeafStore().restore(session_id, str(file.absolute()), leaf)
        if found and (saved is None or saved in index.by_id):
            leaf = saved
    return SessionSnapshot(str(file), header, index, leaf, diagnostics)
