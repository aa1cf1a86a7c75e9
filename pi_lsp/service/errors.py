"""Protocol errors raised by the services; the server turns each into a JSON-RPC error object.

The codes are the contract's, from the protocol source (``pi_lsp/protocol/enums.py``). Domain
errors from :mod:`pi_lsp.session` are mapped here so handlers never need to know about them.
"""

from __future__ import annotations

import os
from typing import Any

from pi_lsp import fileerrors
from pi_lsp.protocol.enums import ERROR_CODES
from pi_lsp.session import errors as session_errors

INVALID_PARAMS = ERROR_CODES["InvalidParams"]
INTERNAL_ERROR = ERROR_CODES["InternalError"]
SESSION_NOT_FOUND = ERROR_CODES["SessionNotFound"]
ENTRY_NOT_FOUND = ERROR_CODES["EntryNotFound"]
NOTHING_TO_COMPACT = ERROR_CODES["NothingToCompact"]
MODEL_ERROR = ERROR_CODES["ModelError"]
INVALID_SESSION_FILE = ERROR_CODES["InvalidSessionFile"]
SESSION_BUSY = ERROR_CODES["SessionBusy"]
FILE_ERROR = ERROR_CODES["FileError"]
REQUEST_CANCELLED = ERROR_CODES["RequestCancelled"]


class PiError(Exception):
    """An error the client should see with a specific code and a one-sentence message."""

    code = INTERNAL_ERROR

    def __init__(self, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.message = message
        self.data = data


class InvalidParams(PiError):
    code = INVALID_PARAMS


class SessionNotFound(PiError):
    code = SESSION_NOT_FOUND


class EntryNotFound(PiError):
    code = ENTRY_NOT_FOUND


class NothingToCompact(PiError):
    code = NOTHING_TO_COMPACT


class ModelError(PiError):
    code = MODEL_ERROR


class InvalidSessionFile(PiError):
    code = INVALID_SESSION_FILE


class SessionBusy(PiError):
    code = SESSION_BUSY


class FileError(PiError):
    """A file the request names or needs could not be used; ``data`` is ``{path, reason}``."""

    code = FILE_ERROR

    def __init__(self, message: str, path: str, reason: str) -> None:
        super().__init__(message, {"path": path, "reason": reason})


def file_error(error: OSError) -> FileError:
    """The FileError for a failed file-system operation (reason words: :mod:`pi_lsp.fileerrors`)."""
    path = os.fsdecode(error.filename) if isinstance(error.filename, (str, bytes)) else ""
    return FileError(fileerrors.describe(error), path, fileerrors.reason_of(error))


def from_exception(error: BaseException) -> PiError | None:
    """The protocol error for a domain exception, or None when it is unexpected (a bug)."""
    if isinstance(error, PiError):
        return error
    if isinstance(error, session_errors.EntryNotFoundError):
        return EntryNotFound(f"entry {error.entry_id} is not in the session", {"id": error.entry_id})
    if isinstance(error, session_errors.InvalidSessionFileError):
        return InvalidSessionFile(str(error), {"path": error.path})
    if isinstance(error, session_errors.InvalidEntryError):
        return InvalidParams(str(error))
    if isinstance(error, session_errors.SearchTimeoutError):
        return InvalidParams(str(error), {"field": "query", "reason": "timeout"})
    if isinstance(error, session_errors.SessionFileConflictError):
        return SessionBusy(f"{error}; another writer changed the file, try again", {"conflict": True})
    if isinstance(error, OSError):
        return file_error(error)
    return None
