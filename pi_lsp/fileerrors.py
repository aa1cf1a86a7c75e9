"""File-system failures as one exception type every layer can raise and the server reports as FileError.

Lower layers (session, prompt, compaction) raise :class:`FileProblem` for failures that are not an
``OSError`` from the system itself (not a regular file, too large, replaced underneath, timed out);
it *is* an ``OSError``, so existing ``except OSError`` paths keep working. The service layer maps
every ``OSError`` to the protocol's FileError (-32007) with ``data: {path, reason}`` where ``reason``
is one of the stable words below (:func:`reason_of`), so clients can act on it without parsing text.
"""

from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import Iterator

# The ``reason`` values of FileError (documented in docs/protocol.md).
NOT_FOUND = "notFound"
PERMISSION_DENIED = "permissionDenied"
NO_SPACE = "noSpace"
NOT_REGULAR_FILE = "notRegularFile"
TOO_LARGE = "tooLarge"
REPLACED = "replaced"
READ_ONLY = "readOnly"
TIMEOUT = "timeout"
IO_ERROR = "ioError"
NOT_JSONL = "notJsonl"  # a new session file's name must end in .jsonl

_BY_ERRNO = {
    errno.ENOENT: NOT_FOUND,
    errno.ENOTDIR: NOT_FOUND,
    errno.EACCES: PERMISSION_DENIED,
    errno.EPERM: PERMISSION_DENIED,
    errno.ENOSPC: NO_SPACE,
    errno.EDQUOT: NO_SPACE,
    errno.EFBIG: TOO_LARGE,
    errno.EISDIR: NOT_REGULAR_FILE,
    errno.ENXIO: NOT_REGULAR_FILE,
    errno.EROFS: READ_ONLY,
    errno.ETIMEDOUT: TIMEOUT,
}

# Errno-like numbers for problems the system does not report itself.
_ERRNO_OF = {
    NOT_FOUND: errno.ENOENT,
    PERMISSION_DENIED: errno.EACCES,
    NO_SPACE: errno.ENOSPC,
    TOO_LARGE: errno.EFBIG,
    NOT_REGULAR_FILE: errno.EINVAL,
    REPLACED: errno.ESTALE,
    READ_ONLY: errno.EROFS,
    TIMEOUT: errno.ETIMEDOUT,
    NOT_JSONL: errno.EINVAL,
}


class FileProblem(OSError):
    """A file could not be used safely; ``reason`` is one of this module's words."""

    def __init__(self, path: str, reason: str, message: str) -> None:
        super().__init__(_ERRNO_OF.get(reason, errno.EIO), message, path)
        self.reason = reason
        self.message = message

    def __str__(self) -> str:
        return self.message


def reason_of(error: OSError) -> str:
    """The FileError ``reason`` for an OSError (system errors mapped by errno)."""
    if isinstance(error, FileProblem):
        return error.reason
    if isinstance(error, TimeoutError):
        return TIMEOUT
    return _BY_ERRNO.get(error.errno or 0, IO_ERROR)


def describe(error: OSError) -> str:
    """One sentence for the client: what failed and on which path."""
    if isinstance(error, FileProblem):
        return error.message
    text = (error.strerror or str(error) or "input/output error").rstrip(".")
    text = text[:1].lower() + text[1:]
    if error.filename is None:
        return f"file system error: {text}"
    if error.filename2 is not None:
        return f"{error.filename} -> {error.filename2}: {text}"
    return f"{error.filename}: {text}"


def with_path(error: OSError, path: object) -> OSError:
    """``error`` naming ``path`` when the system did not say which file (e.g. a failed ``write``)."""
    if error.filename is None and not isinstance(error, FileProblem):
        error.filename = os.fspath(path) if isinstance(path, os.PathLike) else path
    return error


@contextlib.contextmanager
def naming(path: object) -> Iterator[None]:
    """Make OSErrors raised inside the block name ``path`` (see :func:`with_path`)."""
    try:
        yield
    except OSError as error:
        raise with_path(error, path) from None
