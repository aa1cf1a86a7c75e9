"""pi's own session-manager acceptance behaviours (session spec §6, numbers 1–86) on our API.

Each test name carries the behaviour number. Where pi 0.73.1 differs from the 0.58.3 snapshot the
spec was written from (delta doc), the newest pi wins. Where we deliberately differ from pi, the
docstring says so and the test checks our documented behaviour instead.

Not applicable here: 81 and 84–86 (relevance sort and the name filter belong to the picker UI, not
to ``search_sessions``) and 87–94 (TUI key handling).
"""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

import pytest

from pi_lsp.session import (
    EntryNotFoundError,
    InvalidSessionFileError,
    SessionInfo,
    SessionManager,
    build_session_context,
    find_most_recent_session,
    list_sessions,
    load_entries_from_file,
    migrate_entries,
    parse_session_entries,
    search_sessions,
)
from tests.session.helpers import (
    assistant_msg,
    branch_summary_entry,
    compaction_entry,
    file_lines,
    header,
    model_entry,
    msg_entry,
    read_objects,
    texts,
    thinking_entry,
    user_msg,
    write_jsonl,
)

UUID_V7 = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")


# ---------------------------------------------------------------------------------------------
# build-context.test.ts (pure buildSessionContext)


def test_01_empty_entries_returns_empty_context() -> None:
    assert build_session_context([]) == {"messages": [], "thinkingLevel": "off", "model": None}


def test_02_single_user_message() -> None:
    ctx = build_session_context([msg_entry("1", None, "user", "hello")])
    assert [m["role"] for m in ctx["messages"]] == ["user"]


def test_03_simple_conversation() -> None:
    entries = [
        msg_entry("1", None, "user", "hello"),
        msg_entry("2", "1", "assistant", "hi there"),
        msg_entry("3", "2", "user", "how are you"),
        msg_entry("4", "3", "assistant", "great"),
    ]
    ctx = build_session_context(entries)
    assert [m["role"] for m in ctx["messages"]] == ["user", "assistant", "user", "assistant"]


def test_04_tracks_thinking_level_changes() -> None:
    entries = [
        msg_entry("1", None, "user", "hello"),
        thinking_entry("2", "1", "high"),
        msg_entry("3", "2", "assistant", "thinking hard"),
    ]
    ctx = build_session_context(entries)
    assert ctx["thinkingLevel"] == "high"
    assert len(ctx["messages"]) == 2


def test_05_tracks_model_from_assistant_message() -> None:
    entries = [msg_entry("1", None, "user", "hello"), msg_entry("2", "1", "assistant", "hi")]
    assert build_session_context(entries)["model"] == {"provider": "anthropic", "modelId": "claude-test"}


def test_06_assistant_model_wins_over_earlier_model_change() -> None:
    entries = [
        msg_entry("1", None, "user", "hello"),
        model_entry("2", "1", "openai", "gpt-4"),
        msg_entry("3", "2", "assistant", "hi"),
    ]
    assert build_session_context(entries)["model"] == {"provider": "anthropic", "modelId": "claude-test"}
    # And a model_change after the assistant is what counts then.
    entries.append(model_entry("4", "3", "openai", "gpt-4"))
    assert build_session_context(entries)["model"] == {"provider": "openai", "modelId": "gpt-4"}


def test_07_includes_summary_before_kept_messages() -> None:
    entries = [
        msg_entry("1", None, "user", "first"),
        msg_entry("2", "1", "assistant", "response1"),
        msg_entry("3", "2", "user", "second"),
        msg_entry("4", "3", "assistant", "response2"),
        compaction_entry("5", "4", "Summary of first two turns", "3"),
        msg_entry("6", "5", "user", "third"),
        msg_entry("7", "6", "assistant", "response3"),
    ]
    ctx = build_session_context(entries)
    assert len(ctx["messages"]) == 5
    assert ctx["messages"][0]["role"] == "compactionSummary"
    assert "Summary of first two turns" in ctx["messages"][0]["summary"]
    assert ctx["messages"][0]["tokensBefore"] == 1000
    assert texts(ctx["messages"])[1:] == ["second", "response2", "third", "response3"]


def test_08_compaction_keeping_from_first_message() -> None:
    entries = [
        msg_entry("1", None, "user", "first"),
        msg_entry("2", "1", "assistant", "response1"),
        compaction_entry("3", "2", "Empty summary", "1"),
        msg_entry("4", "3", "user", "second"),
    ]
    ctx = build_session_context(entries)
    assert len(ctx["messages"]) == 4
    assert ctx["messages"][0]["role"] == "compactionSummary"
    assert texts(ctx["messages"])[1:] == ["first", "response1", "second"]


def test_09_multiple_compactions_uses_latest() -> None:
    entries = [
        msg_entry("1", None, "user", "a"),
        msg_entry("2", "1", "assistant", "b"),
        compaction_entry("3", "2", "First summary", "1"),
        msg_entry("4", "3", "user", "c"),
        msg_entry("5", "4", "assistant", "d"),
        compaction_entry("6", "5", "Second summary", "4"),
        msg_entry("7", "6", "user", "e"),
    ]
    ctx = build_session_context(entries)
    assert len(ctx["messages"]) == 4
    assert ctx["messages"][0]["summary"] == "Second summary"
    assert texts(ctx["messages"])[1:] == ["c", "d", "e"]


def test_10_follows_path_to_specified_leaf() -> None:
    entries = [
        msg_entry("1", None, "user", "start"),
        msg_entry("2", "1", "assistant", "response"),
        msg_entry("3", "2", "user", "branch A"),
        msg_entry("4", "2", "user", "branch B"),
    ]
    assert texts(build_session_context(entries, "3")["messages"]) == ["start", "response", "branch A"]
    assert texts(build_session_context(entries, "4")["messages"]) == ["start", "response", "branch B"]


def test_11_includes_branch_summary_in_path() -> None:
    entries = [
        msg_entry("1", None, "user", "start"),
        msg_entry("2", "1", "assistant", "response"),
        msg_entry("3", "2", "user", "abandoned path"),
        branch_summary_entry("4", "2", "Summary of abandoned work"),
        msg_entry("5", "4", "user", "new direction"),
    ]
    ctx = build_session_context(entries, "5")
    assert len(ctx["messages"]) == 4
    assert ctx["messages"][2]["role"] == "branchSummary"
    assert "Summary of abandoned work" in ctx["messages"][2]["summary"]
    assert ctx["messages"][2]["fromId"] == "2"
    assert texts(ctx["messages"])[3] == "new direction"


def test_11b_empty_branch_summary_emits_nothing() -> None:
    entries = [msg_entry("1", None, "user", "start"), branch_summary_entry("2", "1", "")]
    assert texts(build_session_context(entries)["messages"]) == ["start"]


def test_12_complex_tree_with_branches_and_compaction() -> None:
    entries = [
        msg_entry("1", None, "user", "start"),
        msg_entry("2", "1", "assistant", "r1"),
        msg_entry("3", "2", "user", "q2"),
        msg_entry("4", "3", "assistant", "r2"),
        compaction_entry("5", "4", "Compacted history", "3"),
        msg_entry("6", "5", "user", "q3"),
        msg_entry("7", "6", "assistant", "r3"),
        # abandoned branch from 3
        msg_entry("8", "3", "user", "wrong path"),
        msg_entry("9", "8", "assistant", "wrong response"),
        branch_summary_entry("10", "3", "Tried wrong approach"),
        msg_entry("11", "10", "user", "better approach"),
    ]
    ctx7 = build_session_context(entries, "7")
    assert ctx7["messages"][0]["role"] == "compactionSummary"
    assert texts(ctx7["messages"])[1:] == ["q2", "r2", "q3", "r3"]
    ctx11 = build_session_context(entries, "11")
    assert texts(ctx11["messages"]) == [
        "start",
        "r1",
        "q2",
        "[branchSummary] Tried wrong approach",
        "better approach",
    ]


def test_13_uses_last_entry_when_leaf_not_found() -> None:
    entries = [msg_entry("1", None, "user", "hello"), msg_entry("2", "1", "assistant", "hi")]
    assert len(build_session_context(entries, "nonexistent")["messages"]) == 2
    # and the empty string is treated as "not given" as well
    assert len(build_session_context(entries, "")["messages"]) == 2


def test_13b_null_leaf_gives_empty_context() -> None:
    entries = [thinking_entry("0", None, "high"), msg_entry("1", "0", "user", "hello")]
    assert build_session_context(entries, None) == {"messages": [], "thinkingLevel": "off", "model": None}


def test_14_handles_orphaned_entries() -> None:
    entries = [msg_entry("1", None, "user", "hello"), msg_entry("2", "missing", "assistant", "orphan")]
    ctx = build_session_context(entries, "2")
    assert texts(ctx["messages"]) == ["orphan"]


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


# ---------------------------------------------------------------------------------------------
# labels.test.ts (in memory)


def test_36_sets_and_gets_labels() -> None:
    manager = SessionManager.in_memory()
    msg_id = manager.append_message(user_msg("hello"))
    assert manager.get_label(msg_id) is None
    label_id = manager.append_label_change(msg_id, "checkpoint")
    assert manager.get_label(msg_id) == "checkpoint"
    label_entries = [e for e in manager.get_entries() if e["type"] == "label"]
    assert len(label_entries) == 1
    assert label_entries[0]["id"] == label_id
    assert label_entries[0]["targetId"] == msg_id
    assert label_entries[0]["label"] == "checkpoint"


def test_37_clears_labels_with_undefined() -> None:
    manager = SessionManager.in_memory()
    msg_id = manager.append_message(user_msg("hello"))
    manager.append_label_change(msg_id, "checkpoint")
    manager.append_label_change(msg_id, None)
    assert manager.get_label(msg_id) is None
    assert "label" not in manager.get_entries()[-1]
    manager.append_label_change(msg_id, "again")
    manager.append_label_change(msg_id, "")
    assert manager.get_label(msg_id) is None


def test_38_last_label_wins() -> None:
    manager = SessionManager.in_memory()
    msg_id = manager.append_message(user_msg("hello"))
    for label in ("first", "second", "third"):
        manager.append_label_change(msg_id, label)
    assert manager.get_label(msg_id) == "third"


def test_39_labels_in_tree_nodes() -> None:
    manager = SessionManager.in_memory()
    msg1 = manager.append_message(user_msg("hello"))
    msg2 = manager.append_message(assistant_msg("hi"))
    manager.append_label_change(msg1, "start")
    manager.append_label_change(msg2, "response")
    tree = manager.get_tree()
    assert tree[0].record.id == msg1 and tree[0].label == "start"
    assert tree[0].children[0].record.id == msg2 and tree[0].children[0].label == "response"


def test_39b_tree_node_carries_label_timestamp() -> None:
    """Delta §1: tree nodes expose the timestamp of the label entry that set the label."""
    manager = SessionManager.in_memory()
    msg1 = manager.append_message(user_msg("hello"))
    label_id = manager.append_label_change(msg1, "start")
    label_entry = manager.get_entry(label_id)
    assert label_entry is not None
    assert manager.get_tree()[0].label_timestamp == label_entry["timestamp"]


def test_40_labels_preserved_in_create_branched_session() -> None:
    manager = SessionManager.in_memory()
    msg1 = manager.append_message(user_msg("hello"))
    msg2 = manager.append_message(assistant_msg("hi"))
    label1 = manager.append_label_change(msg1, "important")
    label2 = manager.append_label_change(msg2, "also-important")
    stamps = {manager.get_entry(label1)["timestamp"], manager.get_entry(label2)["timestamp"]}  # type: ignore[index]
    manager.append_message(user_msg("followup"))
    assert manager.create_branched_session(msg2) is None
    assert manager.get_label(msg1) == "important"
    assert manager.get_label(msg2) == "also-important"
    labels = [e for e in manager.get_entries() if e["type"] == "label"]
    assert len(labels) == 2
    # delta: new ids, timestamps copied from the original label entries, chained after the path
    assert {e["timestamp"] for e in labels} == stamps
    assert {e["id"] for e in labels}.isdisjoint({label1, label2})
    assert labels[0]["parentId"] == msg2 and labels[1]["parentId"] == labels[0]["id"]
    assert manager.leaf_id == labels[1]["id"]


def test_41_labels_off_path_not_preserved() -> None:
    manager = SessionManager.in_memory()
    msg1 = manager.append_message(user_msg("hello"))
    msg2 = manager.append_message(assistant_msg("hi"))
    msg3 = manager.append_message(user_msg("followup"))
    manager.append_label_change(msg1, "first")
    manager.append_label_change(msg2, "second")
    manager.append_label_change(msg3, "third")
    manager.create_branched_session(msg2)
    assert manager.get_label(msg1) == "first"
    assert manager.get_label(msg2) == "second"
    assert manager.get_label(msg3) is None
    assert len([e for e in manager.get_entries() if e["type"] == "label"]) == 2


def test_42_labels_not_in_context() -> None:
    manager = SessionManager.in_memory()
    msg_id = manager.append_message(user_msg("hello"))
    manager.append_label_change(msg_id, "checkpoint")
    assert len(manager.build_session_context()["messages"]) == 1


def test_43_label_on_missing_entry_throws() -> None:
    manager = SessionManager.in_memory()
    with pytest.raises(EntryNotFoundError, match=r"^Entry non-existent not found$"):
        manager.append_label_change("non-existent", "label")


# ---------------------------------------------------------------------------------------------
# migration.test.ts


def test_44_adds_ids_to_v1_entries() -> None:
    entries = [
        {"type": "session", "id": "sess-1", "timestamp": TS_V1, "cwd": "/tmp"},
        {"type": "message", "timestamp": TS_V1, "message": {"role": "user", "content": "hi", "timestamp": 1}},
        {
            "type": "message",
            "timestamp": TS_V1,
            "message": {"role": "assistant", "content": [], "timestamp": 2},
        },
    ]
    assert migrate_entries(entries) == 1
    assert entries[0]["version"] == 3
    assert re.fullmatch(r"[0-9a-f]{8}", entries[1]["id"]) and re.fullmatch(r"[0-9a-f]{8}", entries[2]["id"])
    assert entries[1]["parentId"] is None
    assert entries[2]["parentId"] == entries[1]["id"]
    assert list(entries[1])[-2:] == ["id", "parentId"]


TS_V1 = "2025-01-01T00:00:00Z"


def test_44b_v1_compaction_index_becomes_id_and_hook_message_is_renamed() -> None:
    entries = [
        {"type": "session", "id": "s", "timestamp": TS_V1, "cwd": "/tmp"},
        {"type": "message", "timestamp": TS_V1, "message": {"role": "user", "content": "a", "timestamp": 1}},
        {
            "type": "message",
            "timestamp": TS_V1,
            "message": {
                "role": "hookMessage",
                "customType": "x",
                "content": "h",
                "display": True,
                "timestamp": 2,
            },
        },
        {
            "type": "compaction",
            "timestamp": TS_V1,
            "summary": "s",
            "firstKeptEntryIndex": 2,
            "tokensBefore": 5,
        },
    ]
    migrate_entries(entries)
    assert entries[3]["firstKeptEntryId"] == entries[2]["id"]
    assert "firstKeptEntryIndex" not in entries[3]
    assert entries[2]["message"]["role"] == "custom"


def test_45_migration_is_idempotent_for_v2() -> None:
    entries = [
        {"type": "session", "version": 2, "id": "sess-1", "timestamp": TS_V1, "cwd": "/tmp"},
        {
            "type": "message",
            "id": "abc12345",
            "parentId": None,
            "timestamp": TS_V1,
            "message": {"role": "user", "content": "hi", "timestamp": 1},
        },
        {
            "type": "message",
            "id": "def67890",
            "parentId": "abc12345",
            "timestamp": TS_V1,
            "message": {"role": "assistant", "content": [], "timestamp": 2},
        },
    ]
    migrate_entries(entries)
    assert [(e.get("id"), e.get("parentId")) for e in entries[1:]] == [
        ("abc12345", None),
        ("def67890", "abc12345"),
    ]
    assert entries[0]["version"] == 3
    before = [dict(e) for e in entries]
    assert migrate_entries(entries) == 3
    assert entries == before


def test_44c_open_migrates_v1_file(session_dir: Path) -> None:
    path = write_jsonl(
        session_dir / "v1.jsonl",
        [
            {
                "type": "session",
                "id": "sess-1",
                "timestamp": TS_V1,
                "cwd": "/tmp",
                "branchedFrom": "/x.jsonl",
            },
            {"type": "message", "timestamp": TS_V1, "message": user_msg("hi", 1)},
            {"type": "message", "timestamp": TS_V1, "message": assistant_msg("yo", timestamp=2)},
        ],
    )
    manager = SessionManager.open(path)
    objects = read_objects(path)
    assert objects[0] == {
        "type": "session",
        "id": "sess-1",
        "timestamp": TS_V1,
        "cwd": "/tmp",
        "branchedFrom": "/x.jsonl",
        "version": 3,
    }
    assert [o["id"] for o in objects[1:]] == [e["id"] for e in manager.get_entries()]
    assert objects[2]["parentId"] == objects[1]["id"]
    assert manager.leaf_id == objects[2]["id"]
    assert manager.parent_session is None  # branchedFrom is kept verbatim, not renamed (as pi)


# ---------------------------------------------------------------------------------------------
# save-entry.test.ts


def test_46_custom_entries_in_tree_traversal() -> None:
    manager = SessionManager.in_memory()
    msg_id = manager.append_message(user_msg("hello"))
    custom_id = manager.append_custom_entry("my_data", {"foo": "bar"})
    msg2_id = manager.append_message(assistant_msg("hi"))
    entries = manager.get_entries()
    assert len(entries) == 3
    custom = next(e for e in entries if e["type"] == "custom")
    assert custom["customType"] == "my_data"
    assert custom["data"] == {"foo": "bar"}
    assert custom["id"] == custom_id
    assert custom["parentId"] == msg_id
    assert list(custom) == ["type", "customType", "data", "id", "parentId", "timestamp"]
    assert [e["id"] for e in manager.get_branch()] == [msg_id, custom_id, msg2_id]
    assert len(manager.build_session_context()["messages"]) == 2


def test_46b_custom_entry_without_data_omits_key() -> None:
    manager = SessionManager.in_memory()
    manager.append_custom_entry("flag")
    assert "data" not in manager.get_entries()[0]


# ---------------------------------------------------------------------------------------------
# tree-traversal.test.ts


def test_47_append_message_parent_chain() -> None:
    manager = SessionManager.in_memory()
    id1 = manager.append_message(user_msg("first"))
    id2 = manager.append_message(assistant_msg("second"))
    id3 = manager.append_message(user_msg("third"))
    entries = manager.get_entries()
    assert [(e["id"], e["parentId"], e["type"]) for e in entries] == [
        (id1, None, "message"),
        (id2, id1, "message"),
        (id3, id2, "message"),
    ]
    assert list(entries[0]) == ["type", "id", "parentId", "timestamp", "message"]


def test_48_thinking_level_change_in_tree() -> None:
    manager = SessionManager.in_memory()
    msg_id = manager.append_message(user_msg("hello"))
    thinking_id = manager.append_thinking_level_change("high")
    msg2_id = manager.append_message(assistant_msg("response"))
    thinking = manager.get_entry(thinking_id)
    assert thinking is not None
    assert thinking["type"] == "thinking_level_change"
    assert thinking["thinkingLevel"] == "high"
    assert thinking["parentId"] == msg_id
    assert manager.get_entry(msg2_id)["parentId"] == thinking_id  # type: ignore[index]


def test_49_model_change_in_tree() -> None:
    manager = SessionManager.in_memory()
    msg_id = manager.append_message(user_msg("hello"))
    model_id = manager.append_model_change("openai", "gpt-4")
    msg2_id = manager.append_message(assistant_msg("response"))
    entry = manager.get_entry(model_id)
    assert entry is not None
    assert (entry["type"], entry["provider"], entry["modelId"], entry["parentId"]) == (
        "model_change",
        "openai",
        "gpt-4",
        msg_id,
    )
    assert manager.get_entry(msg2_id)["parentId"] == model_id  # type: ignore[index]


def test_50_compaction_in_tree() -> None:
    manager = SessionManager.in_memory()
    id1 = manager.append_message(user_msg("1"))
    id2 = manager.append_message(assistant_msg("2"))
    compaction_id = manager.append_compaction("summary", id1, 1000)
    id3 = manager.append_message(user_msg("3"))
    entry = manager.get_entry(compaction_id)
    assert entry is not None
    assert (entry["summary"], entry["firstKeptEntryId"], entry["tokensBefore"], entry["parentId"]) == (
        "summary",
        id1,
        1000,
        id2,
    )
    assert "details" not in entry and "fromHook" not in entry
    assert manager.get_entry(id3)["parentId"] == compaction_id  # type: ignore[index]
    detailed = manager.append_compaction("s2", id3, 5, {"readFiles": [], "modifiedFiles": []}, False)
    assert list(manager.get_entry(detailed) or {}) == [
        "type",
        "id",
        "parentId",
        "timestamp",
        "summary",
        "firstKeptEntryId",
        "tokensBefore",
        "details",
        "fromHook",
    ]


def test_51_custom_entry_in_tree() -> None:
    manager = SessionManager.in_memory()
    msg_id = manager.append_message(user_msg("hello"))
    custom_id = manager.append_custom_entry("my_hook", {"key": "value"})
    msg2_id = manager.append_message(assistant_msg("response"))
    custom = manager.get_entry(custom_id)
    assert custom is not None and custom["parentId"] == msg_id
    assert manager.get_entry(msg2_id)["parentId"] == custom_id  # type: ignore[index]


def test_52_leaf_advances_after_each_append() -> None:
    manager = SessionManager.in_memory()
    assert manager.leaf_id is None
    id1 = manager.append_message(user_msg("1"))
    assert manager.leaf_id == id1
    id2 = manager.append_message(assistant_msg("2"))
    assert manager.leaf_id == id2
    id3 = manager.append_thinking_level_change("high")
    assert manager.leaf_id == id3


def test_53_get_branch_empty_session() -> None:
    assert SessionManager.in_memory().get_branch() == []


def test_54_get_branch_single_entry() -> None:
    manager = SessionManager.in_memory()
    id1 = manager.append_message(user_msg("1"))
    assert [e["id"] for e in manager.get_branch()] == [id1]


def test_55_get_branch_full_path() -> None:
    manager = SessionManager.in_memory()
    id1 = manager.append_message(user_msg("1"))
    id2 = manager.append_message(assistant_msg("2"))
    id3 = manager.append_thinking_level_change("high")
    id4 = manager.append_message(user_msg("3"))
    assert [e["id"] for e in manager.get_branch()] == [id1, id2, id3, id4]


def test_56_get_branch_from_specified_entry() -> None:
    manager = SessionManager.in_memory()
    id1 = manager.append_message(user_msg("1"))
    id2 = manager.append_message(assistant_msg("2"))
    manager.append_message(user_msg("3"))
    manager.append_message(assistant_msg("4"))
    assert [e["id"] for e in manager.get_branch(id2)] == [id1, id2]
    assert manager.get_branch("unknown") == []
    assert manager.get_branch(None) == []


def test_57_get_tree_empty() -> None:
    assert SessionManager.in_memory().get_tree() == []


def test_58_get_tree_linear() -> None:
    manager = SessionManager.in_memory()
    ids = [
        manager.append_message(user_msg("1")),
        manager.append_message(assistant_msg("2")),
        manager.append_message(user_msg("3")),
        manager.append_message(assistant_msg("4")),
    ]
    tree = manager.get_tree()
    assert len(tree) == 1
    node = tree[0]
    for entry_id in ids[:-1]:
        assert node.record.id == entry_id and len(node.children) == 1
        node = node.children[0]
    assert node.record.id == ids[-1] and node.children == []


def test_59_get_tree_after_branch() -> None:
    manager = SessionManager.in_memory()
    id1 = manager.append_message(user_msg("1"))
    id2 = manager.append_message(assistant_msg("2"))
    id3 = manager.append_message(user_msg("3"))
    manager.branch(id2)
    id4 = manager.append_message(user_msg("4-branch"))
    tree = manager.get_tree()
    assert tree[0].record.id == id1
    node2 = tree[0].children[0]
    assert node2.record.id == id2
    assert [c.record.id for c in node2.children] == [id3, id4]


def test_60_multiple_branches_at_same_point() -> None:
    manager = SessionManager.in_memory()
    manager.append_message(user_msg("root"))
    id2 = manager.append_message(assistant_msg("response"))
    branch_ids = []
    for name in ("A", "B", "C"):
        manager.branch(id2)
        branch_ids.append(manager.append_message(user_msg(f"branch-{name}")))
    node2 = manager.get_tree()[0].children[0]
    assert [c.record.id for c in node2.children] == branch_ids


def test_61_deep_branching() -> None:
    manager = SessionManager.in_memory()
    manager.append_message(user_msg("1"))
    id2 = manager.append_message(assistant_msg("2"))
    id3 = manager.append_message(user_msg("3"))
    id4 = manager.append_message(assistant_msg("4"))
    manager.branch(id2)
    id5 = manager.append_message(user_msg("5"))
    id6 = manager.append_message(assistant_msg("6"))
    manager.branch(id5)
    id7 = manager.append_message(assistant_msg("7"))
    node2 = manager.get_tree()[0].children[0]
    assert {c.record.id for c in node2.children} == {id3, id5}
    node3 = next(c for c in node2.children if c.record.id == id3)
    node5 = next(c for c in node2.children if c.record.id == id5)
    assert [c.record.id for c in node3.children] == [id4]
    assert {c.record.id for c in node5.children} == {id6, id7}


def test_62_branch_moves_leaf() -> None:
    manager = SessionManager.in_memory()
    id1 = manager.append_message(user_msg("1"))
    manager.append_message(assistant_msg("2"))
    manager.branch(id1)
    assert manager.leaf_id == id1


def test_63_branch_unknown_throws() -> None:
    with pytest.raises(EntryNotFoundError, match=r"^Entry nonexistent not found$"):
        SessionManager.in_memory().branch("nonexistent")


def test_64_appends_after_branch_are_children_of_branch_point() -> None:
    manager = SessionManager.in_memory()
    id1 = manager.append_message(user_msg("1"))
    manager.append_message(assistant_msg("2"))
    manager.branch(id1)
    new_id = manager.append_message(assistant_msg("branched"))
    assert manager.get_entry(new_id)["parentId"] == id1  # type: ignore[index]


def test_64b_reset_leaf_starts_new_root() -> None:
    manager = SessionManager.in_memory()
    manager.append_message(user_msg("1"))
    manager.reset_leaf()
    assert manager.leaf_id is None
    assert manager.get_leaf_entry() is None
    assert manager.build_session_context()["messages"] == []
    new_root = manager.append_message(user_msg("fresh"))
    assert manager.get_entry(new_root)["parentId"] is None  # type: ignore[index]
    assert len(manager.get_tree()) == 2
    # a label appended at a null leaf becomes a new root too (pi semantics, spec §8.9)
    manager.reset_leaf()
    label = manager.append_label_change(new_root, "x")
    assert manager.get_entry(label)["parentId"] is None  # type: ignore[index]


def test_65_branch_with_summary() -> None:
    manager = SessionManager.in_memory()
    id1 = manager.append_message(user_msg("1"))
    manager.append_message(assistant_msg("2"))
    manager.append_message(user_msg("3"))
    summary_id = manager.branch_with_summary(id1, "Summary of abandoned work")
    assert manager.leaf_id == summary_id
    entry = manager.get_entry(summary_id)
    assert entry is not None
    assert entry["type"] == "branch_summary"
    assert entry["parentId"] == id1
    assert entry["fromId"] == id1
    assert entry["summary"] == "Summary of abandoned work"
    assert list(entry) == ["type", "id", "parentId", "timestamp", "fromId", "summary"]
    root_summary = manager.branch_with_summary(None, "from root", {"readFiles": []}, True)
    entry = manager.get_entry(root_summary)
    assert entry is not None
    assert (entry["parentId"], entry["fromId"], entry["details"], entry["fromHook"]) == (
        None,
        "root",
        {"readFiles": []},
        True,
    )


def test_66_branch_with_summary_unknown_throws() -> None:
    manager = SessionManager.in_memory()
    manager.append_message(user_msg("1"))
    with pytest.raises(EntryNotFoundError, match=r"^Entry nonexistent not found$"):
        manager.branch_with_summary("nonexistent", "summary")


def test_67_leaf_entry_empty_session() -> None:
    assert SessionManager.in_memory().get_leaf_entry() is None


def test_68_leaf_entry_current() -> None:
    manager = SessionManager.in_memory()
    manager.append_message(user_msg("1"))
    id2 = manager.append_message(assistant_msg("2"))
    leaf = manager.get_leaf_entry()
    assert leaf is not None and leaf["id"] == id2


def test_69_get_entry_unknown() -> None:
    assert SessionManager.in_memory().get_entry("nonexistent") is None


def test_70_get_entry_by_id() -> None:
    manager = SessionManager.in_memory()
    id1 = manager.append_message(user_msg("first"))
    entry = manager.get_entry(id1)
    assert entry is not None
    assert entry["type"] == "message"
    assert entry["message"]["role"] == "user"
    assert entry["message"]["content"] == "first"


def test_71_context_from_current_branch_only() -> None:
    manager = SessionManager.in_memory()
    manager.append_message(user_msg("msg1"))
    id2 = manager.append_message(assistant_msg("msg2"))
    manager.append_message(user_msg("msg3"))
    manager.branch(id2)
    manager.append_message(assistant_msg("msg4-branch"))
    assert texts(manager.build_session_context()["messages"]) == ["msg1", "msg2", "msg4-branch"]


def test_72_create_branched_session_unknown_throws() -> None:
    with pytest.raises(EntryNotFoundError, match=r"^Entry nonexistent not found$"):
        SessionManager.in_memory().create_branched_session("nonexistent")


def test_73_create_branched_session_in_memory() -> None:
    manager = SessionManager.in_memory()
    id1 = manager.append_message(user_msg("1"))
    id2 = manager.append_message(assistant_msg("2"))
    manager.append_message(user_msg("3"))
    old_id = manager.session_id
    assert manager.create_branched_session(id2) is None
    assert manager.session_id != old_id
    assert "parentSession" not in manager.get_header()
    assert [e["id"] for e in manager.get_entries()] == [id1, id2]
    assert manager.session_file is None


def test_74_create_branched_session_extracts_path() -> None:
    manager = SessionManager.in_memory()
    id1 = manager.append_message(user_msg("1"))
    id2 = manager.append_message(assistant_msg("2"))
    manager.append_message(user_msg("3"))
    manager.branch(id2)
    id4 = manager.append_message(user_msg("4"))
    id5 = manager.append_message(assistant_msg("5"))
    manager.create_branched_session(id5)
    assert [e["id"] for e in manager.get_entries()] == [id1, id2, id4, id5]


def test_75_no_duplicates_when_forking_from_first_user_message(session_dir: Path) -> None:
    manager = SessionManager.create("/proj", session_dir)
    id1 = manager.append_message(user_msg("first question"))
    manager.append_message(assistant_msg("first answer"))
    manager.append_message(user_msg("second question"))
    manager.append_message(assistant_msg("second answer"))
    source = manager.session_file
    new_file = manager.create_branched_session(id1)
    assert new_file is not None and new_file != source
    assert manager.get_header()["parentSession"] == source
    assert not Path(new_file).exists()
    manager.append_custom_entry("preset-state", {"name": "plan"})
    assert not Path(new_file).exists()
    manager.append_message(assistant_msg("new answer"))
    objects = read_objects(Path(new_file))
    assert [o["type"] for o in objects].count("session") == 1
    ids = [o["id"] for o in objects if o["type"] != "session"]
    assert len(ids) == len(set(ids)) == 3
    assert objects[0]["id"] == manager.session_id


def test_76_branched_session_written_immediately_with_assistant(session_dir: Path) -> None:
    manager = SessionManager.create("/proj", session_dir)
    manager.append_message(user_msg("q1"))
    id2 = manager.append_message(assistant_msg("a1"))
    manager.append_message(user_msg("q2"))
    manager.append_message(assistant_msg("a2"))
    new_file = manager.create_branched_session(id2)
    assert new_file is not None and Path(new_file).exists()
    objects = read_objects(Path(new_file))
    assert [o["type"] for o in objects] == ["session", "message", "message"]
    assert Path(new_file).name.endswith(f"_{manager.session_id}.jsonl")
    # appending continues the new file, one line per entry
    manager.append_message(user_msg("q3"))
    assert len(file_lines(Path(new_file))) == 4


# ---------------------------------------------------------------------------------------------
# session-info-modified-timestamp.test.ts


def test_77_modified_uses_last_message_timestamp(session_dir: Path) -> None:
    path = session_dir / "s.jsonl"
    write_jsonl(path, [{**header("s1"), "timestamp": "1970-01-01T00:00:00.000Z"}])
    before = path.read_bytes()
    manager = SessionManager.open(path)
    stamp = 1_767_225_600_123  # 2026-01-01T00:00:00.123Z
    manager.append_message(assistant_msg("done", timestamp=stamp))
    lines = file_lines(path)
    assert len(lines) == 2 and path.read_bytes().startswith(before)
    infos = list_sessions("/somewhere/else", session_dir)
    assert len(infos) == 1
    assert infos[0].modified == "2026-01-01T00:00:00.123Z"
    assert infos[0].modified_ms == stamp
    assert infos[0].message_count == 1


def test_77b_session_info_fields_and_name_clearing(session_dir: Path) -> None:
    """Delta §1: the last session_info in file order wins, an empty name clears it."""
    manager = SessionManager.create("/proj", session_dir)
    manager.append_message(user_msg("hello world"))
    manager.append_message(assistant_msg("hi"))
    manager.append_session_info("  Old name  ")
    assert manager.get_session_name() == "Old name"
    assert manager.get_entries()[-1]["name"] == "Old name"
    [info] = list_sessions("/proj", session_dir)
    assert (info.name, info.first_message, info.message_count, info.cwd) == (
        "Old name",
        "hello world",
        2,
        "/proj",
    )
    manager.append_session_info("")
    assert manager.get_session_name() is None
    [info] = list_sessions("/proj", session_dir)
    assert info.name is None


# ---------------------------------------------------------------------------------------------
# session-selector-search.test.ts, as far as search_sessions covers it (78–80, 82, 83)


def _info(session_id: str, text: str, modified_ms: float = 0.0, name: str | None = None) -> SessionInfo:
    return SessionInfo(
        path=f"/s/{session_id}.jsonl",
        id=session_id,
        cwd="/proj",
        name=name,
        parent_session_path=None,
        created="",
        modified="",
        modified_ms=modified_ms,
        message_count=1,
        first_message=text,
        messages_text=text.encode(),
    )


def test_78_quoted_phrase_with_whitespace_normalisation() -> None:
    infos = [_info("a", "node\n\n   cve was discussed"), _info("b", "node something cve")]
    assert [i.id for i in search_sessions(infos, '"node cve"')] == ["a"]


def test_79_regex_is_case_insensitive() -> None:
    infos = [_info("a", "Brave is great"), _info("b", "bravery is not brave-free"), _info("c", "nothing")]
    result = search_sessions(infos, r"re:\bbrave\b")
    assert [i.id for i in result] == ["a", "b"]  # "brave-free" has a word boundary after "brave"
    infos = [_info("a", "Brave is great"), _info("b", "bravery")]
    assert [i.id for i in search_sessions(infos, r"re:\bbrave\b")] == ["a"]


def test_80_filter_keeps_input_order() -> None:
    infos = [_info("c", "apple pie", 3), _info("a", "banana"), _info("b", "apple tart", 1)]
    assert [i.id for i in search_sessions(infos, "apple")] == ["c", "b"]


def test_80b_all_tokens_must_match() -> None:
    infos = [_info("a", "apple pie"), _info("b", "apple tart")]
    assert [i.id for i in search_sessions(infos, 'apple "pie"')] == ["a"]
    assert [i.id for i in search_sessions(infos, "APPLE tart")] == ["b"]


def test_82_invalid_regex_returns_empty() -> None:
    assert search_sessions([_info("a", "(")], "re:(") == []
    assert search_sessions([_info("a", "x")], "re:") == []


def test_83_empty_query_returns_all_in_order() -> None:
    infos = [_info("b", "x"), _info("a", "y")]
    assert search_sessions(infos, "") == infos
    assert search_sessions(infos, "   ") == infos
    assert search_sessions(infos, None) == infos
