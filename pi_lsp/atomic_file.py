"""Replacing a file atomically: readers see the old content or the new, whole.

A temp file is made in the target's folder (mode 0600, named ``.<name>.….tmp`` so a folder's
leftovers from a crash can be recognised), written, optionally synced, then renamed over the
target; on any failure the temp file is removed and the error raised. Session files have their
own, locked variant (:func:`pi_lsp.session.writer.atomic_replace`).

:func:`replace_at` does the work inside a folder held open by descriptor, so a caller that opened
the folder without following symlinks (the agent's file tools) writes exactly there, whatever is
renamed or linked meanwhile; the temp file is created with ``O_EXCL | O_NOFOLLOW`` and the rename
replaces the directory entry itself (a symlink at the target's name is replaced, never followed).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from pathlib import Path

TEMP_SUFFIX = ".tmp"
_TEMP_ATTEMPTS = 100
_DIRECTORY_FLAGS = getattr(os, "O_PATH", os.O_RDONLY) | os.O_DIRECTORY | os.O_CLOEXEC
_TEMP_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


class TempFileError(OSError):
    """The temp file could not be made in the target's folder (nothing was written)."""


def _temp_file(directory_fd: int, name: str, suffix: str) -> tuple[int, str]:
    """A new, empty 0600 file ``.<name>.<random><suffix>`` in the folder, and its name."""
    for _ in range(_TEMP_ATTEMPTS):
        temp = f".{name}.{os.urandom(4).hex()}{suffix}"  # what secrets.token_hex does, without its imports
        try:
            return os.open(temp, _TEMP_FLAGS, 0o600, dir_fd=directory_fd), temp
        except FileExistsError:
            continue
        except OSError as error:
            raise TempFileError(error.errno, error.strerror, name) from error
    raise TempFileError(17, "File exists", name)


def replace_at(
    directory_fd: int, name: str, data: bytes, *, fsync: bool = False, mode: int | None = None,
    suffix: str = TEMP_SUFFIX, before_rename: Callable[[], None] | None = None,
) -> None:  # fmt: skip
    """Put ``data`` at ``name`` in the folder open as ``directory_fd``, in one rename.

    ``mode``: the permission bits the file gets (else the temp file's 0600). ``before_rename`` is
    called once the temp file is complete; raising there leaves the target untouched. A failure to
    make the temp file is a :class:`TempFileError`; any failure leaves no temp file behind.
    """
    handle, temp = _temp_file(directory_fd, name, suffix)
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
            if fsync:
                out.flush()
                os.fsync(out.fileno())
            if mode is not None:
                os.fchmod(out.fileno(), mode)
        if before_rename is not None:
            before_rename()
        os.replace(temp, name, src_dir_fd=directory_fd, dst_dir_fd=directory_fd)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp, dir_fd=directory_fd)
        raise


def replace_atomically(
    target: Path, data: bytes, *, fsync: bool = False, mode: int | None = None, suffix: str = TEMP_SUFFIX
) -> None:
    """Put ``data`` at ``target`` in one rename; raises OSError with nothing left behind.

    ``mode``: the permission bits the file gets (else the temp file's 0600). A failure to make the
    temp file (the folder cannot be opened, or written) is a :class:`TempFileError`, so callers can
    word it as a failure to open the target.
    """
    try:
        directory_fd = os.open(target.parent, _DIRECTORY_FLAGS)
    except OSError as error:
        raise TempFileError(error.errno, error.strerror, str(target.parent)) from error
    try:
        replace_at(directory_fd, target.name, data, fsync=fsync, mode=mode, suffix=suffix)
    finally:
        os.close(directory_fd)
