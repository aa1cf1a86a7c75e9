"""Listing session folders again and again without re-reading them: a SessionInfo cache per file.

A session picker lists a folder, then lists it again on every keystroke of a search; pi reads
every file each time (2 s for 1,000 files, 154 MB). This cache remembers, per file, what
:class:`~pi_lsp.session.listing.InfoScan` learnt from it, keyed by the file's identity and state:

* device, inode, size, mtime and ctime all unchanged: the cached SessionInfo, without opening it;
* same device and inode, larger, mtime not older, and the bytes at the start and just before
  the last complete line read still the same (a fingerprint): only the bytes appended since are
  read, and the scan resumes there;
* anything else (shrunk, replaced by another file, mtime moved back, rewritten): read again whole.

A last line without its line feed (a writer mid-append) counts for the answer, as in a full read,
but the scan resumes before it. Results equal :func:`~pi_lsp.session.listing.list_sessions`.

The cache is kept in memory per folder and persisted (``list_cache_disk``) so that a fresh server
starts warm. Session files are only ever read.
"""

from __future__ import annotations

import hashlib
import os
import threading
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Protocol

from pi_lsp.regular_files import open_regular
from pi_lsp.session.listing import InfoScan, SessionInfo, newest_first, project_folders

# The fingerprint covers this many bytes at the start of the file and before the resume offset.
FINGERPRINT_BYTES = 4096


@dataclass(frozen=True, slots=True)
class CachedFile:
    """What one session file held when it was last read. Never mutated (shared with the writer)."""

    dev: int
    ino: int
    size: int  # bytes read
    mtime_ns: int
    ctime_ns: int
    mtime: float  # st_mtime, for a session without any timestamp
    offset: int  # the scan covers data[:offset], complete lines only
    fingerprint: bytes  # of the file before offset (see _file_fingerprint())
    scan: InfoScan
    info: SessionInfo | None  # of the whole data[:size]; None: not a session

    def unchanged(self, st: os.stat_result) -> bool:
        return (
            st.st_size == self.size
            and st.st_mtime_ns == self.mtime_ns
            and st.st_ctime_ns == self.ctime_ns
            and st.st_ino == self.ino
            and st.st_dev == self.dev
        )

    def may_resume(self, st: os.stat_result) -> bool:
        """The file may have grown by appends only (the fingerprint decides). A file of the same
        size with other times was changed some other way (rewritten in place, touched): read it
        again whole."""
        return (
            st.st_ino == self.ino
            and st.st_dev == self.dev
            and st.st_size > self.size
            and st.st_mtime_ns >= self.mtime_ns
        )


def _fingerprint_ranges(offset: int) -> tuple[tuple[int, int], tuple[int, int]]:
    head = min(offset, FINGERPRINT_BYTES)
    return (0, head), (max(0, offset - FINGERPRINT_BYTES), offset)


def _file_fingerprint(fd: int, offset: int) -> bytes:
    """A digest of the first and the last few KB before ``offset`` in the file (and of ``offset``)."""
    digest = hashlib.blake2b(offset.to_bytes(8, "little"), digest_size=16)
    for start, end in _fingerprint_ranges(offset):
        digest.update(_read_range(fd, start, end))
    return digest.digest()


def _read_range(fd: int, start: int, end: int) -> bytes:
    """``end - start`` bytes at ``start`` (fewer only at the end of the file)."""
    parts: list[bytes] = []
    position = start
    while position < end:
        chunk = os.pread(fd, min(end - position, 1 << 30), position)
        if not chunk:
            break
        parts.append(chunk)
        position += len(chunk)
    return parts[0] if len(parts) == 1 else b"".join(parts)


def read_file(path: str, previous: CachedFile | None) -> CachedFile | None:
    """The file's entry, resuming ``previous`` where it may; None when it cannot be read."""
    try:
        with open_regular(path) as handle:
            fd = handle.fileno()
            st = os.fstat(fd)
            if previous is not None and previous.unchanged(st):
                return previous
            if (
                previous is not None
                and previous.may_resume(st)
                and _file_fingerprint(fd, previous.offset) == previous.fingerprint
            ):
                start, scan = previous.offset, previous.scan.copy()
            else:
                start, scan = 0, InfoScan()
            offset, last = scan.feed_file(handle, start, st.st_size)
            digest = _file_fingerprint(fd, offset)
    except OSError:
        return None
    whole = scan
    if last is not None:  # a last line without its line feed yet
        whole = scan.copy()
        whole.feed(last)
    return CachedFile(
        dev=st.st_dev,
        ino=st.st_ino,
        size=st.st_size,
        mtime_ns=st.st_mtime_ns,
        ctime_ns=st.st_ctime_ns,
        mtime=st.st_mtime,
        offset=offset,
        fingerprint=digest,
        scan=scan,
        info=whole.info(path, st.st_mtime * 1000),
    )


@dataclass(eq=False)
class Folder:
    """The cached files of one session folder (by file name), under its own lock."""

    files: dict[str, CachedFile] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)
    loaded: bool = False  # the persisted cache was consulted


class SessionListCache:
    """Lists session folders as ``listing.list_sessions`` does, re-reading only what changed.

    Thread-safe: each folder is listed under its own lock. With a ``store`` (``list_cache_disk``)
    a folder's entries are loaded from disk on its first listing and saved after a change.
    """

    def __init__(self, store: FolderStore | None = None) -> None:
        self.store = store
        self._folders: dict[str, Folder] = {}
        self._lock = threading.Lock()

    def _folder(self, key: str) -> Folder:
        with self._lock:
            folder = self._folders.get(key)
            if folder is None:
                folder = self._folders[key] = Folder()
            return folder

    def list_folder(self, directory: Path | str) -> list[SessionInfo]:
        """Sessions of one folder, newest ``modified`` first (pi's ``SessionManager.list``)."""
        return newest_first(self._infos(Path(directory)))

    def list_all(self, agent_dir: Path | None = None) -> list[SessionInfo]:
        """Sessions of every project under the sessions root (pi's ``listAll``)."""
        infos: list[SessionInfo] = []
        for folder in project_folders(agent_dir):
            infos.extend(self._infos(folder))
        return newest_first(infos)

    def _infos(self, directory: Path) -> list[SessionInfo]:
        base = str(directory)
        key = os.path.abspath(base)
        prefix = os.path.join(base, "")  # + name: os.path.join(base, name) without its cost
        folder = self._folder(key)
        with folder.lock:
            if not folder.loaded:
                folder.loaded = True
                if self.store is not None:
                    folder.files = self.store.load(key)
            before = folder.files
            files: dict[str, CachedFile] = {}
            infos: list[SessionInfo] = []
            changed = False
            try:
                entries = list(os.scandir(directory))
            except OSError:
                entries = []
            for entry in entries:
                name = entry.name
                if not name.endswith(".jsonl"):
                    continue
                try:
                    if not entry.is_file():
                        continue
                    st = entry.stat()
                except OSError:
                    continue
                previous = cached = before.get(name)
                if cached is None or not cached.unchanged(st):
                    cached = read_file(prefix + name, previous)
                    if cached is None:
                        changed = changed or previous is not None
                        continue
                    changed = changed or cached is not previous
                info = cached.info
                if info is not None:
                    if info.path != prefix + name:  # the folder named another way (relative, a link)
                        info = info.at_path(prefix + name)
                        cached = replace(cached, info=info)  # kept, so it is made once per naming
                    infos.append(info)
                files[name] = cached
            changed = changed or len(files) != len(before)
            folder.files = files
            if changed and self.store is not None:
                self.store.save_later(key, files)
        return infos

    def close(self, timeout: float = 5.0) -> None:
        """Let pending saves finish (up to ``timeout`` seconds); the cache stays usable."""
        if self.store is not None:
            self.store.flush(timeout)


class FolderStore(Protocol):
    """Where a :class:`SessionListCache` persists folders (``list_cache_disk.DiskStore``)."""

    def load(self, directory: str) -> dict[str, CachedFile]: ...

    def save_later(self, directory: str, files: dict[str, CachedFile]) -> None: ...

    def flush(self, timeout: float) -> None: ...
