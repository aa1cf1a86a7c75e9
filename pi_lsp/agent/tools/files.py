"""Reading and replacing whole files the way the editing tools need: node's decoding, atomic writes.

pi writes with ``fs.writeFile`` (truncate, then write). We write a temporary file next to the real
target and rename it over, so a crash or a full disk never leaves the user's file half written;
the file keeps its permission bits, and a symlink keeps pointing at the file it named (we write
its target, :class:`~pi_lsp.agent.tools.targets.FileTarget`). The target's folder is reached
without following symlinks (``nofollow.py``) and the file is read and replaced through that
folder's descriptor, so what is written is exactly the real path that was checked.
"""

from __future__ import annotations

import errno
import os
import re
import stat
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from pi_lsp.agent.tools.base import ToolError
from pi_lsp.agent.tools.nofollow import SymlinkInPath, entry_info, open_folder, read_entry, same_file
from pi_lsp.agent.tools.targets import CHANGED, SYMLINKED, FileTarget, content_digest
from pi_lsp.atomic_file import TempFileError, replace_at
from pi_lsp.jscompat import node_error_message as node_message
from pi_lsp.regular_files import open_regular

_SURROGATE = re.compile("[\ud800-\udfff]")


def _default_mode() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


_NEW_FILE_MODE = _default_mode()


def encode_text(text: str) -> bytes:
    """UTF-8 as node writes a JS string: lone surrogates become U+FFFD."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return _SURROGATE.sub("\ufffd", text).encode("utf-8")


def decode_text(data: bytes) -> str:
    """``Buffer.toString("utf-8")``: invalid bytes become U+FFFD, a BOM is kept."""
    return data.decode("utf-8", "replace")


def symlinked(target: FileTarget, link: str) -> ToolError:
    return ToolError(SYMLINKED.format(path=target.requested, link=link, real=target.real))


@contextmanager
def held_folder(target: FileTarget, *, create: bool) -> Iterator[int]:
    """The folder of ``target.real``, opened without following symlinks.

    ``create``: missing folders are made, failures worded as node's ``mkdir -p`` of the requested
    path's folder (pi's ``write``); else a failure is node's ``open`` of the requested path.
    """
    folder = os.path.dirname(target.real)
    try:
        fd = open_folder(folder, create=create)
    except SymlinkInPath as error:
        raise symlinked(target, error.component) from error
    except OSError as error:
        if not create:
            raise ToolError(node_message(error, "open", target.requested)) from error
        if error.errno == errno.ENOTDIR and error.filename == folder:  # mkdir -p onto a file
            error = FileExistsError(errno.EEXIST, "File exists")
        raise ToolError(node_message(error, "mkdir", os.path.dirname(target.requested))) from error
    try:
        yield fd
    finally:
        os.close(fd)


def read_held(folder_fd: int, target: FileTarget) -> tuple[bytes, os.stat_result]:
    """The target's bytes and stat, read through its held folder (a symlink there is refused)."""
    try:
        return read_entry(folder_fd, os.path.basename(target.real), target.real)
    except SymlinkInPath as error:
        raise symlinked(target, error.component) from error


def current_content(folder_fd: int, target: FileTarget) -> tuple[str, os.stat_result | None]:
    """The digest of what the target holds now (``ABSENT`` when missing or unreadable) and its stat."""
    try:
        data, info = read_held(folder_fd, target)
    except OSError:  # what a preview reads as "no file" (read_for_diff)
        return content_digest(None), None
    return content_digest(data), info


def refuse_changed(approved: str | None, current: str, target: FileTarget, tool: str) -> None:
    """Fail with :data:`CHANGED` when the file no longer holds what the user approved."""
    if approved is not None and approved != current:
        raise ToolError(CHANGED.format(path=target.requested, tool=tool))


def replace_held(
    folder_fd: int, target: FileTarget, data: bytes, *, read: os.stat_result | None = None,
    tool: str = "write",
) -> None:  # fmt: skip
    """Write ``data`` to the target atomically through its held folder; errors worded as node's.

    ``read``: the stat of the content the change was computed from; if the file is no longer that
    one when the new content is ready, nothing is written (:data:`CHANGED`).
    """
    name = os.path.basename(target.real)
    path = target.requested
    info = entry_info(folder_fd, name)
    if info is not None and stat.S_ISLNK(info.st_mode):
        raise symlinked(target, target.real)
    if info is not None and stat.S_ISDIR(info.st_mode):
        raise ToolError(f"EISDIR: illegal operation on a directory, open '{path}'")
    if info is not None and not os.access(name, os.W_OK, dir_fd=folder_fd):
        raise ToolError(f"EACCES: permission denied, open '{path}'")
    mode = stat.S_IMODE(info.st_mode) if info is not None else _NEW_FILE_MODE
    check: Callable[[], None] | None = None
    if read is not None:

        def check() -> None:
            assert read is not None
            if not same_file(read, entry_info(folder_fd, name)):
                raise ToolError(CHANGED.format(path=path, tool=tool))

    try:
        replace_at(folder_fd, name, data, fsync=True, mode=mode, suffix=".pi-tmp", before_rename=check)
    except TempFileError as exc:
        raise ToolError(node_message(exc, "open", path)) from exc
    except OSError as exc:
        raise ToolError(node_message(exc, "write", path)) from exc


def write_file(target: FileTarget, data: bytes, *, approved: str | None = None) -> None:
    """``write``'s work: missing folders made, then ``data`` put at the target atomically.

    ``approved``: the content digest the user approved a diff against; a file that changed since
    is not overwritten (:data:`CHANGED`).
    """
    with held_folder(target, create=True) as folder_fd:
        read: os.stat_result | None = None
        if approved is not None:
            current, read = current_content(folder_fd, target)
            refuse_changed(approved, current, target, "write")
        replace_held(folder_fd, target, data, read=read)


def read_for_diff(path: str) -> bytes | None:
    """The file's bytes for a preview diff, or None when there is no readable regular file (a
    FIFO or a device, e.g. a symlink to ``/dev/zero``, is never read: it would block or not end)."""
    try:
        with open_regular(path) as handle:
            return handle.read()
    except OSError:
        return None
