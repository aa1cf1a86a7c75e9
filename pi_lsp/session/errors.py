"""Errors raised by the session package; the server maps each to a protocol error code."""

from __future__ import annotations


class SessionError(Exception):
    """Base class: a session operation failed in a way the caller should report."""


class EntryNotFoundError(SessionError):
    """An entry id that is not in the session (message as pi's: ``Entry <id> not found``)."""

    def __init__(self, entry_id: object) -> None:
        super().__init__(f"Entry {'null' if entry_id is None else entry_id} not found")
        self.entry_id = entry_id


class InvalidSessionFileError(SessionError):
    """A non-empty file without a valid session header; it is never modified."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path} is not a pi session file: {reason}; the file was left untouched")
        self.path = path


class InvalidEntryError(SessionError, ValueError):
    """An entry or message given to an append call is malformed (names the offending field)."""


class SessionFileConflictError(SessionError):
    """The file changed on disk in a way that makes the requested write unsafe."""


class SearchTimeoutError(SessionError, ValueError):
    """A ``re:`` search of the session picker ran out of time (a pattern that backtracks)."""
