"""Crash-safe file writes: locked single-``write`` appends and atomic whole-file replacement.

Every append is one ``write`` of complete lines on an ``O_APPEND`` descriptor under an exclusive
advisory lock, so concurrent writers (two editors, our server and pi's CLI) interleave whole lines.
A torn last line left by a crash is isolated: the append starts with a newline when the file does
not end with one. Rewrites go to a temp file that is fsynced and renamed over the original.

Appends to a session file we already wrote go through a :class:`HeldAppend`: the descriptor stays
open between appends (opening the file each time cost more than the write), and the checks that
the path still names our file are made under the lock with one ``stat``.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import time
import weakref
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

from pi_lsp.fileerrors import TIMEOUT, FileProblem, naming, with_path
from pi_lsp.full_writes import write_all
from pi_lsp.regular_files import check_regular
from pi_lsp.session.errors import SessionFileConflictError


class AppendResult(NamedTuple):
    """Where the written lines landed: ``start`` is the offset of the first written line."""

    size_before: int
    start: int
    end: int


class FileChangedError(Exception):
    """The file is not the one we wrote any more (deleted, replaced, cut short, header gone)."""


# How long a write waits for another writer's lock on the file (a healthy append holds it for
# microseconds; a writer that hung while holding it must not hold our worker for good).
LOCK_TIMEOUT = 10.0
_LOCK_NOW = fcntl.LOCK_EX | fcntl.LOCK_NB


def _lock_within(fd: int, path: Path | str, timeout: float) -> None:
    """The exclusive lock on ``fd``, or FileProblem (reason ``timeout``) after ``timeout`` seconds.

    The clock is read only once the lock is found taken (every append comes here, and the lock
    is nearly always free)."""
    deadline: float | None = None
    pause = 0.001
    while True:
        try:
            fcntl.flock(fd, _LOCK_NOW)
            return
        except BlockingIOError:
            now = time.monotonic()
            if deadline is None:
                deadline = now + timeout
            elif now >= deadline:
                raise FileProblem(
                    str(path), TIMEOUT, f"{path} stayed locked by another writer for {timeout:g} s"
                ) from None
            time.sleep(pause)
            pause = min(pause * 2, 0.05)


_APPEND_FLAGS = os.O_RDWR | os.O_APPEND | os.O_NONBLOCK | os.O_CLOEXEC


@contextlib.contextmanager
def _locked_append_fd(path: Path) -> Iterator[int]:
    """An O_APPEND descriptor holding the lock on the inode that ``path`` names right now (created
    when missing)."""
    while True:
        fd = os.open(path, _APPEND_FLAGS | os.O_CREAT, 0o644)
        try:
            check_regular(fd, path)
            os.set_blocking(fd, True)
            _lock_within(fd, path, LOCK_TIMEOUT)
            # A rewrite may have renamed a new file over the path while we waited.
            try:
                same = os.stat(path).st_ino == os.fstat(fd).st_ino
            except FileNotFoundError:
                same = False
            if same:
                try:
                    yield fd
                finally:
                    fcntl.flock(fd, fcntl.LOCK_UN)
                return
        finally:
            os.close(fd)


def _undo_partial_append(fd: int, size: int) -> None:
    """Cut off what a failed append wrote (disk full, file too large), so no torn line is left.

    Only our own bytes can be past ``size``: we hold the lock, and a writer that does not lock
    (pi) appends whole lines; if the file is shorter than it was, someone else cut it: leave it.
    """
    with contextlib.suppress(OSError):
        if os.fstat(fd).st_size > size:
            os.ftruncate(fd, size)


def _write_at_end(fd: int, size: int, data: bytes, fsync: bool, *, terminated: bool = False) -> AppendResult:
    """``data`` after the ``size`` bytes the locked file holds, in one write that starts with a
    newline when the last line is torn (``terminated``: known not to be); a failed write is undone."""
    start = size
    if size > 0 and not terminated and os.pread(fd, 1, size - 1) != b"\n":
        data = b"\n" + data
        start += 1
    try:
        write_all(fd, data)
    except OSError:
        _undo_partial_append(fd, size)
        raise
    if fsync:
        os.fsync(fd)
    return AppendResult(size, start, size + len(data))


def append_lines(
    path: Path, data: bytes, *, fsync: bool = False, require_empty: bool = False
) -> AppendResult:
    """Append complete LF-terminated lines in one write; returns where they landed.

    ``require_empty`` is used for the first flush of a new session: the file must not have gained
    content (other than whitespace) since, or the write is refused rather than mixing two sessions.
    """
    assert data.endswith(b"\n")
    with naming(path), _locked_append_fd(path) as fd:
        size = os.fstat(fd).st_size
        if require_empty and not _blank(fd, size):
            raise SessionFileConflictError(f"{path} was created by someone else before our first write")
        return _write_at_end(fd, size, data, fsync)


def _blank(fd: int, size: int, chunk: int = 1 << 20) -> bool:
    """Whether the first ``size`` bytes are whitespace only, read a chunk at a time (a gigabyte
    another program wrote there is not read whole to find its first character)."""
    return all(not os.pread(fd, min(chunk, size - start), start).strip() for start in range(0, size, chunk))


_NOATIME = getattr(os, "O_NOATIME", 0)


def _open_without_atime(path: str, flags: int) -> int:
    """``os.open`` asking that our reads leave the access time alone: the header check of every
    append is a read, and after a write (with ``relatime``) each such read would update the access
    time, dirtying the inode again (measured 1.5 µs a read, 0.66 µs without). The kernel allows
    this only to the file's owner; for anyone else the file is opened as usual."""
    if _NOATIME:
        try:
            return os.open(path, flags | _NOATIME)
        except PermissionError:
            pass
    return os.open(path, flags)


class HeldAppend:
    """An ``O_APPEND`` descriptor of one session file, kept open between appends.

    It is bound to the inode we wrote. Each :meth:`append` still takes the lock and checks under it
    that the path names that inode (a ``stat``, which also gives the size), that the file did not
    shrink below what we know and that our header is where we left it; so a file deleted, moved
    away, replaced or cut short is noticed (FileChangedError, nothing written) as when the file was
    opened for every append. The descriptor is closed by :meth:`close` or when this is collected.
    """

    __slots__ = ("__weakref__", "_close", "_our_end", "device", "fd", "inode", "path")

    def __init__(self, path: str, inode: int) -> None:
        try:
            fd = _open_without_atime(path, _APPEND_FLAGS)
        except FileNotFoundError:
            raise FileChangedError(f"{path} was deleted") from None
        except OSError as error:
            raise with_path(error, path) from None
        try:
            info = check_regular(fd, path)
            if info.st_ino != inode:
                raise FileChangedError(f"{path} is not the file this session wrote any more")
            os.set_blocking(fd, True)
        except BaseException:
            os.close(fd)
            raise
        self.path = path
        self.inode = inode
        self.device = info.st_dev
        self.fd = fd
        self._our_end = -1  # where our last write ended (on the newline we wrote), -1 before one
        self._close = weakref.finalize(self, os.close, fd)

    def close(self) -> None:
        self._close()

    def append(self, data: bytes, known: int, header_offset: int, header: bytes, fsync: bool) -> AppendResult:
        """Append complete LF-terminated lines in one write if the file is still the one we wrote:
        at least ``known`` bytes long, with our ``header`` line at ``header_offset``.

        Kept flat (one call for the checks and the write) because every append runs it."""
        fd, path = self.fd, self.path
        try:
            _lock_within(fd, path, LOCK_TIMEOUT)
            try:
                try:
                    now = os.stat(path)  # the path, not the descriptor: was it deleted, moved, replaced?
                except FileNotFoundError:
                    raise FileChangedError(f"{path} was deleted") from None
                size = now.st_size
                if (
                    now.st_ino != self.inode
                    or now.st_dev != self.device
                    or size < known
                    or os.pread(fd, len(header), header_offset) != header
                ):
                    raise FileChangedError(f"{path} is not the file this session wrote any more")
                # Nothing came after our own last line (same inode, same size): it ends with the
                # newline we wrote, so the torn-line check has nothing to read.
                result = _write_at_end(fd, size, data, fsync, terminated=size == self._our_end)
                self._our_end = result.end
                return result
            finally:
                fcntl.flock(fd, fcntl.LOCK_UN)
        except OSError as error:
            raise with_path(error, path) from None


def atomic_replace(path: Path, data: bytes, *, expect_size: int | None = None) -> None:
    """Replace ``path`` with ``data`` atomically: readers see the old or the new file, complete.

    With ``expect_size`` the replacement is refused when the file's size changed since it was read
    (someone appended meanwhile), so no concurrent append is ever dropped. When ``path`` is a
    symbolic link, the file it points to is replaced (the temp file is made next to it).
    """
    import tempfile  # on the first rewrite, not with every start (it loads random and hashlib)

    path = Path(os.path.realpath(path))  # through a symlink: replace the file it points to, not the link
    directory = path.parent
    with naming(path), _locked_append_fd(path) as fd:
        if expect_size is not None and os.fstat(fd).st_size != expect_size:
            raise SessionFileConflictError(f"{path} changed while it was being migrated; try again")
        handle, temp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=directory)
        try:
            write_all(handle, data)
            os.fsync(handle)
            os.fchmod(handle, os.fstat(fd).st_mode & 0o777)
        except BaseException:
            os.close(handle)
            os.unlink(temp_name)
            raise
        os.close(handle)
        try:
            os.replace(temp_name, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temp_name)
            raise
    with contextlib.suppress(OSError):
        dir_fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)


def write_new_file(path: Path, data: bytes) -> None:
    """Create ``path`` with ``data`` atomically (used by fork and branch-to-new-session)."""
    with naming(path):
        _write_new_file(path, data)


def _write_new_file(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    import tempfile

    handle, temp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        write_all(handle, data)
        os.fsync(handle)
        os.fchmod(handle, 0o644)
    except BaseException:
        os.close(handle)
        os.unlink(temp_name)
        raise
    os.close(handle)
    try:
        os.link(temp_name, path)  # fails instead of overwriting an existing file
    finally:
        os.unlink(temp_name)
