"""Session discovery: ``list``/``listAll`` with SessionInfo, and the most recent session.

:class:`InfoScan` reads a file's lines into what a SessionInfo needs and can resume after any
complete line, so ``list_cache`` re-reads only what was appended. Picker search: ``list_search``.
"""

from __future__ import annotations

import copy
import os
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, BinaryIO

from pi_lsp.agent_dir import sessions_root
from pi_lsp.jscompat import iso_to_ms
from pi_lsp.regular_files import open_regular
from pi_lsp.session.ids import format_iso
from pi_lsp.session.jsonl import LineBlock, LongLine, iter_lines, loads_line, read_line_blocks
from pi_lsp.session.paths import default_session_dir
from pi_lsp.session.records import text_of_content


@dataclass(slots=True)
class SessionInfo:
    """What a session picker shows (pi's ``SessionInfo``)."""

    path: str
    id: str
    cwd: str
    name: str | None
    parent_session_path: str | None
    created: str
    modified: str
    modified_ms: float
    message_count: int
    first_message: str
    # pi's allMessagesText as UTF-8 (a quarter of the memory of a str holding one emoji)
    messages_text: bytes
    # haystack().lower() as UTF-8, made on the first word search and kept while the info is
    _lowered: bytes | None = field(default=None, init=False, repr=False, compare=False)
    # the last words found not to be in it: typing "xylo" after "xyl" skips what lacked "xyl"
    _misses: tuple[str, ...] = field(default=(), init=False, repr=False, compare=False)

    def to_wire(self) -> dict[str, Any]:
        """The protocol's SessionInfo (optional fields omitted when absent)."""
        data: dict[str, Any] = {"path": self.path, "id": self.id, "cwd": self.cwd}
        if self.name is not None:
            data["name"] = self.name
        if self.parent_session_path is not None:
            data["parentSessionPath"] = self.parent_session_path
        data.update(
            created=self.created,
            modified=self.modified,
            messageCount=self.message_count,
            firstMessage=self.first_message,
        )
        return data

    def at_path(self, path: str) -> SessionInfo:
        """The same session reported at ``path`` (its folder named another way), search state kept."""
        moved = replace(self, path=path)
        moved._lowered, moved._misses = self._lowered, self._misses
        return moved

    @property
    def all_messages_text(self) -> str:
        """Every user and assistant message's text, joined with spaces (pi's ``allMessagesText``)."""
        return self.messages_text.decode("utf-8", "surrogatepass")

    def haystack(self) -> str:
        """The text a picker query is matched against: id, name, all message text, cwd."""
        return f"{self.id} {self.name or ''} {self.all_messages_text} {self.cwd}"

    def lowered_haystack(self) -> bytes:
        """``haystack().lower()`` as UTF-8, computed once per info (a 20 MB folder takes ~0.2 s).
        A UTF-8 needle is in it exactly where the text holds the needle's characters."""
        if self._lowered is None:
            self._lowered = utf8(self.haystack().lower())
        return self._lowered

    def has_word(self, word: str, encoded: bytes) -> bool:
        """``word`` (lowercase, no whitespace; ``encoded`` is ``utf8(word)``) is in
        :meth:`lowered_haystack`. A word holding one that was missing is missing too, without
        looking (the text never changes)."""
        misses = self._misses
        if misses and any(missed in word for missed in misses):
            return False
        if encoded in self.lowered_haystack():
            return True
        self._misses = (*misses[-(MISSES_KEPT - 1) :], word)  # one assignment: safe across threads
        return False


def utf8(text: str) -> bytes:
    """``text`` as UTF-8; lone surrogates (which JSON escapes can hold) kept, not refused."""
    return text.encode("utf-8", "surrogatepass")


# Missing words remembered per SessionInfo (the last few keystrokes of a search as you type).
MISSES_KEPT = 8


def _ms_to_iso(millis: float) -> str:
    return format_iso(datetime.fromtimestamp(millis / 1000, UTC))


# InfoScan.state
PENDING = 0  # no JSON object read yet
SESSION = 1  # the first object was a session header
NOT_SESSION = 2  # the first object was something else: not a session file, whatever follows


@dataclass(slots=True)
class InfoScan:
    """What a SessionInfo needs, from the lines read so far; :meth:`feed` more lines to resume.

    Each line is read on its own (blank and unparseable lines are skipped), so feeding a file's
    lines in two parts split at a line feed gives what one pass gives.
    """

    state: int = PENDING
    id: str = ""
    cwd: str = ""
    parent: str | None = None
    created_ms: float | None = None
    name: str | None = None
    message_count: int = 0
    first_message: str = ""
    text: bytes = b""  # every user/assistant message's text, joined with " ", as UTF-8
    modified: float = 0.0  # the newest user/assistant message time (ms), 0 when none

    def copy(self) -> InfoScan:
        return copy.copy(self)

    def feed(self, data: bytes, start: int = 0, end: int | None = None) -> None:
        """Read the lines of ``data[start:end]`` (a last line without LF counts as a line)."""
        end = len(data) if end is None else end
        texts: list[str] = []
        position = start
        while position < end and self.state != NOT_SESSION:
            stop = data.find(b"\n", position, end)
            if stop < 0:
                stop = end
            line = data[position:stop]
            position = stop + 1
            try:
                obj = loads_line(line)
            except ValueError:
                continue
            if isinstance(obj, dict):
                self._read(obj, texts)
        if texts:
            joined = utf8(" ".join(texts))
            self.text = self.text + b" " + joined if self.text else joined

    def feed_file(
        self, handle: BinaryIO, start: int = 0, stop: int | None = None
    ) -> tuple[int, bytes | None]:
        """:meth:`feed` the whole lines of a file from ``start`` to ``stop``, a chunk at a time (a
        line over MAX_LINE_BYTES is passed over unread, as an unparseable one is). Returns where
        the whole lines end and the bytes after them (None when there are none): not fed."""
        handle.seek(start)
        offset, last = start, None
        for item in read_line_blocks(handle, start, stop=stop):
            if isinstance(item, LineBlock):
                self.feed(item.data, item.start, item.end)
                offset = item.offset + item.end
            elif isinstance(item, LongLine):
                if item.terminated:
                    offset = item.offset + item.size + 1
            else:
                last = item.data
        return offset, last

    def _read(self, obj: dict[str, Any], texts: list[str]) -> None:
        if self.state == PENDING:
            if obj.get("type") != "session":
                self.state = NOT_SESSION
                return
            self.state = SESSION
            self.id = str(obj.get("id"))
            cwd = obj.get("cwd")
            self.cwd = cwd if isinstance(cwd, str) else ""
            parent = obj.get("parentSession")
            self.parent = parent if isinstance(parent, str) else None
            self.created_ms = iso_to_ms(obj.get("timestamp"))
            return
        kind = obj.get("type")
        if kind == "session_info":
            value = obj.get("name")
            self.name = value.strip() or None if isinstance(value, str) else None
        elif kind == "message":
            self.message_count += 1
            message = obj.get("message")
            if not isinstance(message, dict) or message.get("role") not in ("user", "assistant"):
                return
            if "content" not in message:
                return
            stamp = message.get("timestamp")
            value_ms = (
                stamp
                if isinstance(stamp, int | float) and not isinstance(stamp, bool)
                else iso_to_ms(obj.get("timestamp"))
            )
            if value_ms is not None:
                self.modified = max(self.modified, float(value_ms))
            text = text_of_content(message.get("content"))
            if text:
                texts.append(text)
                if not self.first_message and message.get("role") == "user":
                    self.first_message = text

    def info(self, path: str, mtime_ms: float) -> SessionInfo | None:
        """The SessionInfo of what was read (None unless it began with a session header)."""
        if self.state != SESSION:
            return None
        created_ms = self.created_ms
        modified = self.modified
        if not modified:
            modified = float(created_ms) if created_ms is not None else mtime_ms
        return SessionInfo(
            path=path,
            id=self.id,
            cwd=self.cwd,
            name=self.name,
            parent_session_path=self.parent,
            created=_ms_to_iso(created_ms) if created_ms is not None else "",
            modified=_ms_to_iso(modified),
            modified_ms=modified,
            message_count=self.message_count,
            first_message=self.first_message or "(no messages)",
            messages_text=self.text,
        )


def build_session_info(path: Path) -> SessionInfo | None:
    """SessionInfo for one file, or None when it is not a session (never migrates or writes)."""
    scan = InfoScan()
    try:
        with open_regular(path) as handle:
            _, last = scan.feed_file(handle)
            mtime_ms = os.fstat(handle.fileno()).st_mtime * 1000
    except OSError:
        return None
    if last is not None:
        scan.feed(last)
    return scan.info(str(path), mtime_ms)


def session_files(directory: Path) -> list[Path]:
    """The ``*.jsonl`` files of ``directory`` (following symbolic links), in directory order."""
    try:
        return [
            Path(entry.path)
            for entry in os.scandir(directory)
            if entry.name.endswith(".jsonl") and entry.is_file()
        ]
    except OSError:
        return []


def project_folders(agent_dir: Path | None = None) -> list[Path]:
    """The per-project session folders under the sessions root (immediate subfolders, as pi)."""
    try:
        return [Path(entry.path) for entry in os.scandir(sessions_root(agent_dir)) if entry.is_dir()]
    except OSError:
        return []


def newest_first(infos: list[SessionInfo]) -> list[SessionInfo]:
    """pi's order: newest ``modified`` first, ties in directory order."""
    return sorted(infos, key=lambda info: info.modified_ms, reverse=True)


def list_sessions(
    cwd: str, session_dir: Path | str | None = None, agent_dir: Path | None = None
) -> list[SessionInfo]:
    """Sessions of one project folder, newest ``modified`` first (pi's ``SessionManager.list``).

    Reads every file; the server and the CLI use ``list_cache.SessionListCache`` instead.
    """
    directory = Path(session_dir) if session_dir is not None else default_session_dir(cwd, agent_dir)
    infos = [info for file in session_files(directory) if (info := build_session_info(file)) is not None]
    return newest_first(infos)


def list_all_sessions(agent_dir: Path | None = None) -> list[SessionInfo]:
    """Sessions of every project under the sessions root (immediate subfolders, as pi)."""
    infos: list[SessionInfo] = []
    for folder in project_folders(agent_dir):
        infos.extend(info for file in session_files(folder) if (info := build_session_info(file)) is not None)
    return newest_first(infos)


def is_valid_session_file(path: Path) -> bool:
    """The first non-blank line is a header with a string id (no 512-byte limit, unlike pi)."""
    try:
        with open_regular(path) as handle:
            line = next(iter_lines(handle), None)
    except OSError:
        return False
    try:
        obj = loads_line(line) if line is not None else None
    except ValueError:
        return False
    return isinstance(obj, dict) and obj.get("type") == "session" and isinstance(obj.get("id"), str)


def find_most_recent_session(directory: Path) -> Path | None:
    """The valid session file with the newest mtime in ``directory``, or None."""
    best: tuple[float, Path] | None = None
    for file in session_files(directory):
        if not is_valid_session_file(file):
            continue
        try:
            mtime = file.stat().st_mtime
        except OSError:
            continue
        if best is None or mtime > best[0]:
            best = (mtime, file)
    return best[1] if best is not None else None
