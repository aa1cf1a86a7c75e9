"""Session discovery: ``list``/``listAll`` with SessionInfo, search, and the most recent session."""

from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import regex

from pi_lsp.agent_dir import sessions_root
from pi_lsp.jscompat import iso_to_ms
from pi_lsp.regular_files import open_regular
from pi_lsp.session.errors import SearchTimeoutError
from pi_lsp.session.ids import format_iso
from pi_lsp.session.jsonl import loads_line, split_lines
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
    all_messages_text: str

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


def _ms_to_iso(millis: float) -> str:
    return format_iso(datetime.fromtimestamp(millis / 1000, UTC))


def build_session_info(path: Path) -> SessionInfo | None:
    """SessionInfo for one file, or None when it is not a session (never migrates or writes)."""
    try:
        with open_regular(path) as handle:
            data = handle.read()
            mtime_ms = os.fstat(handle.fileno()).st_mtime * 1000
    except OSError:
        return None
    header: dict[str, Any] | None = None
    name: str | None = None
    message_count = 0
    first_message = ""
    texts: list[str] = []
    modified = 0.0
    for raw in split_lines(data):
        try:
            obj = loads_line(raw.data)
        except ValueError:
            continue
        if not isinstance(obj, dict):
            continue
        if header is None:
            if obj.get("type") != "session":
                return None
            header = obj
            continue
        kind = obj.get("type")
        if kind == "session_info":
            value = obj.get("name")
            name = value.strip() or None if isinstance(value, str) else None
        elif kind == "message":
            message_count += 1
            message = obj.get("message")
            if not isinstance(message, dict) or message.get("role") not in ("user", "assistant"):
                continue
            if "content" not in message:
                continue
            stamp = message.get("timestamp")
            value_ms = stamp if isinstance(stamp, int | float) and not isinstance(stamp, bool) else iso_to_ms(
                obj.get("timestamp")
            )
            if value_ms is not None:
                modified = max(modified, float(value_ms))
            text = text_of_content(message.get("content"))
            if text:
                texts.append(text)
                if not first_message and message.get("role") == "user":
                    first_message = text
    if header is None:
        return None
    created_ms = iso_to_ms(header.get("timestamp"))
    if not modified:
        modified = float(created_ms) if created_ms is not None else mtime_ms
    cwd = header.get("cwd")
    parent = header.get("parentSession")
    return SessionInfo(
        path=str(path),
        id=str(header.get("id")),
        cwd=cwd if isinstance(cwd, str) else "",
        name=name,
        parent_session_path=parent if isinstance(parent, str) else None,
        created=_ms_to_iso(created_ms) if created_ms is not None else "",
        modified=_ms_to_iso(modified),
        modified_ms=modified,
        message_count=message_count,
        first_message=first_message or "(no messages)",
        all_messages_text=" ".join(texts),
    )


def _session_files(directory: Path) -> list[Path]:
    try:
        return [
            Path(entry.path)
            for entry in os.scandir(directory)
            if entry.name.endswith(".jsonl") and entry.is_file()
        ]
    except OSError:
        return []


def _sorted(infos: list[SessionInfo]) -> list[SessionInfo]:
    return sorted(infos, key=lambda info: info.modified_ms, reverse=True)


def list_sessions(
    cwd: str, session_dir: Path | str | None = None, agent_dir: Path | None = None
) -> list[SessionInfo]:
    """Sessions of one project folder, newest ``modified`` first (pi's ``SessionManager.list``)."""
    directory = Path(session_dir) if session_dir is not None else default_session_dir(cwd, agent_dir)
    infos = [info for file in _session_files(directory) if (info := build_session_info(file)) is not None]
    return _sorted(infos)


def list_all_sessions(agent_dir: Path | None = None) -> list[SessionInfo]:
    """Sessions of every project under the sessions root (immediate subfolders, as pi)."""
    root = sessions_root(agent_dir)
    try:
        folders = [Path(entry.path) for entry in os.scandir(root) if entry.is_dir()]
    except OSError:
        return []
    infos: list[SessionInfo] = []
    for folder in folders:
        infos.extend(
            info for file in _session_files(folder) if (info := build_session_info(file)) is not None
        )
    return _sorted(infos)


def is_valid_session_file(path: Path) -> bool:
    """The first non-blank line is a header with a string id (no 512-byte limit, unlike pi)."""
    try:
        with open_regular(path) as handle:
            for line in handle:
                if line.strip():
                    obj = loads_line(line)
                    return (
                        isinstance(obj, dict)
                        and obj.get("type") == "session"
                        and isinstance(obj.get("id"), str)
                    )
    except (OSError, ValueError):
        return False
    return False


def find_most_recent_session(directory: Path) -> Path | None:
    """The valid session file with the newest mtime in ``directory``, or None."""
    best: tuple[float, Path] | None = None
    for file in _session_files(directory):
        if not is_valid_session_file(file):
            continue
        try:
            mtime = file.stat().st_mtime
        except OSError:
            continue
        if best is None or mtime > best[0]:
            best = (mtime, file)
    return best[1] if best is not None else None


# A regex search of the picker gives up after this many seconds (all sessions together).
REGEX_TIME_LIMIT = 2.0
_QUOTED = re.compile(r'"([^"]*)"')


def search_sessions(
    infos: list[SessionInfo], query: str | None, time_limit: float = REGEX_TIME_LIMIT
) -> list[SessionInfo]:
    """Filter by a picker query: ``re:<regex>``, ``"quoted phrases"`` and words (all must match).

    Matching is case-insensitive over id, name, all message text and cwd; order is kept. A regex
    search stops after ``time_limit`` seconds in all (SearchTimeoutError).
    """
    if not query or not query.strip():
        return infos
    query = query.strip()
    if query.startswith("re:"):
        return _regex_search(infos, query[3:], time_limit)
    balanced = query.count('"') % 2 == 0
    phrases = [" ".join(p.lower().split()) for p in _QUOTED.findall(query)] if balanced else []
    rest = _QUOTED.sub(" ", query) if phrases else query
    words = [word.lower() for word in rest.split()]
    needles = [p for p in phrases if p] + words
    return [
        info
        for info in infos
        if all(needle in " ".join(_haystack(info).lower().split()) for needle in needles)
    ]


def _regex_search(infos: list[SessionInfo], source: str, time_limit: float) -> list[SessionInfo]:
    """The sessions whose text ``source`` matches, with a time bound: a backtracking pattern
    (``(a|aa)+$``) would otherwise hold a worker, and the interpreter lock, for hours. The
    ``regex`` module checks a timeout while it matches and releases the lock (``concurrent``)."""
    if not source:
        return []
    try:
        pattern = regex.compile(source, regex.IGNORECASE)
    except regex.error:
        return []
    deadline = time.monotonic() + time_limit
    found: list[SessionInfo] = []
    for info in infos:
        remaining = deadline - time.monotonic()
        try:
            if remaining <= 0:
                raise TimeoutError
            if pattern.search(_haystack(info), concurrent=True, timeout=remaining):
                found.append(info)
        except TimeoutError:
            raise SearchTimeoutError(
                f"the regular expression took longer than {time_limit:g} s to search the sessions; "
                "simplify it"
            ) from None
    return found


def _haystack(info: SessionInfo) -> str:
    return f"{info.id} {info.name or ''} {info.all_messages_text} {info.cwd}"
