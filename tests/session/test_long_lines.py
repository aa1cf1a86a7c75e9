"""Lines longer than MAX_LINE_BYTES: skipped with a diagnostic, never held whole in memory, never
rewritten; our own appends refuse to write one. The files are sparse (a hole reads as zeros, a
line without a newline), so a 321 MiB line costs no disk and little time."""

from __future__ import annotations

import io
import os
import tracemalloc
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pi_lsp.session.jsonl as jsonl
from pi_lsp.fileerrors import FileProblem
from pi_lsp.session import SessionManager
from pi_lsp.session.errors import InvalidEntryError, SessionFileConflictError
from pi_lsp.session.jsonl import MAX_LINE_BYTES, LastLine, LineBlock, LongLine, read_line_blocks
from pi_lsp.session.list_cache import SessionListCache
from pi_lsp.session.listing import build_session_info, is_valid_session_file, list_sessions
from pi_lsp.session.loader import read_lines
from pi_lsp.session.parse import load_entries_from_file
from tests.session.helpers import header, msg_entry

MEMORY_BOUND = 64 * 1024 * 1024
"""Far below the long line, far above what reading the rest of these files takes."""


# ---------------------------------------------------------------------- the line reader


def _reference(data: bytes, start: int, limit: int) -> list[tuple[str, int, int]]:
    """(kind, offset, length) of every line of ``data[start:]``, by splitting it whole."""
    out, offset = [], start
    pieces = data[start:].split(b"\n")
    for number, piece in enumerate(pieces):
        last = number == len(pieces) - 1
        if last and not piece:
            break
        kind = "long" if len(piece) > limit else ("last" if last else "line")
        out.append((kind, offset, len(piece)))
        offset += len(piece) + 1
    return out


def _events(data: bytes, start: int, limit: int, chunk: int, hold: int) -> list[tuple[str, int, int]]:
    out: list[tuple[str, int, int]] = []
    handle = io.BytesIO(data)
    handle.seek(start)
    for item in read_line_blocks(handle, start, limit=limit, chunk_bytes=chunk, hold_bytes=hold):
        if isinstance(item, LineBlock):
            assert item.data[item.end - 1 : item.end] == b"\n"
            offset = item.offset + item.start
            for line in item.data[item.start : item.end - 1].split(b"\n"):
                assert data[offset : offset + len(line)] == line
                out.append(("line", offset, len(line)))
                offset += len(line) + 1
        elif isinstance(item, LongLine):
            assert data[item.offset + item.size : item.offset + item.size + 1] == (
                b"\n" if item.terminated else b""
            )
            out.append(("long", item.offset, item.size))
        else:
            assert isinstance(item, LastLine) and data[item.offset :] == item.data
            out.append(("last", item.offset, len(item.data)))
    return out


@settings(max_examples=300, deadline=None)
@given(
    lengths=st.lists(st.integers(0, 40), max_size=12),
    terminated=st.booleans(),
    limit=st.integers(1, 30),
    chunk=st.integers(1, 50),
    hold=st.integers(1, 30),
    start_line=st.integers(0, 3),
)
def test_blocks_give_every_line_and_pass_over_the_long_ones(
    lengths: list[int], terminated: bool, limit: int, chunk: int, hold: int, start_line: int
) -> None:
    """Any cut of lines into chunks, any limit and any hold: the lines a plain split gives, the
    long ones reported instead of read."""
    data = b"\n".join(bytes([65 + n % 26]) * length for n, length in enumerate(lengths))
    if terminated and data:
        data += b"\n"
    starts = [0] + [i + 1 for i, byte in enumerate(data) if byte == 10]
    start = starts[min(start_line, len(starts) - 1)]
    assert _events(data, start, limit, chunk, hold) == _reference(data, start, limit)


# ---------------------------------------------------------------------- session files


def _line(obj: object) -> bytes:
    return orjson.dumps(obj) + b"\n"


@pytest.fixture
def huge_line_file(tmp_path: Path) -> Iterator[Path]:
    """header, e1, a line of MAX_LINE_BYTES + 1 MiB zeros (a hole), e2: sparse, deleted after."""
    path = tmp_path / "huge.jsonl"
    with open(path, "wb") as out:
        out.write(_line(header()) + _line(msg_entry("e1", None, "user", "before")))
        out.seek(MAX_LINE_BYTES + (1 << 20), os.SEEK_CUR)
        out.write(b"\n" + _line(msg_entry("e2", "e1", "assistant", "after")))
    yield path
    path.unlink(missing_ok=True)


def _peak(action: object) -> tuple[object, int]:
    tracemalloc.start()
    try:
        result = action()  # type: ignore[operator]
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_a_line_over_the_limit_is_skipped_unread_and_the_file_left_alone(huge_line_file: Path) -> None:
    before = huge_line_file.stat()
    manager, peak = _peak(lambda: SessionManager.open(huge_line_file))
    assert isinstance(manager, SessionManager)
    assert [record.id for record in manager.index.records] == ["e1", "e2"]
    [warning] = [d for d in manager.diagnostics if d["severity"] == "warning"]
    assert warning["line"] == 3 and "longer than" in warning["message"] and "not read" in warning["message"]
    assert peak < MEMORY_BOUND, f"{peak:,} bytes held while reading"
    new_id = manager.append_message({"role": "user", "content": "more", "timestamp": 3})
    after = huge_line_file.stat()
    assert after.st_size > before.st_size and after.st_ino == before.st_ino  # appended, not rewritten
    assert [record.id for record in SessionManager.open(huge_line_file).index.records] == ["e1", "e2", new_id]


def test_listing_passes_over_a_line_over_the_limit(huge_line_file: Path) -> None:
    info, peak = _peak(lambda: build_session_info(huge_line_file))
    assert info is not None and info.message_count == 2 and info.first_message == "before"  # type: ignore[attr-defined]
    assert peak < MEMORY_BOUND
    [cached], peak = _peak(lambda: SessionListCache().list_folder(huge_line_file.parent))  # type: ignore[misc]
    assert cached.message_count == 2 and peak < MEMORY_BOUND
    assert [i.id for i in list_sessions("/proj", huge_line_file.parent)] == ["sess-1"]
    assert is_valid_session_file(huge_line_file)


def test_a_last_line_over_the_limit_without_a_newline(tmp_path: Path) -> None:
    """A file ending in a gigantic unterminated line: a warning, the lines before it, and the next
    append isolates it (a newline before ours) as it isolates a torn line, without reading it."""
    path = tmp_path / "tail.jsonl"
    with open(path, "wb") as out:
        out.write(_line(header()) + _line(msg_entry("e1", None, "user", "before")))
        out.truncate(out.tell() + MAX_LINE_BYTES + (1 << 20))
    try:
        result, peak = _peak(lambda: read_lines(path))
        assert [r.id for r in result.records] == ["e1"] and peak < MEMORY_BOUND  # type: ignore[attr-defined]
        assert any("no final newline" in d["message"] for d in result.diagnostics)  # type: ignore[attr-defined]
        manager = SessionManager.open(path)
        size = path.stat().st_size
        new_id = manager.append_message({"role": "user", "content": "more", "timestamp": 3})
        assert path.stat().st_size > size
        assert [r.id for r in SessionManager.open(path).index.records] == ["e1", new_id]
        assert not is_valid_session_file(tmp_path / "missing.jsonl")
    finally:
        path.unlink(missing_ok=True)


def test_a_header_over_the_limit_is_no_session(tmp_path: Path) -> None:
    path = tmp_path / "head.jsonl"
    with open(path, "wb") as out:
        out.truncate(MAX_LINE_BYTES + (1 << 20))
        out.seek(0, os.SEEK_END)
        out.write(b"\n" + _line(header()))
    try:
        assert not is_valid_session_file(path)
    finally:
        path.unlink(missing_ok=True)


def test_an_old_file_with_a_line_over_the_limit_is_not_migrated(tmp_path: Path) -> None:
    """Migration rewrites every line; it cannot keep one it did not read, so it refuses."""
    path = tmp_path / "v1.jsonl"
    with open(path, "wb") as out:
        out.write(
            _line({"type": "session", "id": "v1", "timestamp": "2025-01-01T00:00:00.000Z", "cwd": "/p"})
        )
        out.write(
            _line(
                {
                    "type": "message",
                    "timestamp": "2025-01-01T00:00:01.000Z",
                    "message": {"role": "user", "content": "x", "timestamp": 1},
                }
            )
        )
        out.seek(MAX_LINE_BYTES + (1 << 20), os.SEEK_CUR)
        out.write(b"\n")
    try:
        before = path.stat()
        with pytest.raises(FileProblem) as raised:
            SessionManager.open(path)
        assert raised.value.reason == "tooLarge" and "left untouched" in str(raised.value)
        after = path.stat()
        assert (after.st_size, after.st_mtime_ns, after.st_ino) == (
            before.st_size,
            before.st_mtime_ns,
            before.st_ino,
        )
    finally:
        path.unlink(missing_ok=True)


def test_our_appends_refuse_a_line_the_reader_would_skip(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(jsonl, "MAX_LINE_BYTES", 4096)
    manager = SessionManager.create("/proj", tmp_path)
    manager.append_message({"role": "user", "content": "short", "timestamp": 1})
    manager.append_message({"role": "assistant", "content": [], "api": "a", "provider": "p", "model": "m",
                            "usage": {}, "stopReason": "stop", "timestamp": 2})  # fmt: skip
    file = Path(manager.session_file or "")
    before = file.read_bytes()
    for big in (
        lambda: manager.append_message({"role": "user", "content": "x" * 5000, "timestamp": 3}),
        lambda: manager.append_custom_entry("t", {"blob": "y" * 5000}),
        lambda: manager.append_entry({"type": "session_info", "name": "n" * 5000}),
    ):
        with pytest.raises(InvalidEntryError, match="limited to"):
            big()
    assert file.read_bytes() == before and manager.entry_count == 2
    manager.append_message({"role": "user", "content": "x" * 3000, "timestamp": 4})  # under the limit
    assert [r.id for r in SessionManager.open(file).index.records] == [r.id for r in manager.index.records]


def test_whole_file_readers_read_a_line_at_a_time(huge_line_file: Path, tmp_path: Path) -> None:
    """pi's ``loadEntriesFromFile`` and ``forkFrom`` on the same file: the first skips the line, the
    second (a copy of every line) refuses, leaving the source alone and making nothing."""
    entries, peak = _peak(lambda: load_entries_from_file(huge_line_file))
    assert [e.get("id") for e in entries] == ["sess-1", "e1", "e2"] and peak < MEMORY_BOUND  # type: ignore[attr-defined]
    before = huge_line_file.stat()
    forks = tmp_path / "forks"
    with pytest.raises(FileProblem, match="forked copy"):
        SessionManager.fork_from(huge_line_file, "/proj", forks)
    assert huge_line_file.stat().st_mtime_ns == before.st_mtime_ns and not list(forks.glob("*"))


def test_a_first_flush_onto_a_huge_file_someone_made_reads_only_its_start(tmp_path: Path) -> None:
    """The first flush checks that the file is still blank: a gigabyte another program put there
    is refused after reading its first chunk, not read whole."""
    manager = SessionManager.create("/proj", tmp_path)
    manager.append_message({"role": "user", "content": "hi", "timestamp": 1})
    path = Path(manager.session_file or "")
    with open(path, "wb") as out:
        out.truncate(MAX_LINE_BYTES + (1 << 20))
    try:
        assistant = {"role": "assistant", "content": [], "api": "a", "provider": "p", "model": "m",
                     "usage": {}, "stopReason": "stop", "timestamp": 2}  # fmt: skip
        _, peak = _peak(lambda: _flush_or_conflict(manager, assistant))
        assert peak < MEMORY_BOUND
        assert path.stat().st_size == MAX_LINE_BYTES + (1 << 20)  # not written to
    finally:
        path.unlink(missing_ok=True)


def _flush_or_conflict(manager: SessionManager, message: dict[str, object]) -> None:
    with pytest.raises(SessionFileConflictError):
        manager.append_message(message)
