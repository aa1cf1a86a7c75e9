"""Leaf persistence, whole-file rewrites (migration, fork), lossless lines and JS number format.

* The leaf survives a reopen through a side file in ``<agentDir>/pi-lsp/leaves/`` while the
  session file stays byte-identical; once anyone appends, pi's rule (last entry) applies again.
* Migration replaces the file atomically: a failure at any point leaves the original intact, and a
  file that grew during the migration is not replaced (``SessionFileConflictError``).
* Lines we did not write are kept byte for byte (unknown fields and entry types, odd number forms);
  lines we write are serialised like ``JSON.stringify``.
* ``fork_from`` of a v1 file gives migrated entries (pi copies them unmigrated: spec §8.3).
* No flush sequence writes a second header (pi does: spec §8.1, delta §3).
"""

from __future__ import annotations

import json
import os
import random
import shutil
from pathlib import Path
from typing import Any

import orjson
import pytest

from pi_lsp.jscompat import js_number
from pi_lsp.session import InvalidSessionFileError, SessionFileConflictError, SessionManager
from pi_lsp.session import store as store_module
from pi_lsp.session import writer as writer_module
from pi_lsp.session.jsonl import dumps_compact, loads_line
from tests.oracle import FIXTURES, PI_FIXTURES, PiOracle
from tests.session.helpers import assistant_msg, file_lines, read_objects, user_msg, write_jsonl

V1_LINES: list[dict[str, Any]] = [
    {"type": "session", "id": "v1-session", "timestamp": "2025-01-01T00:00:00.000Z", "cwd": "/old"},
    {"type": "message", "timestamp": "2025-01-01T00:00:01.000Z", "message": user_msg("one", 1)},
    {
        "type": "message",
        "timestamp": "2025-01-01T00:00:02.000Z",
        "message": assistant_msg("two", timestamp=2),
    },
    {
        "type": "compaction",
        "timestamp": "2025-01-01T00:00:03.000Z",
        "summary": "sum",
        "firstKeptEntryIndex": 2,
        "tokensBefore": 10,
    },
    {
        "type": "message",
        "timestamp": "2025-01-01T00:00:04.000Z",
        "message": {
            "role": "hookMessage",
            "customType": "h",
            "content": "hook",
            "display": True,
            "timestamp": 4,
        },
    },
]


def _snapshot(path: Path) -> tuple[bytes, int]:
    return path.read_bytes(), path.stat().st_mtime_ns


def _session(session_dir: Path) -> tuple[SessionManager, list[str]]:
    manager = SessionManager.create("/proj", session_dir)
    ids = [
        manager.append_message(user_msg("q1")),
        manager.append_message(assistant_msg("a1")),
        manager.append_message(user_msg("q2")),
        manager.append_message(assistant_msg("a2")),
    ]
    return manager, ids


# ---------------------------------------------------------------------------------------------
# leaf persistence


def test_leaf_survives_reopen_and_file_is_untouched(session_dir: Path, agent_dir: Path) -> None:
    manager, ids = _session(session_dir)
    path = Path(manager.session_file or "")
    os.utime(path, ns=(10**9, 10**9))
    before = _snapshot(path)
    manager.branch(ids[1])
    assert _snapshot(path) == before
    assert list((agent_dir / "pi-lsp" / "leaves").iterdir())  # the side file, not the session file
    reopened = SessionManager.open(path)
    assert reopened.leaf_id == ids[1]
    assert [
        m["content"][0]["text"] if isinstance(m["content"], list) else m["content"]
        for m in reopened.build_session_context()["messages"]
    ] == ["q1", "a1"]
    reopened.reset_leaf()
    assert _snapshot(path) == before
    assert SessionManager.open(path).leaf_id is None
    # moving back to the last entry forgets the side file: reopen at the last line again
    reopened.branch(ids[3])
    assert not list((agent_dir / "pi-lsp" / "leaves").iterdir())
    assert SessionManager.open(path).leaf_id == ids[3]
    assert _snapshot(path) == before


def test_leaf_falls_back_to_pi_rule_after_any_append(session_dir: Path) -> None:
    manager, ids = _session(session_dir)
    path = Path(manager.session_file or "")
    manager.branch(ids[0])
    other = SessionManager.open(path)
    assert other.leaf_id == ids[0]
    other.branch(ids[3])
    new_id = other.append_message(user_msg("appended by someone else"))
    assert SessionManager.open(path).leaf_id == new_id
    # a foreign writer (pi) appending also wins over the saved leaf
    manager2 = SessionManager.open(path)
    manager2.branch(ids[1])
    with path.open("ab") as handle:
        handle.write(
            dumps_compact(
                {
                    "type": "custom",
                    "customType": "pi",
                    "id": "pi000001",
                    "parentId": new_id,
                    "timestamp": "2026-01-01T00:00:00.000Z",
                }
            )
            + b"\n"
        )
    assert SessionManager.open(path).leaf_id == "pi000001"


def test_own_append_after_branch_clears_saved_leaf(session_dir: Path, agent_dir: Path) -> None:
    manager, ids = _session(session_dir)
    manager.branch(ids[1])
    new_id = manager.append_message(user_msg("on the side"))
    assert not list((agent_dir / "pi-lsp" / "leaves").iterdir())
    reopened = SessionManager.open(Path(manager.session_file or ""))
    assert reopened.leaf_id == new_id
    assert reopened.get_entry(new_id)["parentId"] == ids[1]  # type: ignore[index]


def test_leaf_moves_before_first_write_and_stale_side_files(session_dir: Path, agent_dir: Path) -> None:
    manager = SessionManager.create("/proj", session_dir)
    first = manager.append_message(user_msg("q"))
    manager.reset_leaf()
    manager.branch(first)  # no file yet: nothing to remember, nothing written
    assert not Path(manager.session_file or "").exists()
    leaves = agent_dir / "pi-lsp" / "leaves"
    assert not leaves.exists() or not list(leaves.iterdir())
    manager.append_message(assistant_msg("a"))
    path = Path(manager.session_file or "")
    manager.branch(first)
    # a side file naming an entry that no longer exists (e.g. file replaced) is ignored
    [side] = list(leaves.iterdir())
    side.write_bytes(
        orjson.dumps({"file": str(path), "leafId": "gone", "lastEntryId": manager.get_entries()[-1]["id"]})
    )
    assert SessionManager.open(path).leaf_id == manager.get_entries()[-1]["id"]
    side.write_bytes(b"not json")
    assert SessionManager.open(path).leaf_id == manager.get_entries()[-1]["id"]


@pytest.mark.oracle
def test_pi_reopens_at_the_last_line_after_our_leaf_move(session_dir: Path, pi_oracle: PiOracle) -> None:
    manager, ids = _session(session_dir)
    manager.branch(ids[0])
    pi = pi_oracle.result("load", path=manager.session_file, treeFormat="none")
    assert pi["leafId"] == ids[3]


# ---------------------------------------------------------------------------------------------
# migration: atomic, conflict-aware, lossless for lines it cannot parse


def test_migration_rewrites_v1_file_and_keeps_malformed_lines(session_dir: Path) -> None:
    path = write_jsonl(session_dir / "v1.jsonl", V1_LINES)
    lines = path.read_bytes().split(b"\n")
    lines.insert(2, b"{this is not json")
    data = b"\n".join(lines)  # ends with "\n"
    path.write_bytes(data + b'{"type":"message","timestamp":"2025-01-0')  # torn last line
    manager = SessionManager.open(path)
    out = path.read_bytes().split(b"\n")
    assert out[2] == b"{this is not json"
    assert b'{"type":"message","timestamp":"2025-01-0' in out, "a torn last line must survive the rewrite"
    entries = manager.get_entries()
    assert [e["type"] for e in entries] == ["message", "message", "compaction", "message"]
    assert entries[2]["firstKeptEntryId"] == entries[1]["id"]
    assert entries[3]["message"]["role"] == "custom"
    assert manager.get_header()["version"] == 3
    assert {d.get("line") for d in manager.diagnostics} >= {3}


@pytest.mark.parametrize("failure", ["replace", "fsync", "write"])
def test_migration_failure_leaves_original_intact(
    session_dir: Path, monkeypatch: pytest.MonkeyPatch, failure: str
) -> None:
    path = write_jsonl(session_dir / "v1.jsonl", V1_LINES)
    before = _snapshot(path)

    def boom(*args: Any, **kwargs: Any) -> Any:
        raise OSError(28, "No space left on device")

    if failure == "replace":
        monkeypatch.setattr(writer_module.os, "replace", boom)
    elif failure == "fsync":
        monkeypatch.setattr(writer_module.os, "fsync", boom)
    else:
        real_write = writer_module.write_all

        def half_then_fail(fd: int, data: bytes) -> None:
            real_write(fd, data[: len(data) // 2])
            raise OSError(5, "I/O error")

        monkeypatch.setattr(writer_module, "write_all", half_then_fail)
    with pytest.raises(OSError):
        SessionManager.open(path)
    assert _snapshot(path) == before
    assert sorted(p.name for p in session_dir.iterdir()) == ["v1.jsonl"]  # no temp file left behind
    monkeypatch.undo()
    SessionManager.open(path)
    assert read_objects(path)[0]["version"] == 3


def test_migration_refuses_when_file_grew_meanwhile(
    session_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write_jsonl(session_dir / "v1.jsonl", V1_LINES)
    real_migrate = store_module.migrate_entries
    extra = (
        b'{"type":"message","timestamp":"2025-01-01T00:00:05.000Z",'
        b'"message":{"role":"user","content":"late"}}\n'
    )

    def migrate_while_someone_appends(objects: Any) -> int:
        with path.open("ab") as handle:
            handle.write(extra)
        return real_migrate(objects)

    monkeypatch.setattr(store_module, "migrate_entries", migrate_while_someone_appends)
    original = path.read_bytes()
    with pytest.raises(SessionFileConflictError):
        SessionManager.open(path)
    assert path.read_bytes() == original + extra
    assert sorted(p.name for p in session_dir.iterdir()) == ["v1.jsonl"]


def test_migration_preserves_permissions(session_dir: Path) -> None:
    path = write_jsonl(session_dir / "v1.jsonl", V1_LINES)
    path.chmod(0o600)
    SessionManager.open(path)
    assert path.stat().st_mode & 0o777 == 0o600


@pytest.mark.parametrize("version", ["3.0", '"3"', "4"])
def test_current_or_newer_versions_in_other_spellings_are_not_migrated(
    session_dir: Path, version: str
) -> None:
    """pi compares ``version >= 3`` with JS semantics, so ``3.0``/``"3"``/``4`` headers are current
    and their tree must not be rebuilt as a v1 chain (which would assign new ids)."""
    path = session_dir / "s.jsonl"
    content = (
        f'{{"type":"session","version":{version},"id":"s","timestamp":"2025-01-01T00:00:00Z","cwd":"/p"}}\n'
        '{"type":"message","id":"a","parentId":null,"timestamp":"2025-01-01T00:00:01Z",'
        '"message":{"role":"user","content":"x","timestamp":1}}\n'
        '{"type":"message","id":"b","parentId":null,"timestamp":"2025-01-01T00:00:02Z",'
        '"message":{"role":"user","content":"y","timestamp":2}}\n'
    ).encode()
    path.write_bytes(content)
    manager = SessionManager.open(path)
    assert path.read_bytes() == content
    assert [(e["id"], e["parentId"]) for e in manager.get_entries()] == [("a", None), ("b", None)]


def test_utf8_bom_before_the_header_is_accepted(session_dir: Path) -> None:
    """pi trims the file content first (``String.trim`` removes U+FEFF), so a BOM is harmless."""
    path = session_dir / "bom.jsonl"
    write_jsonl(
        path,
        [{"type": "session", "version": 3, "id": "bom", "timestamp": "2025-01-01T00:00:00Z", "cwd": "/p"}],
    )
    content = b"\xef\xbb\xbf" + path.read_bytes()
    path.write_bytes(content)
    manager = SessionManager.open(path)
    assert manager.session_id == "bom"
    manager.append_message(user_msg("after bom"))
    assert path.read_bytes().startswith(content)
    assert SessionManager.open(path).get_entries()[0]["message"]["content"] == "after bom"


# ---------------------------------------------------------------------------------------------
# lossless lines and JSON.stringify formatting

ODD_LINES = [
    b'{"type":"session","version":3,"id":"odd","timestamp":"2025-01-01T00:00:00Z","cwd":"/p","future":{"x":1.0}}',
    b'{"id":"m1","type":"message","parentId":null,"timestamp":"2025-01-01T00:00:01Z","message":{"role":"user",'
    b'"content":"caf\\u00e9 \\ud83d\\ude80","timestamp":1.0,"extra":[1e5,1E+2,-0,0.10,12345678901234567890]},'
    b'"unknownTop":{"nested":true}}',
    b'{"type":"hologram","id":"h1","parentId":"m1","timestamp":"2025-01-01T00:00:02Z","payload":[null,{"a":"b"}]}',
    b'{"type":"message","id":"m2","parentId":"h1","timestamp":"2025-01-01T00:00:03Z",'
    b'"message":{"role":"assistant","content":[],"api":"x","provider":"p","model":"m","usage":{"input":1.50},'
    b'"stopReason":"stop","timestamp":2,"responseModel":"m-2026","diagnostics":[]}}',
    b'{"type":"label","id":"l1","parentId":"m2","timestamp":"2025-01-01T00:00:04Z","targetId":"m1","label":"L",'
    b'"color":"red"}',
]


def test_unknown_fields_and_types_survive_byte_for_byte(session_dir: Path) -> None:
    path = session_dir / "odd.jsonl"
    original = b"\n".join(ODD_LINES) + b"\n"
    path.write_bytes(original)
    manager = SessionManager.open(path)
    assert [e["id"] for e in manager.get_entries()] == ["m1", "h1", "m2", "l1"]
    assert manager.get_entry("m1")["unknownTop"] == {"nested": True}  # type: ignore[index]
    assert manager.get_entry("m1")["message"]["content"] == "café 🚀"  # type: ignore[index]
    assert manager.get_entry("h1")["payload"] == [None, {"a": "b"}]  # type: ignore[index]
    assert manager.get_label("m1") == "L"
    context = manager.build_session_context()
    assert context["messages"][0]["extra"] == [1e5, 1e2, 0, 0.10, 12345678901234567890]
    assert context["messages"][1]["responseModel"] == "m-2026"
    assert [r.record.id for r in manager.get_tree()] == ["m1"]
    new_id = manager.append_custom_entry("after", {"ok": True})
    assert path.read_bytes().startswith(original)  # appending never rewrites earlier lines
    # a branched session copies the kept lines verbatim
    new_file = manager.create_branched_session(new_id)
    assert new_file is not None and Path(new_file).exists()  # the path holds an assistant (m2)
    copied = file_lines(Path(new_file))
    for line in ODD_LINES[1:4]:
        assert line in copied
    reopened = SessionManager.open(Path(new_file))
    assert reopened.get_label("m1") == "L"
    assert reopened.get_entry("m1") == manager.get_entry("m1")


JS_NUMBERS = [
    (0.000009, "0.000009"),
    (1e-7, "1e-7"),
    (1.2e-7, "1.2e-7"),
    (2.0, "2"),
    (-2.0, "-2"),
    (1.5, "1.5"),
    (-0.0, "0"),
    (0.1 + 0.2, "0.30000000000000004"),
    (1e20, "100000000000000000000"),
    (1e21, "1e+21"),
    (1.5e300, "1.5e+300"),
    (5e-324, "5e-324"),
    (1.7976931348623157e308, "1.7976931348623157e+308"),
    (123456789.123, "123456789.123"),
    (0.000001, "0.000001"),
    (9007199254740992.0, "9007199254740992"),
    (0.013875000000000002, "0.013875000000000002"),
    (float("nan"), "null"),
    (float("inf"), "null"),
    (float("-inf"), "null"),
]


@pytest.mark.parametrize(("value", "expected"), JS_NUMBERS)
def test_new_lines_format_numbers_like_json_stringify(value: float, expected: str) -> None:
    assert dumps_compact({"v": value}) == f'{{"v":{expected}}}'.encode()
    if expected != "null":
        assert js_number(value) == expected


def test_new_lines_are_compact_utf8_like_json_stringify(session_dir: Path) -> None:
    manager = SessionManager.create("/proj", session_dir)
    manager.append_message(user_msg("q", 1))
    manager.append_message(assistant_msg("a", timestamp=2))
    text = 'é 🚀 \u2028 \x01 \x7f " \\ </script>'
    manager.append_custom_entry("t", {"s": text, "f": [2.0, 0.000009, 1e-7], "n": None, "b": False})
    line = file_lines(Path(manager.session_file or ""))[-1]
    assert line.startswith(b'{"type":"custom","customType":"t","data":{"s":"')
    assert '"s":"é 🚀 \u2028 \\u0001 \x7f \\" \\\\ </script>"'.encode() in line
    assert b'"f":[2,0.000009,1e-7],"n":null,"b":false},"id":"' in line
    # lone surrogates cannot be UTF-8: they are written escaped and read back unchanged
    manager.append_custom_entry("s", {"s": "bad \ud800 surrogate"})
    last = file_lines(Path(manager.session_file or ""))[-1]
    assert b"\\ud800" in last
    assert (
        SessionManager.open(Path(manager.session_file or "")).get_entries()[-1]["data"]["s"]
        == "bad \ud800 surrogate"
    )


def test_message_lines_are_the_whole_entry_serialised(session_dir: Path) -> None:
    """Messages are written as a head around the message's JSON (store._append_message): the same
    bytes as serialising the whole entry, also after a parent id that needs escaping, and the
    record hands out the message's bytes as they are in the line."""
    odd_parent = 'p"\\é\u2028'
    path = write_jsonl(
        session_dir / "odd.jsonl",
        [
            {
                "type": "session",
                "version": 3,
                "id": "s-odd",
                "timestamp": "2026-01-01T00:00:00.000Z",
                "cwd": "/p",
            },
            {
                "type": "message",
                "id": odd_parent,
                "parentId": None,
                "timestamp": "2026-01-01T00:00:01.000Z",
                "message": user_msg("first", 1),
            },
        ],
    )
    manager = SessionManager.open(path)
    messages = [
        assistant_msg("a é 🚀 \u2028 </script>", timestamp=2),
        {"role": "user", "content": [{"type": "text", "text": "x"}], "timestamp": 3.0, "n": [2.0, 1e-6, 0.5]},
        {"role": "user", "content": "bad \ud800 surrogate", "timestamp": 4},
    ]
    for message in messages:
        manager.append_message(message)
    lines = file_lines(path)[-3:]
    for line, message in zip(lines, messages, strict=True):
        entry = loads_line(line)  # the standard library's reader for the lone surrogate
        assert list(entry) == ["type", "id", "parentId", "timestamp", "message"]
        assert line == dumps_compact({**entry, "message": message})  # lone surrogate included
        record = manager.index.by_id[entry["id"]]
        assert record.raw == line and record.message_json() == dumps_compact(message)
    assert orjson.loads(lines[0])["parentId"] == odd_parent
    assert b'"timestamp":3,"n":[2,0.000001,0.5]}}' in lines[1]
    reopened = SessionManager.open(path)
    assert reopened.get_entries() == manager.get_entries()
    assert reopened.get_entries()[-1]["message"]["content"] == "bad \ud800 surrogate"


@pytest.mark.oracle
def test_number_and_string_formatting_matches_pi(session_dir: Path, pi_oracle: PiOracle) -> None:
    values = [v for v, expected in JS_NUMBERS if expected != "null"]
    data = {"numbers": values, "text": 'é 🚀 \u2028\u2029 \x00\x01\x1f\x7f " \\ / </script>'}
    pi = pi_oracle.result(
        "script",
        init={"kind": "create", "cwd": "/proj", "sessionDir": "$TMP/s"},
        steps=[
            {"method": "appendMessage", "args": [assistant_msg("a", timestamp=2)]},
            {"method": "appendCustomEntry", "args": ["t", data]},
        ],
        returnFiles=True,
    )
    [pi_text] = pi["files"].values()
    pi_line = pi_text.split("\n")[-2].encode()
    manager = SessionManager.create("/proj", session_dir)
    manager.append_message(assistant_msg("a", timestamp=2))
    manager.append_custom_entry("t", data)
    our_line = file_lines(Path(manager.session_file or ""))[-1]
    head = b'{"type":"custom","customType":"t","data":'
    assert our_line.split(b',"id":')[0] == pi_line.split(b',"id":')[0]
    assert our_line.startswith(head)


@pytest.mark.oracle
def test_lone_surrogates_are_written_as_pi_writes_them(session_dir: Path, pi_oracle: PiOracle) -> None:
    """A lone surrogate (a prompt may hold one: JSON lets a client send it) is escaped as
    JSON.stringify escapes it, and every other character of the line is written as pi writes it
    (UTF-8, not an escape)."""
    data = {"text": "é \ud800 🚀 \udc00 \x01 \u2028 x", "k\udbff": ["\ud83d"]}
    pi = pi_oracle.result(
        "script",
        init={"kind": "create", "cwd": "/proj", "sessionDir": "$TMP/s"},
        steps=[
            {"method": "appendMessage", "args": [assistant_msg("a", timestamp=2)]},  # pi then writes
            {"method": "appendCustomEntry", "args": ["t", data]},
        ],
        returnFiles=True,
    )
    [pi_text] = pi["files"].values()
    pi_line = pi_text.split("\n")[-2].encode("utf-8", "surrogatepass")
    manager = SessionManager.create("/proj", session_dir)
    manager.append_message(assistant_msg("a", timestamp=2))
    manager.append_custom_entry("t", data)
    our_line = file_lines(Path(manager.session_file or ""))[-1]
    assert our_line.split(b',"id":')[0] == pi_line.split(b',"id":')[0]
    assert b"\\ud800" in our_line and "é".encode() in our_line


# ---------------------------------------------------------------------------------------------
# fork_from


def test_fork_from_v1_file_gives_migrated_entries(session_dir: Path, tmp_path: Path) -> None:
    """pi's forkFrom copies v1 entries unmigrated (no ids, leaf undefined: spec §8.3); ours migrates."""
    source = write_jsonl(tmp_path / "v1-source.jsonl", V1_LINES)
    original = source.read_bytes()
    manager = SessionManager.fork_from(source, "/new/cwd", session_dir)
    assert source.read_bytes() == original  # the source is not migrated in place
    header = manager.get_header()
    assert (header["version"], header["cwd"], header["parentSession"]) == (3, "/new/cwd", str(source))
    entries = manager.get_entries()
    assert all(isinstance(e["id"], str) and len(e["id"]) == 8 for e in entries)
    assert [e["parentId"] for e in entries] == [None] + [e["id"] for e in entries[:-1]]
    assert entries[2]["firstKeptEntryId"] == entries[1]["id"]
    assert entries[3]["message"]["role"] == "custom"
    assert manager.leaf_id == entries[-1]["id"]
    assert manager.cwd == "/new/cwd"
    path = Path(manager.session_file or "")
    assert path.parent == session_dir and path.name.endswith(f"_{manager.session_id}.jsonl")
    assert [o["type"] for o in read_objects(path)].count("session") == 1
    manager.append_message(user_msg("continue"))
    assert [o["type"] for o in read_objects(path)].count("session") == 1
    with pytest.raises(InvalidSessionFileError):
        SessionManager.fork_from(tmp_path / "missing.jsonl", "/x", session_dir)


def test_fork_from_large_fixture(session_dir: Path, tmp_path: Path) -> None:
    source = tmp_path / "large.jsonl"
    shutil.copyfile(PI_FIXTURES / "large-session.jsonl", source)
    forked = SessionManager.fork_from(source, "/x", session_dir)
    opened = SessionManager.open(source)  # migrates the source copy (different random ids)
    assert len(forked.get_entries()) == len(opened.get_entries()) == 1018
    assert forked.build_session_context() == opened.build_session_context()


def test_fork_from_v3_keeps_all_branches_and_ids(session_dir: Path, tmp_path: Path) -> None:
    manager = SessionManager.create("/proj", tmp_path / "src")
    a = manager.append_message(user_msg("a"))
    b = manager.append_message(assistant_msg("b"))
    manager.branch(a)
    c = manager.append_message(assistant_msg("c"))
    manager.append_label_change(b, "side")
    forked = SessionManager.fork_from(manager.session_file or "", "/proj2", session_dir)
    assert [e["id"] for e in forked.get_entries()] == [e["id"] for e in manager.get_entries()]
    assert forked.get_label(b) == "side"
    assert forked.get_entry(c)["parentId"] == a  # type: ignore[index]


# ---------------------------------------------------------------------------------------------
# never a duplicate header


@pytest.mark.oracle
def test_pi_flush_bug_sequence_writes_no_duplicate_header(session_dir: Path, pi_oracle: PiOracle) -> None:
    """Delta §3: open [header, user] (no assistant), append a user, then an assistant. pi writes
    session,message,session,message,message,message; we append two lines."""
    lines = [
        {"type": "session", "version": 3, "id": "s", "timestamp": "2025-01-01T00:00:00.000Z", "cwd": "/p"},
        {
            "type": "message",
            "id": "u1",
            "parentId": None,
            "timestamp": "2025-01-01T00:00:01.000Z",
            "message": user_msg("first", 1),
        },
    ]
    pi = pi_oracle.result(
        "script",
        init={"kind": "open", "lines": lines},
        steps=[
            {"method": "appendMessage", "args": [user_msg("second", 2)]},
            {"method": "appendMessage", "args": [assistant_msg("answer", timestamp=3)]},
        ],
        returnFiles=True,
    )
    [pi_text] = pi["files"].values()
    pi_types = [orjson.loads(line)["type"] for line in pi_text.splitlines()]
    assert pi_types == ["session", "message", "session", "message", "message", "message"]  # pi's bug

    path = write_jsonl(session_dir / "s.jsonl", lines)
    manager = SessionManager.open(path)
    manager.append_message(user_msg("second", 2))
    manager.append_message(assistant_msg("answer", timestamp=3))
    assert [o["type"] for o in read_objects(path)] == ["session", "message", "message", "message"]
    assert len({o.get("id") for o in read_objects(path)}) == 4


def _start(kind: str, directory: Path, rng: random.Random) -> SessionManager:
    header = {
        "type": "session",
        "version": 3,
        "id": f"h-{kind}",
        "timestamp": "2025-01-01T00:00:00.000Z",
        "cwd": "/p",
    }
    user_line = {
        "type": "message",
        "id": "u0",
        "parentId": None,
        "timestamp": "2025-01-01T00:00:01.000Z",
        "message": user_msg("u0", 1),
    }
    if kind == "create":
        return SessionManager.create("/p", directory)
    if kind == "open-header-only":
        return SessionManager.open(write_jsonl(directory / "h.jsonl", [header]))
    if kind == "open-no-assistant":
        return SessionManager.open(write_jsonl(directory / "u.jsonl", [header, user_line]))
    if kind == "open-empty":
        (directory / "e.jsonl").write_bytes(b"")
        return SessionManager.open(directory / "e.jsonl")
    if kind == "open-missing":
        return SessionManager.open(directory / "missing.jsonl")
    if kind == "fork-no-assistant":
        source = write_jsonl(directory.parent / f"src-{rng.random()}.jsonl", [header, user_line])
        return SessionManager.fork_from(source, "/p", directory)
    if kind == "branched-no-assistant":
        manager = SessionManager.create("/p", directory)
        first = manager.append_message(user_msg("q"))
        manager.append_message(assistant_msg("a"))
        manager.create_branched_session(first)
        return manager
    if kind == "new-session":
        manager = SessionManager.create("/p", directory)
        manager.append_message(user_msg("q"))
        manager.append_message(assistant_msg("a"))
        manager.new_session()
        return manager
    raise AssertionError(kind)


START_KINDS = [
    "create",
    "open-header-only",
    "open-no-assistant",
    "open-empty",
    "open-missing",
    "fork-no-assistant",
    "branched-no-assistant",
    "new-session",
]


@pytest.mark.parametrize("kind", START_KINDS)
@pytest.mark.parametrize("seed", range(6))
def test_no_flush_sequence_writes_a_second_header(kind: str, seed: int, tmp_path: Path) -> None:
    rng = random.Random(seed)
    directory = tmp_path / "sessions"
    directory.mkdir()
    manager = _start(kind, directory, rng)
    for _ in range(rng.randrange(1, 12)):
        roll = rng.random()
        entries = manager.get_entries()
        if roll < 0.35:
            manager.append_message(user_msg("u"))
        elif roll < 0.55:
            manager.append_message(assistant_msg("a"))
        elif roll < 0.7:
            manager.append_custom_entry("c", {"n": 1})
        elif roll < 0.8 and entries:
            manager.append_label_change(entries[-1]["id"], "l")
        elif roll < 0.9 and entries:
            manager.branch(rng.choice(entries)["id"])
        elif manager.session_file and Path(manager.session_file).exists():
            manager = SessionManager.open(manager.session_file)  # reopen mid-sequence
    path = Path(manager.session_file or "")
    if not path.exists() or not path.read_bytes().strip():
        assert not any(
            e["type"] == "message" and e["message"]["role"] == "assistant" for e in manager.get_entries()
        )
        return
    objects = read_objects(path)
    assert objects[0]["type"] == "session"
    assert [o["type"] for o in objects].count("session") == 1
    ids = [o["id"] for o in objects[1:]]
    assert len(ids) == len(set(ids))
    reopened = SessionManager.open(path)
    assert reopened.get_entries() == manager.get_entries()
    assert reopened.session_id == manager.session_id


@pytest.mark.oracle
@pytest.mark.parametrize("source_kind", ["odd", "branched"])
def test_fork_from_v3_writes_the_same_lines_as_pi(
    source_kind: str, session_dir: Path, tmp_path: Path, pi_oracle: PiOracle
) -> None:
    """For v3 sources both re-serialise every entry (``JSON.stringify``): same bytes after the header.

    One deliberate difference: integers beyond 2**53 keep their digits here, JS rounds them to a
    double (12345678901234567890 → 12345678901234567000).
    """
    source = tmp_path / "source.jsonl"
    if source_kind == "odd":
        source.write_bytes(b"\n".join(ODD_LINES) + b"\n")
    else:
        shutil.copyfile(FIXTURES / "branched-v3.jsonl", source)
    pi = pi_oracle.result(
        "script",
        init={"kind": "forkFrom", "sourcePath": str(source), "targetCwd": "/t", "sessionDir": "$TMP/s"},
        steps=[],
        returnFiles=True,
    )
    [pi_text] = [text for name, text in pi["files"].items() if name.startswith("s/")]
    manager = SessionManager.fork_from(source, "/t", session_dir)
    ours = Path(manager.session_file or "").read_text(encoding="utf-8")
    exact = ours.replace("12345678901234567890", "12345678901234567000")
    assert exact.split("\n")[1:] == pi_text.split("\n")[1:]
    our_header, pi_header = orjson.loads(ours.split("\n")[0]), orjson.loads(pi_text.split("\n")[0])
    assert (
        list(our_header) == list(pi_header) == ["type", "version", "id", "timestamp", "cwd", "parentSession"]
    )
    assert our_header["parentSession"] == pi_header["parentSession"] == str(source)
    assert (
        orjson.loads(
            orjson.dumps(manager.get_entries()).replace(b"12345678901234567890", b"12345678901234567000")
        )
        == (pi["entries"])
    )
    assert manager.leaf_id == pi["leafId"]


def test_a_message_continues_an_entry_whose_id_holds_a_lone_surrogate(session_dir: Path) -> None:
    """JSON.parse accepts ``\\ud800`` in an id; the next message's ``parentId`` is written escaped."""
    path = session_dir / "surrogate.jsonl"
    header = {"type": "session", "version": 3, "id": "s-sur", "timestamp": "2026-01-01T00:00:00.000Z"}
    header["cwd"] = "/p"
    first = {
        "type": "message",
        "id": "x\ud800",
        "parentId": None,
        "timestamp": "2026-01-01T00:00:01.000Z",
        "message": user_msg("first", 1),
    }
    path.write_text("".join(json.dumps(obj, separators=(",", ":")) + "\n" for obj in (header, first)))
    manager = SessionManager.open(path)
    entry_id = manager.append_message(assistant_msg("reply", timestamp=2))
    last = file_lines(path)[-1]
    assert b'"parentId":"x\\ud800"' in last
    assert SessionManager.open(path).get_entry(entry_id)["parentId"] == "x\ud800"
