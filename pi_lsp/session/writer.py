"""Crash-safe file writes: locked single-``write`` appends and atomic whole-file replacement.

Every append is one ``write`` of complete lines on an ``O_APPEND`` descriptor under an exclusive
advisory lock, so concurrent writers (two editors, our server and pi's CLI) interleave whole lines.
A torn last line left by a crash is isolated: the append starts with a newline when the file does
not end with one. Rewrites go to a temp file that is fsynced and renamed over the original.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from pi_lsp.fileerrors import TIMEOUT, FileProblem, naming
from pi_lsp.regular_files import check_regular
from pi_lsp.session.errors import SessionFileConflictError


@dataclass(frozen=True, slots=True)
class AppendResult:
    """Where the written lines landed: ``start`` is the offset of the first written line."""

    size_before: int
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class Expected:
    """What an append to a session file we already wrote expects to find there (checked under
    the lock): the same inode, at least the bytes we know of, and our header where we left it."""

    inode: int
    size: int
    header_offset: int
    header: bytes


class FileChangedError(Exception):
    """The file is not the one we wrote any more (deleted, replaced, cut short, header gone)."""


# How long a write waits for another writer's lock on the file (a healthy append holds it for
# microseconds; a writer that hung while holding it must not hold our worker for good).
LOCK_TIMEOUT = 10.0


def _lock_within(fd: int, path: Path, timeout: float) -> None:
    """The exclusive lock on ``fd``, or FileProblem (reason ``timeout``) after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    pause = 0.001
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() >= deadline:
                raise FileProblem(
                    str(path), TIMEOUT, f"{path} stayed locked by another writer for {timeout:g} s"
                ) from None
            time.sleep(pause)
            pause = min(pause * 2, 0.05)


@contextlib.contextmanager
def _locked_append_fd(path: Path, *, create: bool = True) -> Iterator[int]:
    """An O_APPEND descriptor holding the lock on the inode that ``path`` names right now."""
    flags = os.O_RDWR | os.O_APPEND | os.O_NONBLOCK | os.O_CLOEXEC | (os.O_CREAT if create else 0)
    while True:
        try:
            fd = os.open(path, flags, 0o644)
        except FileNotFoundError:
            if create:
                raise
            raise FileChangedError(f"{path} was deleted") from None
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


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _as_expected(fd: int, expect: Expected) -> bool:
    info = os.fstat(fd)
    if info.st_ino != expect.inode or info.st_size < expect.size:
        return False
    return os.pread(fd, len(expect.header), expect.header_offset) == expect.header


def _undo_partial_append(fd: int, size: int) -> None:
    """Cut off what a failed append wrote (disk full, file too large), so no torn line is left.

    Only our own bytes can be past ``size``: we hold the lock, and a writer that does not lock
    (pi) appends whole lines; if the file is shorter than it was, someone else cut it: leave it.
    """
    with contextlib.suppress(OSError):
        if os.fstat(fd).st_size > size:
            os.ftruncate(fd, size)


def append_lines(
    path: Path,
    data: bytes,
    *,
    fsync: bool = False,
    require_empty: bool = False,
    expect: Expected | None = None,
) -> AppendResult:
    """Append complete LF-terminated lines in one write; returns where they landed.

    ``require_empty`` is used for the first flush of a new session: the file must not have gained
    content (other than whitespace) since, or the write is refused rather than mixing two sessions.
    With ``expect`` the file must still be the one we wrote (else FileChangedError, nothing written).
    """
    assert data.endswith(b"\n")
    with naming(path), _locked_append_fd(path, create=expect is None) as fd:
        size = os.fstat(fd).st_size
        if expect is not None and not _as_expected(fd, expect):
            raise FileChangedError(f"{path} is not the file this session wrote any more")
        if require_empty and size > 0 and os.pread(fd, size, 0).strip():
            raise SessionFileConflictError(f"{path} was created by someone else before our first write")
        prefix = b""
        if size > 0 and os.pread(fd, 1, size - 1) != b"\n":
            prefix = b"\n"
        try:
            _write_all(fd, prefix + data)
        except OSError:
            _undo_partial_append(fd, size)
            raise
        if fsync:
            os.fsync(fd)
        return AppendResult(size, size + len(prefix), size + len(prefix) + len(data))


def atomic_replace(path: Path, data: bytes, *, expect_size: int | None = None) -> None:
    """Replace ``path`` with ``data`` atomically: readers see the old or the new file, complete.

    With ``expect_size`` the replacement is refused when the file's size changed since it was read
    (someone appended meanwhile), so no concurrent append is ever dropped. When ``path`` is a
    symbolic link, the file it points to is replaced (the temp file is made next to it).
    """
    path = Path(os.path.realpath(path))  # through a symlink: replace the file it points to, not the link
    directory = path.parent
    with naming(path), _locked_append_fd(path) as fd:
        if expect_size is not None and os.fstat(fd).st_size != expect_size:
            raise SessionFileConflictError(f"{path} changed while it was being migrated; try again")
        handle, temp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=directory)
        try:
            _write_all(handle, data)
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
    handle, temp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        _write_all(handle, data)
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
