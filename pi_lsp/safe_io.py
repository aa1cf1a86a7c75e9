"""Reading whole files a workspace controls, with a size cap, for the prompt and settings.

A repository decides what its ``AGENTS.md``, ``SKILL.md``, ``SYSTEM.md``, ignore files and
``.pi/settings.json`` are: a FIFO (``open`` would wait for a writer forever), a link to
``/dev/zero`` (endless), a sparse file of many gigabytes. Every such file is read here:

* it must be a regular file: ``stat`` first (a device or FIFO is not even opened), then
  :func:`~pi_lsp.regular_files.open_regular` (``O_NONBLOCK`` open, ``fstat`` of the descriptor)
  in case the path was swapped in between;
* at most ``limit`` bytes are read; a larger file, or one that grows past the limit while being
  read, is rejected, never truncated.

A rejected file raises :class:`~pi_lsp.fileerrors.FileProblem` (reason ``notRegularFile`` or
``tooLarge``), an ``OSError``, so callers that already treat an unreadable file as "skip it and say
so" handle it the same way; :func:`read_error_message` words either kind for a diagnostic. Reads
still belong in worker threads: a file on a hung network mount can block any system call.
"""

from __future__ import annotations

import errno
import os
import stat

from pi_lsp.fileerrors import NOT_REGULAR_FILE, TOO_LARGE, FileProblem
from pi_lsp.jscompat import node_error_message
from pi_lsp.regular_files import open_regular

__all__ = ["MAX_SETTINGS_BYTES", "MAX_TEXT_BYTES", "read_bytes", "read_error_message", "read_text"]

MAX_TEXT_BYTES = 1 << 20
"""Context files, SYSTEM.md/APPEND_SYSTEM.md, SKILL.md and ignore files: 1 MiB, about 250,000
tokens, beyond any model's context window; a bigger file is a mistake or an attack."""

MAX_SETTINGS_BYTES = 1 << 20
"""settings.json: 1 MiB, a thousand times a generous real one."""


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def _too_large(path: str, limit: int, size: int | None = None) -> FileProblem:
    actual = f" ({size:,})" if size is not None else ""
    return FileProblem(path, TOO_LARGE, f"{path}: larger than {limit:,} bytes{actual}; not read")


def read_bytes(path: str, limit: int = MAX_TEXT_BYTES) -> bytes:
    """The whole content of the regular file ``path``, which must hold at most ``limit`` bytes.

    Raises ``FileNotFoundError`` and the other errors of ``open``, ``IsADirectoryError`` for a
    directory (what Node's ``readFileSync`` reports) and ``FileProblem`` for anything else that is
    not a regular file or is too large.
    """
    info = os.stat(path)
    if stat.S_ISDIR(info.st_mode):
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), path)
    if not stat.S_ISREG(info.st_mode):
        kind = _kind(info.st_mode)
        raise FileProblem(path, NOT_REGULAR_FILE, f"{path}: not a regular file ({kind}); not read")
    if info.st_size > limit:
        raise _too_large(path, limit, info.st_size)
    with open_regular(path, max_bytes=limit) as handle:
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise _too_large(path, limit)
    return data


def read_text(path: str, limit: int = MAX_TEXT_BYTES) -> str:
    """:func:`read_bytes` decoded as Node's ``readFileSync(path, "utf-8")`` does: invalid bytes
    become U+FFFD and a BOM is kept."""
    return read_bytes(path, limit).decode("utf-8", errors="replace")


def read_error_message(error: OSError, path: str, syscall: str = "open") -> str:
    """A diagnostic for a failed read: ``"<path>: not a regular file (a FIFO); not read"`` for a
    rejected file, Node's wording (``"EACCES: permission denied, open '<path>'"``) otherwise."""
    if isinstance(error, FileProblem):
        return error.message
    return node_error_message(error, syscall, path)
