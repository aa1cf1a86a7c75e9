"""pi-compatible session storage: JSONL tree files, migrations, listing and context building."""

from pi_lsp.jscompat import UNSET
from pi_lsp.session.context import SessionContext, build_session_context
from pi_lsp.session.errors import (
    EntryNotFoundError,
    InvalidEntryError,
    InvalidSessionFileError,
    SessionError,
    SessionFileConflictError,
)
from pi_lsp.session.index import TreeNode
from pi_lsp.session.list_search import search_sessions
from pi_lsp.session.listing import (
    SessionInfo,
    build_session_info,
    find_most_recent_session,
    list_all_sessions,
    list_sessions,
)
from pi_lsp.session.migrations import CURRENT_SESSION_VERSION, migrate_entries
from pi_lsp.session.parse import load_entries_from_file, parse_session_entries
from pi_lsp.session.store import SessionManager
from pi_lsp.session.view import ContextView

__all__ = [
    "CURRENT_SESSION_VERSION",
    "UNSET",
    "ContextView",
    "EntryNotFoundError",
    "InvalidEntryError",
    "InvalidSessionFileError",
    "SessionContext",
    "SessionError",
    "SessionFileConflictError",
    "SessionInfo",
    "SessionManager",
    "TreeNode",
    "build_session_context",
    "build_session_info",
    "find_most_recent_session",
    "list_all_sessions",
    "list_sessions",
    "load_entries_from_file",
    "migrate_entries",
    "parse_session_entries",
    "search_sessions",
]
