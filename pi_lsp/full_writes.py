"""Writing a whole buffer to a file descriptor, however many ``write`` calls that takes.

``os.write`` (and a raw ``FileIO``, which is what ``sys.stdout.buffer`` is when
``PYTHONUNBUFFERED`` is set, as in many containers and editor launch configurations) may take only
part of a buffer: a pipe whose reader is slower than the writer, interrupted by a signal, returns
the count written so far. Dropping the rest tears the stream: an editor waiting for a 30 MB answer
got its first 130 KB and then nothing, forever. Every protocol output and every append goes
through :func:`write_all`.
"""

from __future__ import annotations

import os

__all__ = ["write_all"]


def write_all(fd: int, data: bytes | bytearray | memoryview) -> None:
    """Write all of ``data`` to ``fd`` (blocking); an ``OSError`` leaves an unknown prefix written."""
    written = os.write(fd, data)
    if written < len(data):
        view = memoryview(data)[written:]
        while view:
            view = view[os.write(fd, view) :]
