"""The session-list cache on disk, so that a fresh server lists a known folder without reading it.

One file per session folder: ``<agentDir>/pi-lsp/list-cache/<hash of the folder's path>.json``,
beside pi's ``sessions/`` (pi reads only ``sessions/``, so it never sees these files) and next to
pi-lsp's other per-user state (``pi-lsp/leaves``); the folder is created ``0700`` since the cache
holds message text. The file is orjson: ``{format, version, directory, files: [row, ...]}``.

Several servers may share it. Each one writes a whole file to a temp file and renames it over the
old one, so a reader sees one complete version; the last writer wins, and what it lost is only
re-read later. A file that is unreadable, corrupt, partial, of another format version or another
folder (a hash clash) is ignored, row by row where only some rows are bad. Saving happens on a
background thread, at most once a second per folder, so a listing never waits for it.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import threading
import time
from pathlib import Path
from typing import Any

import orjson

from pi_lsp.agent_dir import agent_dir
from pi_lsp.atomic_file import TEMP_SUFFIX, replace_atomically
from pi_lsp.regular_files import open_regular
from pi_lsp.session.list_cache import CachedFile
from pi_lsp.session.listing import NOT_SESSION, PENDING, SESSION, InfoScan

log = logging.getLogger(__name__)

FORMAT = "pi-lsp-session-list"
VERSION = 2
ROW_LENGTH = 20
# A cache bigger than this is not read (a folder of sessions holding ~5 GB of message text).
MAX_CACHE_BYTES = 1 << 30
# The JSON line before the texts (about 300 bytes a file): a cache with a longer one is not read.
MAX_HEADER_BYTES = 1 << 28
# Saves of one folder are at least this many seconds apart (a session being appended to during
# a search as you type would otherwise rewrite the cache on every keystroke).
SAVE_INTERVAL = 1.0
# Temp files older than this (left by a killed process) are removed when saving.
STALE_TEMP_SECONDS = 3600.0


def default_cache_dir() -> Path:
    """``<agentDir>/pi-lsp/list-cache``."""
    return agent_dir() / "pi-lsp" / "list-cache"


def cache_file(cache_dir: Path, directory: str) -> Path:
    digest = hashlib.blake2b(os.fsencode(directory), digest_size=16).hexdigest()
    return cache_dir / f"{digest}.json"


def _row(name: str, cached: CachedFile, text_offset: int) -> list[Any]:
    scan = cached.scan
    return [
        name,
        cached.dev,
        cached.ino,
        cached.size,
        cached.mtime_ns,
        cached.ctime_ns,
        cached.mtime,
        cached.offset,
        cached.fingerprint.hex(),
        scan.state,
        scan.id,
        scan.cwd,
        scan.parent,
        scan.created_ms,
        scan.name,
        scan.message_count,
        scan.first_message,
        text_offset,
        len(scan.text),
        scan.modified,
    ]


def _is_int(value: Any) -> bool:
    return type(value) is int and value >= 0


def _is_number(value: Any) -> bool:
    return type(value) in (int, float)


def _optional_str(value: Any) -> bool:
    return value is None or type(value) is str


def _entry(directory: str, row: Any, texts: memoryview) -> tuple[str, CachedFile] | None:
    """The entry a row describes, or None when the row is not exactly what :func:`_row` writes."""
    if type(row) is not list or len(row) != ROW_LENGTH:
        return None
    name, dev, ino, size, mtime_ns, ctime_ns, mtime, offset, print_hex, state = row[:10]
    scan_id, cwd, parent, created_ms, session_name, count, first, text_at, text_length, modified = row[10:]
    if not (
        type(name) is str
        and name.endswith(".jsonl")
        and "/" not in name
        and all(_is_int(v) for v in (dev, ino, size, mtime_ns, ctime_ns, offset, count, text_at, text_length))
        and offset <= size
        and text_at + text_length <= len(texts)
        and _is_number(mtime)
        and type(print_hex) is str
        and state in (PENDING, SESSION, NOT_SESSION)
        and type(state) is int
        and all(type(v) is str for v in (scan_id, cwd, first))
        and _optional_str(parent)
        and _optional_str(session_name)
        and (created_ms is None or _is_number(created_ms))
        and _is_number(modified)
    ):
        return None
    text = bytes(texts[text_at : text_at + text_length])
    try:
        digest = bytes.fromhex(print_hex)
        text.decode("utf-8", "surrogatepass")  # what SessionInfo.all_messages_text will do
    except ValueError:  # UnicodeDecodeError included
        return None
    scan = InfoScan(
        state=state,
        id=scan_id,
        cwd=cwd,
        parent=parent,
        created_ms=created_ms,
        name=session_name,
        message_count=count,
        first_message=first,
        text=text,
        modified=float(modified),
    )
    if offset < size:
        # What followed the last line feed was not kept: claim only the complete lines, so the
        # next listing reads the rest again (size grew "since").
        size = offset
    path = os.path.join(directory, name)
    info = scan.info(path, float(mtime) * 1000)
    return name, CachedFile(
        dev=dev,
        ino=ino,
        size=size,
        mtime_ns=mtime_ns,
        ctime_ns=ctime_ns,
        mtime=float(mtime),
        offset=offset,
        fingerprint=digest,
        scan=scan,
        info=info,
    )


def _encode(document: dict[str, Any]) -> bytes:
    try:
        return orjson.dumps(document)
    except TypeError:  # a lone surrogate in some text: leave those files out (read again next time)
        rows = []
        for row in document["files"]:
            with contextlib.suppress(TypeError):
                orjson.dumps(row)
                rows.append(row)
        return orjson.dumps({**document, "files": rows})


class DiskStore:
    """Loads and saves folders' cached files under ``cache_dir`` (a ``list_cache.FolderStore``)."""

    def __init__(self, cache_dir: Path | None = None, save_interval: float = SAVE_INTERVAL) -> None:
        self.cache_dir = cache_dir if cache_dir is not None else default_cache_dir()
        self.save_interval = save_interval
        self._pending: dict[str, dict[str, CachedFile]] = {}
        self._last_save: dict[str, float] = {}
        self._condition = threading.Condition()
        self._writer: threading.Thread | None = None
        self._busy = False

    # ------------------------------------------------------------------ reading

    def load(self, directory: str) -> dict[str, CachedFile]:
        """The entries saved for ``directory``; empty when there is no usable cache file."""
        try:
            with open_regular(cache_file(self.cache_dir, directory), max_bytes=MAX_CACHE_BYTES) as handle:
                content = handle.read()
            split = content.find(b"\n", 0, MAX_HEADER_BYTES)
            raw = memoryview(content)
            if split < 0:
                raise ValueError("no header line")
            data = orjson.loads(raw[:split])
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as error:  # orjson.JSONDecodeError is a ValueError
            log.info("session-list cache for %s not used: %s", directory, error)
            return {}
        if (
            type(data) is not dict
            or data.get("format") != FORMAT
            or data.get("version") != VERSION
            or data.get("directory") != directory
            or type(data.get("files")) is not list
        ):
            return {}
        files: dict[str, CachedFile] = {}
        texts = raw[split + 1 :]
        for row in data["files"]:
            entry = _entry(directory, row, texts)
            if entry is not None:
                files[entry[0]] = entry[1]
        return files

    # ------------------------------------------------------------------ writing

    def save_later(self, directory: str, files: dict[str, CachedFile]) -> None:
        """Save ``files`` for ``directory`` soon, on the writer thread (newer calls replace it)."""
        with self._condition:
            self._pending[directory] = files
            if self._writer is None or not self._writer.is_alive():
                self._writer = threading.Thread(
                    target=self._write_loop, name="list-cache-writer", daemon=True
                )
                self._writer.start()
            self._condition.notify_all()

    def flush(self, timeout: float) -> None:
        """Wait up to ``timeout`` seconds for every pending save (no interval wait then)."""
        deadline = time.monotonic() + timeout
        with self._condition:
            self._last_save.clear()
            self._condition.notify_all()
            while self._pending or self._busy:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return
                self._condition.wait(remaining)

    def _write_loop(self) -> None:
        while True:
            with self._condition:
                directory, files = self._next_due()
                if directory is None:
                    return
                self._busy = True
            try:
                self.save(directory, files)
            finally:
                with self._condition:
                    self._busy = False
                    self._last_save[directory] = time.monotonic()
                    self._condition.notify_all()

    def _next_due(self) -> tuple[str | None, dict[str, CachedFile]]:
        """The next folder whose interval has passed, waiting for one; None when none is pending."""
        while self._pending:
            now = time.monotonic()
            waits = []
            for directory in self._pending:
                due = self._last_save.get(directory, -self.save_interval) + self.save_interval
                if due <= now:
                    return directory, self._pending.pop(directory)
                waits.append(due - now)
            self._condition.wait(min(waits))
        return None, {}

    def save(self, directory: str, files: dict[str, CachedFile]) -> None:
        """Write ``directory``'s cache file now: a temp file renamed over the old one."""
        rows, texts, position = [], [], 0
        for name, cached in files.items():
            rows.append(_row(name, cached, position))
            texts.append(cached.scan.text)
            position += len(cached.scan.text)
        document = {"format": FORMAT, "version": VERSION, "directory": directory, "files": rows}
        target = cache_file(self.cache_dir, directory)
        try:
            data = _encode(document) + b"\n" + b"".join(texts)
            self.cache_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
            replace_atomically(target, data)
        except (OSError, TypeError, ValueError) as error:
            log.info("session-list cache for %s not saved: %s", directory, error)
        self._remove_stale_temps()

    def _remove_stale_temps(self) -> None:
        cutoff = time.time() - STALE_TEMP_SECONDS
        with contextlib.suppress(OSError), os.scandir(self.cache_dir) as entries:
            for entry in entries:
                if entry.name.startswith(".") and entry.name.endswith(TEMP_SUFFIX):
                    with contextlib.suppress(OSError):
                        if entry.stat(follow_symlinks=False).st_mtime < cutoff:
                            os.unlink(entry.path)
