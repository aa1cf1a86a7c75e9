"""Opening a folder one component at a time without following symlinks, creating missing ones.

The editing tools write the real path that the approval policy judged (``targets.py``). Opening it
by name would let the kernel follow any symlink put in its place after the check, so the folder is
reached from ``/`` with ``openat(…, O_NOFOLLOW | O_DIRECTORY)`` per component, and folders that
``write`` creates are made with ``mkdirat`` in the folder just opened: nothing is read, created or
written through a symlink. Operations on the file itself then use the folder's descriptor
(``dir_fd``) and ``O_NOFOLLOW``.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat

from pi_lsp.regular_files import check_regular

_FOLDER_FLAGS = getattr(os, "O_PATH", os.O_RDONLY) | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


class SymlinkInPath(Exception):
    """A component of a path that should have none is a symbolic link (or ``.``/``..``)."""

    def __init__(self, component: str) -> None:
        super().__init__(component)
        self.component = component


def _open_component(parent_fd: int, name: str, walked: str, create: bool) -> int:
    try:
        return os.open(name, _FOLDER_FLAGS, dir_fd=parent_fd)
    except FileNotFoundError:
        if not create:
            raise
    try:
        os.mkdir(name, 0o777, dir_fd=parent_fd)
    except FileExistsError:
        pass  # made meanwhile by someone else: opened and checked below like any folder
    except OSError as error:
        raise OSError(error.errno, error.strerror, walked) from error
    return os.open(name, _FOLDER_FLAGS, dir_fd=parent_fd)


def _explain(parent_fd: int, name: str, walked: str, error: OSError) -> Exception:
    """A symlink where a folder should be is :class:`SymlinkInPath`; else the error, naming ``walked``."""
    with contextlib.suppress(OSError):
        if stat.S_ISLNK(os.stat(name, dir_fd=parent_fd, follow_symlinks=False).st_mode):
            return SymlinkInPath(walked)
    return OSError(error.errno, error.strerror, walked)


def open_folder(path: str, *, create: bool = False) -> int:
    """A descriptor (the caller closes it) of the absolute folder ``path``, reached without
    following any symlink.

    ``create``: missing folders are made (``mkdir -p``). Raises :class:`SymlinkInPath` when a
    component is a symlink, else the ``OSError`` of the failing component (``filename`` is that
    component's path: ``ENOENT`` missing, ``ENOTDIR`` not a folder).
    """
    if not os.path.isabs(path):
        raise ValueError(f"not an absolute path: {path}")
    fd = os.open(os.sep, _FOLDER_FLAGS)
    walked = os.sep
    try:
        for name in (part for part in path.split(os.sep) if part):
            walked = os.path.join(walked, name)
            if name in (os.curdir, os.pardir):
                raise SymlinkInPath(walked)
            try:
                child = _open_component(fd, name, walked, create)
            except OSError as error:
                if error.filename == walked:
                    raise
                raise _explain(fd, name, walked, error) from error
            os.close(fd)
            fd = child
    except BaseException:
        os.close(fd)
        raise
    return fd


def entry_info(folder_fd: int, name: str) -> os.stat_result | None:
    """``lstat`` of ``name`` in the folder; None when there is no such entry."""
    try:
        return os.stat(name, dir_fd=folder_fd, follow_symlinks=False)
    except FileNotFoundError:
        return None


def read_entry(folder_fd: int, name: str, path: str) -> tuple[bytes, os.stat_result]:
    """The bytes of the regular file ``name`` in the folder, and its stat; a symlink there is
    :class:`SymlinkInPath`, anything else but a regular file a ``FileProblem`` (``path``: the
    file's full path, for messages)."""
    try:
        fd = os.open(name, _READ_FLAGS, dir_fd=folder_fd)
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise SymlinkInPath(path) from error
        raise
    with os.fdopen(fd, "rb") as handle:
        info = check_regular(handle.fileno(), path)
        os.set_blocking(handle.fileno(), True)
        return handle.read(), info


def same_file(first: os.stat_result, second: os.stat_result | None) -> bool:
    """The same inode, unchanged in size and modification time."""
    return second is not None and (first.st_dev, first.st_ino, first.st_size, first.st_mtime_ns) == (
        second.st_dev,
        second.st_ino,
        second.st_size,
        second.st_mtime_ns,
    )
