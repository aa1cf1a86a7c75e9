"""The JSONL file one session lives in, and what this process knows about it.

:class:`SessionFile` owns everything about the bytes on disk: the path, whether the session has
been flushed yet (pi writes a session file only with its first assistant message), how far we
have read, the number of the next line, and the inode we read (to notice a file replaced by
another tool). :class:`~pi_lsp.session.store.SessionManager` owns the tree, the leaf and the
context view, and asks this class to write and to read what other writers appended.

Every write is one ``write`` of complete lines under an exclusive lock
(:func:`~pi_lsp.session.writer.append_lines`; later appends through a descriptor kept open,
:class:`~pi_lsp.session.writer.HeldAppend`), so writers in other processes interleave whole
lines; lines are numbered from 1 as in the file, blank lines included.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from enum import Enum
from pathlib import Path

from pi_lsp.fileerrors import FileProblem
from pi_lsp.regular_files import open_regular
from pi_lsp.session.jsonl import iter_lines, loads_line
from pi_lsp.session.loader import ReadResult, read_lines
from pi_lsp.session.writer import (
    FileChangedError,
    HeldAppend,
    append_lines,
    atomic_replace,
    write_new_file,
)


class FileReplacedError(Exception):
    """The path now names another file, or the file shrank: it must be read again whole."""


class OnDisk(Enum):
    """What the path of a session we had written holds now (see :meth:`SessionFile.inspect`)."""

    MISSING = "missing"  # deleted (or moved away)
    BLANK = "blank"  # emptied: nothing but whitespace
    SAME_SESSION = "same"  # a file whose header is this session's (rewritten, cut short, copied back)
    OTHER = "other"  # another session's file, or something that is not a session file


_BLANK_CHECK_BYTES = 1 << 20


class SessionFile:
    """Path, flush state and read position of a session's file (no tree, no entries)."""

    def __init__(self, path: str | None = None, *, fsync: bool = False) -> None:
        self.fsync = fsync
        self.path = path
        self.flushed = False
        self.read_offset = 0
        self.next_line = 1
        self.inode: int | None = None
        self.header_offset = 0  # where our header line is in the file, and its bytes
        self.header_raw = b""
        # Set when the path was taken over by another session (or non-session content): every
        # later write through this handle is refused with this error, the file is left alone.
        self.detached: FileProblem | None = None
        self._held: HeldAppend | None = None  # the open descriptor appends go through

    def close(self) -> None:
        """Close the descriptor kept open for appends (the next append opens it again)."""
        if self._held is not None:
            self._held.close()
            self._held = None

    def reset(self, path: str | None) -> None:
        """Bind to ``path`` as a file not written yet (a new session, or a new branch's file)."""
        self.close()
        self.path = path
        self.flushed = False
        self.read_offset = 0
        self.next_line = 1
        self.inode = None
        self.header_offset = 0
        self.header_raw = b""
        self.detached = None

    def adopt(self, read: ReadResult) -> None:
        """We read the whole existing file: later reads resume where ``read`` ended."""
        assert self.path is not None
        self.close()
        self.flushed = True
        self.read_offset = read.end_offset
        self.next_line = read.next_line
        self.inode = os.stat(self.path).st_ino
        self.header_offset = read.header_offset
        self.header_raw = read.header_raw
        self.detached = None

    # ------------------------------------------------------------------ writing

    def write_first(self, lines: Sequence[bytes]) -> None:
        """The first flush: header and every buffered line in one append to an empty file.

        Refused (SessionFileConflictError) when someone else gave the file content meanwhile.
        """
        assert self.path is not None
        data = b"\n".join(lines) + b"\n"
        result = append_lines(Path(self.path), data, fsync=self.fsync, require_empty=True)
        self.flushed = True
        self.inode = os.stat(self.path).st_ino
        self.read_offset = result.end
        self.next_line = len(lines) + 1
        self.header_offset = result.start
        self.header_raw = lines[0]

    def append_line(self, line: bytes) -> int:
        """Append one LF-terminated line; its line number, or 0 when other writers' lines came since
        our last read (they are read, and numbered, by :meth:`read_appended`)."""
        assert self.path is not None and self.flushed and self.inode is not None
        if self.detached is not None:
            raise self.detached
        held = self._held
        if held is None or held.path != self.path or held.inode != self.inode:
            self.close()
            held = self._held = HeldAppend(self.path, self.inode)
        try:
            result = held.append(line, self.read_offset, self.header_offset, self.header_raw, self.fsync)
        except FileChangedError:
            self.close()  # the recovery binds to whatever the path holds now
            raise
        if result.size_before != self.read_offset:
            return 0
        # A newline put before our line ends an unterminated last line: that is one more line.
        self.next_line += result.start - result.size_before
        self.read_offset = result.end
        number = self.next_line
        self.next_line += 1
        return number

    def write_new(self, path: str, lines: Sequence[bytes]) -> None:
        """Create ``path`` holding ``lines`` (it must not exist) and bind to it, flushed."""
        target = Path(path)
        data = b"\n".join(lines) + b"\n"
        write_new_file(target, data)
        self.path = path
        self._bind_written(lines, len(data))

    def rewrite(self, lines: Sequence[bytes], state: OnDisk) -> None:
        """Write the whole session again at our path, found MISSING or BLANK (nothing on disk is
        lost): a new file, or an atomic replacement of the blank one (through a symlink: its target).
        """
        assert self.path is not None and state in (OnDisk.MISSING, OnDisk.BLANK)
        data = b"\n".join(lines) + b"\n"
        target = Path(self.path)
        if state is OnDisk.MISSING:
            write_new_file(target, data)  # refused if a file appeared meanwhile
        else:
            atomic_replace(target, data, expect_size=os.stat(target).st_size)
        self._bind_written(lines, len(data))

    def _bind_written(self, lines: Sequence[bytes], size: int) -> None:
        assert self.path is not None
        self.close()
        self.flushed = True
        self.inode = os.stat(self.path).st_ino
        self.read_offset = size
        self.next_line = len(lines) + 1
        self.header_offset = 0
        self.header_raw = lines[0]
        self.detached = None

    def inspect(self, session_id: str) -> tuple[OnDisk, int | None]:
        """What our path holds now, and its inode (None when missing)."""
        assert self.path is not None
        try:
            handle = open_regular(self.path)
        except FileNotFoundError:
            return OnDisk.MISSING, None
        with handle:
            inode = os.fstat(handle.fileno()).st_ino
            head = handle.read(_BLANK_CHECK_BYTES)
            if not head.strip() and len(head) < _BLANK_CHECK_BYTES:
                return OnDisk.BLANK, inode
            handle.seek(0)
            for line in iter_lines(handle):
                if line is None:
                    continue  # longer than any line a session may hold: skipped like garbage
                try:
                    value = loads_line(line)
                except ValueError:
                    continue  # pi skips garbage before the header too
                header = isinstance(value, dict) and value.get("type") == "session"
                same = header and value.get("id") == session_id
                return (OnDisk.SAME_SESSION if same else OnDisk.OTHER), inode
        return OnDisk.OTHER, inode

    def detach(self, reason: str, message: str) -> FileProblem:
        """Refuse every later write through this handle (the path belongs to someone else now)."""
        assert self.path is not None
        self.close()
        self.detached = FileProblem(self.path, reason, message)
        return self.detached

    # ------------------------------------------------------------------ other writers

    def read_appended(self) -> ReadResult | None:
        """What other writers appended since our last read; None when nothing is new (or there is
        no file yet). Raises :class:`FileReplacedError` when the file must be reloaded whole."""
        if self.path is None or not self.flushed or self.detached is not None:
            return None
        path = Path(self.path)
        try:
            stat = path.stat()
        except FileNotFoundError:
            return None
        if stat.st_ino != self.inode or stat.st_size < self.read_offset:
            raise FileReplacedError(self.path)
        if stat.st_size == self.read_offset:
            return None
        read = read_lines(path, start=self.read_offset, first_line=self.next_line, expect_header=False)
        self.read_offset = read.end_offset
        self.next_line = read.next_line
        return read
