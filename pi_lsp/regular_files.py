"""Opening files that someone else controls without hanging: regular files only, never blocking.

``open`` of a FIFO blocks until a writer appears, and a device such as ``/dev/zero`` never ends;
both would stall a worker for good. :func:`open_regular` opens with ``O_NONBLOCK`` (which makes a
FIFO open return at once) and refuses anything that is not a regular file with a
:class:`~pi_lsp.fileerrors.FileProblem` (reason ``notRegularFile``).
"""

from __future__ import annotations

import os
import stat
from typing import BinaryIO

from pi_lsp.fileerrors import NOT_REGULAR_FILE, TOO_LARGE, FileProblem

_READ_FLAGS = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC


def check_regular(fd: int, path: object) -> os.stat_result:
    """The descriptor's stat, or FileProblem when it is not a regular file."""
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        kind = "a directory" if stat.S_ISDIR(info.st_mode) else "not a regular file"
        raise FileProblem(
            os.fspath(path) if isinstance(path, os.PathLike) else str(path),
            NOT_REGULAR_FILE,
            f"{path} is {kind}",
        )
    return info


def open_regular(path: str | os.PathLike[str], *, max_bytes: int | None = None) -> BinaryIO:
    """``path`` opened for binary reading; FileProblem when it is not a regular file (or too big)."""
    fd = os.open(path, _READ_FLAGS)
    try:
        info = check_regular(fd, path)
        if max_bytes is not None and info.st_size > max_bytes:
            raise FileProblem(
                os.fspath(path), TOO_LARGE, f"{path} is larger than {max_bytes} bytes ({info.st_size})"
            )
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise
