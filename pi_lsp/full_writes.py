"""Writing a whole buffer to a file descriptor, however many ``write`` calls that takes.

``os.write`` (and a raw ``FileIO``, which is what ``sys.stdout.buffer`` is when
``PYTHONUNBUFFERED`` is set, as in many containers and editor launch configurations) may take only
part of a buffer: a pipe whose reader is slower than the writer, interrupted by a signal, returns
the count written so far. Dropping the rest tears the stream: an editor waiting for a 30 MB answer
got its first 130 KB and then nothing, forever. Every protocol output and every append goes
through :func:`write_all`; the command line's text output through a buffered layer that does
the same (:func:`whole_text_stdout`).
"""

from __future__ import annotations

import io
import os
import sys
from collections.abc import Sequence

__all__ = ["whole_text_stdout", "write_all", "write_all_pieces"]

_IOV_MAX = 1024
"""The most buffers one ``writev`` takes (Linux's ``IOV_MAX``)."""


def write_all(fd: int, data: bytes | bytearray | memoryview) -> None:
    """Write all of ``data`` to ``fd`` (blocking); an ``OSError`` leaves an unknown prefix written."""
    written = os.write(fd, data)
    if written < len(data):
        view = memoryview(data)[written:]
        while view:
            view = view[os.write(fd, view) :]


def write_all_pieces(fd: int, pieces: Sequence[bytes | memoryview]) -> None:
    """:func:`write_all` of the pieces in order, with ``writev`` (up to :data:`_IOV_MAX` at a time):
    a big answer made of many views is written without joining them first."""
    if not hasattr(os, "writev"):  # pragma: no cover - Windows
        for piece in pieces:
            write_all(fd, piece)
        return
    index = 0
    while index < len(pieces):
        batch = pieces[index : index + _IOV_MAX]
        written = os.writev(fd, batch)
        index += len(batch)
        for number, piece in enumerate(batch):  # a short write: the rest of this batch, piece by piece
            if written < len(piece):
                write_all(fd, memoryview(piece)[written:])
                for rest in batch[number + 1 :]:
                    write_all(fd, rest)
                break
            written -= len(piece)


def whole_text_stdout() -> None:
    """Under ``PYTHONUNBUFFERED`` (``-u``), ``sys.stdout`` writes straight to a raw file, and
    CPython's text layer drops what a partial write left (a Ctrl-Z while ``pi-lsp chat`` printed a
    long tool result lost all but the first few hundred KB). Put a buffered layer between, which
    writes the rest, flushing at each line and on every ``flush()`` as the unbuffered one did."""
    out = sys.stdout
    raw = getattr(out, "buffer", None)
    if not isinstance(out, io.TextIOWrapper) or not isinstance(raw, io.FileIO):
        return
    sys.stdout = io.TextIOWrapper(
        io.BufferedWriter(raw), encoding=out.encoding, errors=out.errors, line_buffering=True
    )
