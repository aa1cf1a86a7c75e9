"""Replacing a small file of our own atomically: readers see the old content or the new, whole.

A temp file is made in the target's folder (mode 0600, named ``.<name>.….tmp`` so a folder's
leftovers from a crash can be recognised), written, optionally synced, then renamed over the
target; on any failure the temp file is removed and the error raised. Session files have their
own, locked variant (:func:`pi_lsp.session.writer.atomic_replace`).
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

TEMP_SUFFIX = ".tmp"


class TempFileError(OSError):
    """The temp file could not be made in the target's folder (nothing was written)."""


def replace_atomically(
    target: Path, data: bytes, *, fsync: bool = False, mode: int | None = None, suffix: str = TEMP_SUFFIX
) -> None:
    """Put ``data`` at ``target`` in one rename; raises OSError with nothing left behind.

    ``mode``: the permission bits the file gets (else the temp file's 0600). A failure to make the
    temp file is a :class:`TempFileError`, so callers can word it as a failure to open the target.
    """
    try:
        handle, temp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=suffix, dir=target.parent)
    except OSError as error:
        raise TempFileError(error.errno, error.strerror, error.filename) from error
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
            if fsync:
                out.flush()
                os.fsync(out.fileno())
        if mode is not None:
            os.chmod(temp, mode)
        os.replace(temp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise
