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


def replace_atomically(target: Path, data: bytes, *, fsync: bool = False) -> None:
    """Put ``data`` at ``target`` in one rename; raises OSError with nothing left behind."""
    handle, temp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=TEMP_SUFFIX, dir=target.parent)
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
            if fsync:
                out.flush()
                os.fsync(out.fileno())
        os.replace(temp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise
