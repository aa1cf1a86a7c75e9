"""pi's session files (behaviours 15–35): custom ids, loading entries, the most recent session,
and opening empty or broken files.

The numbers are session spec §6's (pi's own session-manager tests); the rules for where pi's
versions or ours differ are in ``test_pi_build_context.py``.
"""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

import pytest

from pi_lsp.session import (
    InvalidSessionFileError,
    SessionManager,
    find_most_recent_session,
    load_entries_from_file,
    parse_session_entries,
)
from tests.session.helpers import (
    assistant_msg,
    header,
    msg_entry,
    read_objects,
    user_msg,
    write_jsonl,
)

UUID_V7 = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")


# ---------------------------------------------------------------------------------------------
# custom-session-id.test.ts (+ delta: generated ids are UUIDv7)


def test_15_uses_provided_id(session_dir: Path) -> None:
    manager = SessionManager.create("/proj", session_dir)
    manager.new_session(id="my-custom-id")
    assert manager.session_id == "my-custom-id"
    assert manager.session_file is not None and manager.session_file.endswith("_my-custom-id.jsonl")


def test_16_generates_random_uuid_v7_when_no_id(session_dir: Path) -> None:
    manager = SessionManager.create("/proj", session_dir)
    first = manager.session_id
    manager.new_session()
    assert UUID_V7.match(first) and UUID_V7.match(manager.session_id)
    assert first != manager.session_id
    assert UUID_V7.match(SessionManager.in_memory("/p").session_id)


def test_17_random_id_when_options_without_id(session_dir: Path) -> None:
    manager = SessionManager.create("/proj", session_dir)
    manager.new_session(parent_session="parent.jsonl")
    assert UUID_V7.match(manager.session_id)
    assert manager.get_header()["parentSession"] == "parent.jsonl"


def test_18_custom_id_in_header(session_dir: Path) -> None:
    manager = SessionManager.create("/proj", session_dir)
    manager.new_session(id="my-custom-id")
    assert manager.get_header()["id"] == "my-custom-id"
    assert list(manager.get_header()) == ["type", "version", "id", "timestamp", "cwd"]
    manager.append_message(user_msg("hi"))
    manager.append_message(assistant_msg("hello"))
    assert read_objects(Path(manager.session_file or ""))[0]["id"] == "my-custom-id"


# ---------------------------------------------------------------------------------------------
# file-operations.test.ts: loadEntriesFromFile


def test_19_load_entries_missing_file(tmp_path: Path) -> None:
    assert load_entries_from_file(tmp_path / "nope.jsonl") == []


def test_20_load_entries_empty_file(tmp_path: Path) -> None:
    (tmp_path / "e.jsonl").write_bytes(b"")
    assert load_entries_from_file(tmp_path / "e.jsonl") == []


def test_21_load_entries_without_header(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "s.jsonl", [msg_entry("1", None, "user", "hi")])
    assert load_entries_from_file(path) == []


def test_22_load_entries_malformed(tmp_path: Path) -> None:
    (tmp_path / "s.jsonl").write_text("not json\n")
    assert load_entries_from_file(tmp_path / "s.jsonl") == []


def test_23_load_entries_valid(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "s.jsonl", [header(version=None), msg_entry("1", None, "user", "hi")])
    entries = load_entries_from_file(path)
    assert [e["type"] for e in entries] == ["session", "message"]


def test_24_load_entries_skips_malformed_lines(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text(
        '{"type":"session","id":"abc","timestamp":"2025-01-01T00:00:00Z","cwd":"/tmp"}\n'
        "not valid json\n"
        '{"type":"message","id":"1","parentId":null,"timestamp":"2025-01-01T00:00:00Z",'
        '"message":{"role":"user","content":"hi","timestamp":1}}\n'
    )
    assert [e["type"] for e in load_entries_from_file(path)] == ["session", "message"]


def test_24b_parse_session_entries_skips_blank_and_malformed() -> None:
    content = '\n  {"a":1}\r\n\nnope\n{"b":2}\n\n'
    assert parse_session_entries(content) == [{"a": 1}, {"b": 2}]


# ---------------------------------------------------------------------------------------------
# file-operations.test.ts: findMostRecentSession


def _valid_session(path: Path, session_id: str, mtime: float | None = None) -> Path:
    write_jsonl(path, [header(session_id)])
    if mtime is not None:
        os.utime(path, (mtime, mtime))
    return path


def test_25_most_recent_empty_dir(tmp_path: Path) -> None:
    assert find_most_recent_session(tmp_path) is None


def test_26_most_recent_missing_dir(tmp_path: Path) -> None:
    assert find_most_recent_session(tmp_path / "missing") is None


def test_27_most_recent_ignores_non_jsonl(tmp_path: Path) -> None:
    _valid_session(tmp_path / "a.txt", "a")
    _valid_session(tmp_path / "b.json", "b")
    assert find_most_recent_session(tmp_path) is None


def test_28_most_recent_ignores_invalid_jsonl(tmp_path: Path) -> None:
    (tmp_path / "a.jsonl").write_text('{"type":"message"}\n')
    assert find_most_recent_session(tmp_path) is None


def test_29_most_recent_single_file(tmp_path: Path) -> None:
    path = _valid_session(tmp_path / "a.jsonl", "a")
    assert find_most_recent_session(tmp_path) == path


def test_30_most_recent_by_mtime(tmp_path: Path) -> None:
    now = time.time()
    _valid_session(tmp_path / "old.jsonl", "old", now - 10)
    newer = _valid_session(tmp_path / "new.jsonl", "new", now)
    assert find_most_recent_session(tmp_path) == newer


def test_31_most_recent_skips_invalid_newer_file(tmp_path: Path) -> None:
    now = time.time()
    valid = _valid_session(tmp_path / "valid.jsonl", "v", now - 10)
    invalid = tmp_path / "invalid.jsonl"
    invalid.write_text('{"type":"message"}\n')
    os.utime(invalid, (now, now))
    assert find_most_recent_session(tmp_path) == valid


def test_31b_most_recent_sees_long_headers(tmp_path: Path) -> None:
    """Deliberate difference (spec §8.4): pi reads only 512 bytes; a long header stays visible here."""
    path = write_jsonl(tmp_path / "long.jsonl", [header("x", cwd="/" + "d" * 2000)])
    assert find_most_recent_session(tmp_path) == path


# ---------------------------------------------------------------------------------------------
# file-operations.test.ts: setSessionFile recovery (32–35). We deliberately differ for non-empty files.


def test_32_empty_file_becomes_new_session_bound_to_path(session_dir: Path) -> None:
    """pi truncates and writes a header at once; we bind a new session to the empty file and write
    header + entries together at the first assistant message (no file content changes before)."""
    path = session_dir / "empty.jsonl"
    path.write_bytes(b"")
    manager = SessionManager.open(path)
    assert manager.session_id
    assert manager.get_header()["type"] == "session"
    assert path.read_bytes() == b""
    manager.append_message(user_msg("q"))
    assert path.read_bytes() == b""
    manager.append_message(assistant_msg("a"))
    objects = read_objects(path)
    assert [o["type"] for o in objects] == ["session", "message", "message"]
    assert objects[0]["id"] == manager.session_id


def test_32b_blank_lines_only_count_as_empty(session_dir: Path) -> None:
    path = session_dir / "blank.jsonl"
    path.write_bytes(b"\n  \n\r\n")
    manager = SessionManager.open(path)
    manager.append_message(assistant_msg("a"))
    assert [o["type"] for o in read_objects(path)] == ["session", "message"]


def test_33_file_without_valid_header_is_refused_and_untouched(session_dir: Path) -> None:
    """pi truncates such a file to a fresh header (data loss, spec §8.2); we raise and keep it."""
    path = session_dir / "bad.jsonl"
    content = b'{"type":"message","id":"1","parentId":null,"timestamp":"2025-01-01T00:00:00Z","message":{}}\n'
    path.write_bytes(content)
    with pytest.raises(InvalidSessionFileError) as error:
        SessionManager.open(path)
    assert str(path) in str(error.value)
    assert path.read_bytes() == content
    garbage = session_dir / "garbage.jsonl"
    garbage.write_bytes(b"not json at all\n")
    with pytest.raises(InvalidSessionFileError):
        SessionManager.open(garbage)
    assert garbage.read_bytes() == b"not json at all\n"


def test_33b_garbage_first_line_then_header_is_accepted(session_dir: Path) -> None:
    """As in pi: the first *parsed* object must be the header; earlier malformed lines are skipped."""
    path = session_dir / "s.jsonl"
    write_jsonl(path, [header("h1"), msg_entry("1", None, "user", "hi")])
    body = b"garbage\n" + path.read_bytes()
    path.write_bytes(body)
    manager = SessionManager.open(path)
    assert manager.session_id == "h1"
    assert [e["id"] for e in manager.get_entries()] == ["1"]
    assert any(d.get("line") == 1 for d in manager.diagnostics)
    assert path.read_bytes() == body


def test_34_recovered_empty_file_keeps_explicit_path(session_dir: Path) -> None:
    path = session_dir / "empty.jsonl"
    path.write_bytes(b"")
    manager = SessionManager.open(path)
    assert manager.session_file == str(path)


def test_35_reopening_recovered_file(session_dir: Path) -> None:
    path = session_dir / "empty.jsonl"
    path.write_bytes(b"")
    manager = SessionManager.open(path)
    manager.append_message(user_msg("q"))
    manager.append_message(assistant_msg("a"))
    again = SessionManager.open(path)
    assert again.session_id == manager.session_id
    assert again.get_header()["type"] == "session"
    assert [e["id"] for e in again.get_entries()] == [e["id"] for e in manager.get_entries()]


def test_35b_missing_file_becomes_new_session_at_that_path(session_dir: Path) -> None:
    path = session_dir / "new.jsonl"
    manager = SessionManager.open(path)
    assert manager.session_file == str(path)
    assert not path.exists()
    manager.append_message(user_msg("q"))
    assert not path.exists()
    manager.append_message(assistant_msg("a"))
    assert [o["type"] for o in read_objects(path)] == ["session", "message", "message"]
