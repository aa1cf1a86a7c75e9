"""Store edge cases: failed writes leave a consistent state, first-flush conflicts, line numbers in
diagnostics after refresh, session folders and discovery, cwd handling, client-built entries."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import orjson
import pytest

from pi_lsp.session import (
    InvalidEntryError,
    SessionFileConflictError,
    SessionManager,
    list_all_sessions,
    list_sessions,
)
from pi_lsp.session import writer as writer_module
from pi_lsp.session.paths import encode_cwd
from tests.session.helpers import assistant_msg, file_lines, read_objects, user_msg, write_jsonl


def _flushed(session_dir: Path) -> tuple[SessionManager, Path]:
    manager = SessionManager.create("/proj", session_dir)
    manager.append_message(user_msg("q"))
    manager.append_message(assistant_msg("a"))
    return manager, Path(manager.session_file or "")


def test_failed_append_changes_nothing_and_next_append_is_clean(
    session_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    manager, path = _flushed(session_dir)
    entries, leaf = manager.get_entries(), manager.leaf_id
    context = manager.build_session_context()
    real_write = writer_module.write_all

    def partial_then_fail(fd: int, data: bytes) -> None:
        real_write(fd, data[: len(data) // 3])  # a short write, then the disk fills up
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(writer_module, "write_all", partial_then_fail)
    with pytest.raises(OSError):
        manager.append_message(user_msg("lost"))
    monkeypatch.undo()
    assert manager.get_entries() == entries
    assert manager.leaf_id == leaf
    assert manager.build_session_context() == context
    new_id = manager.append_message(user_msg("kept"))
    lines = file_lines(path)
    assert orjson.loads(lines[-1])["id"] == new_id
    assert orjson.loads(lines[-1])["parentId"] == leaf
    reopened = SessionManager.open(path)
    assert [e["id"] for e in reopened.get_entries()] == [*[e["id"] for e in entries], new_id]
    # the short write was cut off again: no torn line is left for pi (or us) to skip
    assert [d for d in reopened.diagnostics if d["severity"] == "warning"] == []
    assert all(orjson.loads(line) for line in lines if line)


def test_first_flush_refuses_a_file_someone_else_created(session_dir: Path) -> None:
    path = session_dir / "target.jsonl"
    manager = SessionManager.open(path)
    manager.append_message(user_msg("mine"))
    other = SessionManager.open(path)
    other.append_message(user_msg("theirs"))
    other.append_message(assistant_msg("theirs"))
    before = path.read_bytes()
    with pytest.raises(SessionFileConflictError):
        manager.append_message(assistant_msg("mine"))
    assert path.read_bytes() == before
    assert [e["message"]["content"] for e in manager.get_entries()] == ["mine"]


def test_refresh_diagnostics_name_physical_lines_after_unterminated_tail(session_dir: Path) -> None:
    _, path = _flushed(session_dir)
    with path.open("ab") as handle:  # a complete entry without its newline (cut right before it)
        handle.write(
            orjson.dumps(
                {
                    "type": "custom",
                    "customType": "x",
                    "id": "nolf",
                    "parentId": None,
                    "timestamp": "2026-01-01T00:00:00Z",
                }
            )
        )
    manager = SessionManager.open(path)
    manager.append_message(user_msg("mine"))  # starts a fresh line, so the tail becomes line 4
    with path.open("ab") as handle:
        handle.write(b"garbage from someone else\n")
    manager.refresh()
    physical = path.read_bytes().split(b"\n").index(b"garbage from someone else") + 1
    assert physical == 6
    assert [d["line"] for d in manager.diagnostics if d["severity"] == "warning"] == [physical]


def test_refresh_diagnostics_after_own_appends_interleaved_with_others(session_dir: Path) -> None:
    manager, path = _flushed(session_dir)
    other = SessionManager.open(path)
    other.append_message(user_msg("theirs"))
    manager.append_message(user_msg("mine"))  # lands after theirs: our offsets are now behind
    with path.open("ab") as handle:
        handle.write(b"{broken\n")
    assert len(manager.refresh()) == 1
    assert [d["line"] for d in manager.diagnostics if d["severity"] == "warning"] == [6]
    assert len(manager.get_entries()) == 4


def test_create_uses_the_default_folder_under_the_agent_dir(agent_dir: Path) -> None:
    cwd = "/home/u/my proj:1"
    manager = SessionManager.create(cwd)
    expected = agent_dir / "sessions" / "--home-u-my proj-1--"
    assert Path(manager.session_dir) == expected and expected.is_dir()
    manager.append_message(user_msg("q"))
    manager.append_message(assistant_msg("a"))
    path = Path(manager.session_file or "")
    assert path.parent == expected
    stamp = manager.get_header()["timestamp"]
    assert path.name == f"{stamp.replace(':', '-').replace('.', '-')}_{manager.session_id}.jsonl"
    assert [i.path for i in list_sessions(cwd)] == [str(path)]
    assert [i.path for i in list_all_sessions()] == [str(path)]


@pytest.mark.parametrize(
    ("cwd", "encoded"),
    [
        ("/Users/badlogic/workspaces/pi-mono", "--Users-badlogic-workspaces-pi-mono--"),
        ("/home/u/my proj:1", "--home-u-my proj-1--"),
        ("C:\\Users\\me\\proj", "--C--Users-me-proj--"),
        ("/", "----"),
        ("/a/b/", "--a-b---"),
    ],
)
def test_cwd_folder_encoding(cwd: str, encoded: str) -> None:
    assert encode_cwd(cwd) == encoded


def test_continue_recent_picks_newest_by_mtime_with_callers_cwd(session_dir: Path) -> None:
    old = write_jsonl(
        session_dir / "old.jsonl",
        [{"type": "session", "version": 3, "id": "old", "timestamp": "2025-01-01T00:00:00Z", "cwd": "/a"}],
    )
    new = write_jsonl(
        session_dir / "new.jsonl",
        [{"type": "session", "version": 3, "id": "new", "timestamp": "2024-01-01T00:00:00Z", "cwd": "/b"}],
    )
    now = time.time()
    os.utime(old, (now - 100, now - 100))
    os.utime(new, (now, now))
    manager = SessionManager.continue_recent("/caller", session_dir)
    assert manager.session_id == "new"
    assert manager.cwd == "/caller"  # pi uses the caller's cwd, not the header's (spec §8.12)
    empty = session_dir.parent / "empty"
    fresh = SessionManager.continue_recent("/caller", empty)
    assert fresh.get_entries() == [] and Path(fresh.session_dir) == empty


def test_open_uses_header_cwd_unless_overridden_and_new_session_goes_next_to_file(session_dir: Path) -> None:
    _, path = _flushed(session_dir)
    manager = SessionManager.open(path)
    assert manager.cwd == "/proj"
    assert SessionManager.open(path, cwd_override="/elsewhere").cwd == "/elsewhere"
    new_path = manager.new_session()
    assert new_path is not None and Path(new_path).parent == session_dir
    assert manager.get_entries() == [] and manager.leaf_id is None
    assert manager.refresh() == []


def test_list_sessions_skips_invalid_files_and_never_writes(session_dir: Path) -> None:
    _, good = _flushed(session_dir)
    (session_dir / "bad.jsonl").write_text('{"type":"message"}\n')
    (session_dir / "empty.jsonl").write_text("")
    (session_dir / "notes.txt").write_text("x")
    v1 = write_jsonl(
        session_dir / "v1.jsonl",
        [{"type": "session", "id": "v1", "timestamp": "2025-01-01T00:00:00Z", "cwd": "/p"}],
    )
    before = {p: p.read_bytes() for p in session_dir.iterdir()}
    assert sorted(i.path for i in list_sessions("/x", session_dir)) == sorted([str(good), str(v1)])
    assert {p: p.read_bytes() for p in session_dir.iterdir()} == before


def test_append_entry_validates_and_names_the_field(session_dir: Path) -> None:
    manager, path = _flushed(session_dir)
    before = path.read_bytes()
    bad: list[tuple[dict[str, Any], str]] = [
        ({"type": "nope"}, "entry.type"),
        ({"type": "message", "message": {"role": "assistant", "content": "x"}}, "entry.message.content"),
        (
            {"type": "message", "message": {"role": "user", "content": [{"type": "image"}]}},
            "entry.message.content[0].data",
        ),
        ({"type": "model_change", "provider": "p"}, "entry.modelId"),
        (
            {"type": "compaction", "summary": "s", "firstKeptEntryId": "x", "tokensBefore": "many"},
            "entry.tokensBefore",
        ),
        ({"type": "label", "targetId": "x", "label": 3}, "entry.label"),
    ]
    for entry, field in bad:
        with pytest.raises(InvalidEntryError, match=field.replace("[", r"\[").replace("]", r"\]")):
            manager.append_entry(entry)
    assert path.read_bytes() == before
    entry_id = manager.append_entry(
        {"type": "message", "id": "ignored", "message": {"role": "user", "content": "hi"}, "extra": 1}
    )
    stored = read_objects(path)[-1]
    assert stored["id"] == entry_id != "ignored"
    assert stored["extra"] == 1 and isinstance(stored["message"]["timestamp"], int)
    summary = manager.append_entry({"type": "branch_summary", "summary": "s"})
    assert manager.get_entry(summary)["fromId"] == entry_id  # type: ignore[index]


def test_branched_session_from_crlf_file_writes_lf_lines(session_dir: Path) -> None:
    """CR before LF is tolerated on read; lines we write (here: copies in a new file) are LF-only."""
    manager, path = _flushed(session_dir)
    path.write_bytes(path.read_bytes().replace(b"\n", b"\r\n"))
    reopened = SessionManager.open(path)
    assert reopened.diagnostics == []
    leaf = reopened.leaf_id
    assert leaf is not None
    new_file = reopened.create_branched_session(leaf)
    assert new_file is not None
    data = Path(new_file).read_bytes()
    assert b"\r" not in data
    assert [o["id"] for o in read_objects(Path(new_file))[1:]] == [e["id"] for e in manager.get_entries()]
    reopened.append_message(user_msg("more"))
    assert b"\r" not in Path(new_file).read_bytes()
