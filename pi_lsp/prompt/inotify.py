"""One inotify descriptor and one thread for every flat (non-recursive) prompt watch, on Linux.

A thousand session roots with distinct cwds are a thousand directories to watch (each cwd for its
AGENTS.md, ``.pi`` and ``.agents``). Through ``watchdog`` each is an emitter thread of its own
(a thousand threads, 1-2 ms each to start, half of the first ``pi/getSystemPrompt``'s time); here
each is one ``inotify_add_watch`` call on a shared descriptor, read by one thread. Recursive
watches (skill trees, few) stay with ``watchdog``, which adds watches for new subfolders.

Events go to the same sink as the other backends, with ``watchdog``'s names for their kinds. A
watched directory that is deleted or moved away loses its watch (``IN_IGNORED``); it shows as
:meth:`FlatWatches.stale` until it is added again.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import logging
import os
import select
import struct
import sys
import threading
from collections.abc import Callable, Sequence

__all__ = ["FlatWatches", "flat_watches_available"]

log = logging.getLogger(__name__)

_IN_MODIFY = 0x2
_IN_CLOSE_WRITE = 0x8
_IN_MOVED_FROM = 0x40
_IN_MOVED_TO = 0x80
_IN_CREATE = 0x100
_IN_DELETE = 0x200
_IN_DELETE_SELF = 0x400
_IN_MOVE_SELF = 0x800
_IN_Q_OVERFLOW = 0x4000
_IN_IGNORED = 0x8000
_IN_ONLYDIR = 0x1000000
_IN_ISDIR = 0x40000000
_IN_NONBLOCK = os.O_NONBLOCK
_IN_CLOEXEC = os.O_CLOEXEC
_MASK = (
    _IN_MODIFY
    | _IN_CLOSE_WRITE
    | _IN_MOVED_FROM
    | _IN_MOVED_TO
    | _IN_CREATE
    | _IN_DELETE
    | _IN_DELETE_SELF
    | _IN_MOVE_SELF
    | _IN_ONLYDIR
)
_HEADER = struct.Struct("iIII")  # wd, mask, cookie, len (then len bytes of name)

Sink = Callable[[Sequence[str], "bool | None", str], None]


def _libc() -> ctypes.CDLL | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = _load_libc()
        if libc is None:
            return None
        libc.inotify_init1.argtypes = [ctypes.c_int]
        libc.inotify_add_watch.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]
        libc.inotify_rm_watch.argtypes = [ctypes.c_int, ctypes.c_int]
    except (OSError, AttributeError):
        return None
    return libc


def _load_libc() -> ctypes.CDLL | None:
    """glibc's ``libc.so.6`` by name; elsewhere (musl) what ``find_library`` finds. Not asked first:
    it runs ``ldconfig`` and its module imports ``tempfile`` (random, hashlib: ~5 ms of a start)."""
    try:
        return ctypes.CDLL("libc.so.6", use_errno=True)
    except OSError:
        pass
    from ctypes.util import find_library

    name = find_library("c")
    return ctypes.CDLL(name, use_errno=True) if name is not None else None


_LIBC = _libc()


def flat_watches_available() -> bool:
    """Whether this platform has inotify (Linux)."""
    return _LIBC is not None


def _kind(mask: int) -> str:
    if mask & (_IN_MOVED_FROM | _IN_MOVED_TO):
        return "moved"
    if mask & _IN_CREATE:
        return "created"
    if mask & (_IN_DELETE | _IN_DELETE_SELF | _IN_MOVE_SELF):
        return "deleted"
    if mask & _IN_CLOSE_WRITE:
        return "closed"
    return "modified"


class FlatWatches:
    """Non-recursive directory watches on one inotify descriptor, read by one daemon thread."""

    def __init__(self, sink: Sink) -> None:
        if _LIBC is None:
            raise OSError(errno.ENOSYS, "inotify is not available")
        self._libc = _LIBC
        self._sink = sink
        self._lock = threading.Lock()
        self._by_path: dict[str, int] = {}
        self._by_wd: dict[int, set[str]] = {}  # two paths of one folder (a symlink) share its wd
        self._lost: set[str] = set()
        self._fd = -1
        self._wake_r, self._wake_w = -1, -1
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        with self._lock:
            if self._thread is not None:
                return
            fd = self._libc.inotify_init1(_IN_NONBLOCK | _IN_CLOEXEC)
            if fd < 0:
                number = ctypes.get_errno()
                raise OSError(number, os.strerror(number))
            self._fd = fd
            self._wake_r, self._wake_w = os.pipe()
            self._thread = threading.Thread(target=self._read_loop, name="pi-prompt-inotify", daemon=True)
            self._thread.start()

    def stop(self) -> None:
        with self._lock:
            thread, self._thread = self._thread, None
            if thread is None:
                return
            os.write(self._wake_w, b"x")
        thread.join(timeout=5)
        with self._lock:
            for fd in (self._fd, self._wake_r, self._wake_w):
                with contextlib.suppress(OSError):
                    os.close(fd)
            self._fd = self._wake_r = self._wake_w = -1
            self._by_path.clear()
            self._by_wd.clear()
            self._lost.clear()

    def add(self, path: str) -> None:
        """Watch the directory ``path`` (its entries, not below); OSError when it cannot be."""
        with self._lock:
            if self._fd < 0:
                raise OSError(errno.EBADF, "the watcher is not started")
            wd = self._libc.inotify_add_watch(self._fd, os.fsencode(path), _MASK)
            if wd < 0:
                number = ctypes.get_errno()
                raise OSError(number, os.strerror(number), path)
            self._by_path[path] = wd
            self._by_wd.setdefault(wd, set()).add(path)
            self._lost.discard(path)

    def remove(self, path: str) -> None:
        with self._lock:
            wd = self._by_path.pop(path, None)
            self._lost.discard(path)
            if wd is None:
                return
            paths = self._by_wd.get(wd, set())
            paths.discard(path)
            if not paths and self._by_wd.pop(wd, None) is not None and self._fd >= 0:
                self._libc.inotify_rm_watch(self._fd, wd)

    def stale(self, path: str) -> bool:
        """Whether the watch of ``path`` was lost (its directory deleted or moved)."""
        with self._lock:
            return path in self._lost

    def _read_loop(self) -> None:
        fd, wake = self._fd, self._wake_r
        while True:
            try:
                ready, _, _ = select.select([fd, wake], [], [])
            except (OSError, ValueError):
                return
            if wake in ready:
                return
            try:
                data = os.read(fd, 64 * 1024)
            except BlockingIOError:
                continue
            except OSError:
                return
            try:
                self._deliver(data)
            except Exception:  # pragma: no cover - a bad event must not end the watching
                log.exception("inotify event handling failed")

    def _deliver(self, data: bytes) -> None:
        offset = 0
        while offset + _HEADER.size <= len(data):
            wd, mask, _cookie, length = _HEADER.unpack_from(data, offset)
            raw = data[offset + _HEADER.size : offset + _HEADER.size + length].rstrip(b"\0")
            offset += _HEADER.size + length
            if mask & _IN_Q_OVERFLOW:
                log.warning("inotify queue overflow: some prompt file changes may be missed")
                continue
            with self._lock:
                directories = sorted(self._by_wd.get(wd, ()))
                if directories and mask & _IN_IGNORED:
                    del self._by_wd[wd]
                    self._lost.update(d for d in directories if self._by_path.get(d) == wd)
            if not directories or mask & _IN_IGNORED:
                continue
            name = os.fsdecode(raw)
            paths = [os.path.join(directory, name) if raw else directory for directory in directories]
            self._sink(paths, bool(mask & _IN_ISDIR) if raw else True, _kind(mask))
