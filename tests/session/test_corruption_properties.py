"""Property tests: damaged session files never crash, hang or get modified by opening them.

Files are built from valid lines mixed with garbage, non-object JSON, invalid UTF-8, huge lines,
duplicate ids, missing parents, parent cycles and self-parents, extra headers, blank and CRLF
lines, and a torn (truncated) end. For v3 headers ``SessionManager.open`` must succeed, must not
touch the file (bytes and mtime), must report every bad line by number, and the tree, branch and
context walks must terminate. Without a valid header only ``InvalidSessionFileError`` is allowed
(and the file is still untouched); an empty or blank file becomes a new session.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pi_lsp.session import InvalidSessionFileError, SessionManager, build_session_context
from pi_lsp.session.index import TreeNode

IDS = ["a", "b", "c", "d", "e", "f"]
PARENTS = [*IDS, None, "missing"]
TIMESTAMPS = [f"2026-01-01T00:00:0{i}Z" for i in range(5)] + ["nope", "", "2026-01-01T00:00:00.000Z"]


@contextlib.contextmanager
def time_limit(seconds: int) -> Iterator[None]:
    """Turn a hang into a failure (SIGALRM; the tests run in the main thread)."""

    def expired(signum: int, frame: Any) -> None:
        raise TimeoutError(f"did not finish within {seconds}s (a walk does not terminate?)")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


@dataclass
class Piece:
    kind: str  # "header" | "entry" | "extra_header" | "bad" | "blank"
    data: bytes
    entry_id: Any = None


def _encode(obj: dict[str, Any]) -> bytes:
    return orjson.dumps(obj)


@st.composite
def entries(draw: st.DrawFn) -> Piece:
    kind = draw(
        st.sampled_from(
            [
                "message",
                "message",
                "assistant",
                "compaction",
                "branch_summary",
                "label",
                "session_info",
                "custom",
                "custom_message",
                "thinking_level_change",
                "model_change",
                "future_type",
            ]
        )
    )
    entry_id: Any = draw(st.sampled_from([*IDS, *IDS, 7, None]))
    parent: Any = draw(st.sampled_from([*PARENTS, entry_id]))
    obj: dict[str, Any] = {"type": "message" if kind == "assistant" else kind}
    if entry_id is not None:
        obj["id"] = entry_id
    if draw(st.booleans()) or parent is not None:
        obj["parentId"] = parent
    obj["timestamp"] = draw(st.sampled_from(TIMESTAMPS))
    if kind == "message":
        obj["message"] = {
            "role": draw(st.sampled_from(["user", "toolResult", "bashExecution", "custom", "weird"])),
            "content": draw(st.text(max_size=20)),
            "timestamp": 1,
        }
    elif kind == "assistant":
        obj["message"] = {
            "role": "assistant",
            "content": [{"type": "text", "text": "r"}],
            "provider": "p",
            "model": draw(st.sampled_from(["m1", "m2"])),
            "timestamp": 2,
        }
    elif kind == "compaction":
        obj.update(summary="s", firstKeptEntryId=draw(st.sampled_from([*IDS, "missing"])), tokensBefore=5)
    elif kind == "branch_summary":
        obj.update(fromId="x", summary=draw(st.sampled_from(["", "bs"])))
    elif kind == "label":
        obj["targetId"] = draw(st.sampled_from([*IDS, "missing", 5]))
        if draw(st.booleans()):
            obj["label"] = draw(st.sampled_from(["L", "", None, 3]))
    elif kind == "session_info":
        obj["name"] = draw(st.sampled_from(["n", "", "  ", None, 1]))
    elif kind == "custom_message":
        obj.update(
            customType="c",
            content=draw(st.sampled_from(["x", [], [{"type": "text", "text": "y"}]])),
            display=True,
        )
    elif kind == "thinking_level_change":
        obj["thinkingLevel"] = draw(st.sampled_from(["high", None]))
    elif kind == "model_change":
        obj.update(provider="p", modelId="m")
    data = _encode(obj)
    if draw(st.integers(0, 9)) == 0 and b'"timestamp":"' in data:
        # invalid UTF-8 inside a JSON string: Node decodes it to U+FFFD, so the line stays valid
        data = data.replace(b'"timestamp":"', b'"timestamp":"\xff\xfe', 1)
    return Piece("entry", data, entry_id)


garbage = st.one_of(
    st.binary(min_size=1, max_size=40).map(lambda b: b"#" + b.replace(b"\n", b" ")),
    st.sampled_from([b"{", b"not json", b'{"type":"message",', b"\xff\xfe\xfd", b"}{", b'{"a":1}{"b":2}']),
    st.sampled_from([b"5", b"null", b"[1,2]", b'"string"', b"true"]),  # JSON, but not an object
)


@st.composite
def pieces(draw: st.DrawFn) -> Piece:
    roll = draw(st.integers(0, 19))
    if roll < 12:
        return draw(entries())
    if roll < 15:
        return Piece("bad", draw(garbage))
    if roll < 17:
        return Piece("blank", draw(st.sampled_from([b"", b"  ", b"\t", b"\r"])))
    obj = {
        "type": "session",
        "version": draw(st.sampled_from([1, 2, 3])),
        "id": "other",
        "timestamp": "t",
        "cwd": "/o",
    }
    return Piece("extra_header", _encode(obj))


@dataclass
class Built:
    content: bytes
    valid_header: bool
    bad_lines: list[int]
    extra_header_lines: list[int]
    entry_ids: list[Any]
    torn_line: int | None


@st.composite
def session_files(draw: st.DrawFn, header_mode: str = "v3", huge: bool = False) -> Built:
    body = draw(st.lists(pieces(), max_size=25))
    if huge:
        size = 1_000_000 + draw(st.integers(0, 1000))
        big_entry = {
            "type": "message",
            "id": "huge",
            "parentId": draw(st.sampled_from(PARENTS)),
            "timestamp": TIMESTAMPS[0],
            "message": {"role": "user", "content": "h" * size, "timestamp": 3},
        }
        body.insert(draw(st.integers(0, len(body))), Piece("entry", _encode(big_entry), "huge"))
        body.insert(draw(st.integers(0, len(body))), Piece("bad", b"#" + b"g" * size))
    leading = draw(
        st.lists(
            st.sampled_from([Piece("blank", b""), Piece("bad", b"garbage"), Piece("bad", b"{")]), max_size=2
        )
    )
    if header_mode == "v3":
        header: dict[str, Any] = {
            "type": "session",
            "version": 3,
            "id": "sess",
            "timestamp": TIMESTAMPS[0],
            "cwd": "/p",
        }
        head = [*leading, Piece("header", _encode(header))]
    elif header_mode == "none":
        head = [*leading, draw(entries())]
    else:  # a header-like first object that pi would not accept
        head = [*leading, Piece("entry", b'{"type":"session","id":5}')]
    all_pieces = head + body
    crlf = draw(st.booleans())
    lines = [p.data + (b"\r" if crlf and p.kind != "blank" else b"") for p in all_pieces]
    content = b"\n".join(lines) + (b"\n" if draw(st.booleans()) else b"")
    torn_line: int | None = None
    if draw(st.booleans()) and body:
        # a torn end: cut somewhere inside the last piece (an interrupted write)
        last_start = len(b"\n".join(lines[:-1])) + (1 if len(lines) > 1 else 0)
        cut = draw(st.integers(last_start, len(content)))
        content = content[:cut]
    physical = content.split(b"\n")
    bad_lines: list[int] = []
    extra: list[int] = []
    ids: list[Any] = []
    seen_header = False
    for number, (line, piece) in enumerate(zip(physical, all_pieces, strict=False), start=1):
        if not line.strip():
            continue
        original = piece.data + (b"\r" if crlf and piece.kind != "blank" else b"")
        if line != original:  # the torn piece: what is left decides (it may still parse, e.g. minus "\r")
            torn_line = number
            try:
                value = json.loads(line.decode("utf-8", "replace"))
            except ValueError:
                value = None
            if not isinstance(value, dict):
                bad_lines.append(number)
                continue
            if piece.kind == "bad":  # e.g. '{"a":1}{"b":2}' cut to '{"a":1}': an entry without id
                ids.append(None)
                continue
        if piece.kind == "bad":
            bad_lines.append(number)
        elif piece.kind == "header":
            seen_header = True
        elif piece.kind == "extra_header":
            extra.append(number)
        elif piece.kind == "entry" and (header_mode != "v3" or seen_header):
            ids.append(piece.entry_id)
    return Built(content, header_mode == "v3", bad_lines, extra, ids, torn_line)


def _all_nodes(roots: list[TreeNode]) -> list[TreeNode]:
    out: list[TreeNode] = []
    stack = list(roots)
    while stack:
        node = stack.pop()
        out.append(node)
        assert len(out) < 100_000, "tree walk does not terminate"
        stack.extend(node.children)
    return out


def _check_walks(manager: SessionManager) -> None:
    entries = manager.get_entries()
    nodes = _all_nodes(manager.get_tree())
    # every entry appears exactly once (cycle members are rescued as roots, not lost)
    assert len(nodes) == len(entries)
    assert sorted(id(n.record) for n in nodes) == sorted(id(r) for r in manager.index.records)
    for node in nodes:
        children = node.children
        assert all(child.record.parent_id == node.record.id for child in children)
    for entry in [*entries, {"id": None}, {"id": "missing"}]:
        entry_id = entry.get("id")
        if not isinstance(entry_id, str | None):
            continue
        branch = manager.get_branch(entry_id)
        assert len(branch) <= len(entries)
        if entry_id in manager.index.by_id:
            assert branch[-1]["id"] == entry_id
            assert len({id(r) for r in manager.index.path_to(entry_id)}) == len(branch)
        else:
            assert branch == []
        manager.build_session_context(entry_id)
        build_session_context(entries, entry_id)
    manager.build_session_context()
    build_session_context(entries)


def _snapshot(path: Path) -> tuple[bytes, int]:
    return path.read_bytes(), path.stat().st_mtime_ns


COMMON = settings(
    deadline=None,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.function_scoped_fixture,
        HealthCheck.data_too_large,
    ],
)


@settings(COMMON, max_examples=250)
@given(built=session_files("v3"))
def test_v3_files_open_without_crash_or_change(built: Built, tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(built.content)
    os.utime(path, ns=(1_000_000_000, 1_000_000_000))
    before = _snapshot(path)
    with time_limit(20):
        manager = SessionManager.open(path)
        assert manager.session_id == "sess"
        _check_walks(manager)
        manager.get_session_name()
        for entry_id in manager.index.by_id:
            manager.get_label(entry_id)
            manager.get_children(entry_id)
        assert manager.refresh() == []
    assert _snapshot(path) == before

    lines_named = {d.get("line") for d in manager.diagnostics}
    for number in built.bad_lines + built.extra_header_lines:
        assert number in lines_named, (number, manager.diagnostics)
    assert all(d["severity"] in ("error", "warning", "info") for d in manager.diagnostics)
    # exactly the valid entry lines after the header are entries, duplicates included, in order
    assert [e.get("id") for e in manager.get_entries()] == built.entry_ids


@settings(COMMON, max_examples=8)
@given(built=session_files("v3", huge=True))
def test_huge_lines(built: Built, tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(built.content)
    before = _snapshot(path)
    with time_limit(30):
        manager = SessionManager.open(path)
        _check_walks(manager)
    assert _snapshot(path) == before
    lines_named = {d.get("line") for d in manager.diagnostics}
    assert set(built.bad_lines) <= lines_named
    assert [e.get("id") for e in manager.get_entries()] == built.entry_ids


@settings(COMMON, max_examples=100)
@given(built=st.one_of(session_files("none"), session_files("bad-header")))
def test_files_without_valid_header_are_refused_untouched(built: Built, tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(built.content)
    before = _snapshot(path)
    with time_limit(20):
        if built.content.strip():
            with pytest.raises(InvalidSessionFileError):
                SessionManager.open(path)
        else:
            manager = SessionManager.open(path)  # empty / blank: a new session bound to the path
            assert manager.get_entries() == []
    assert _snapshot(path) == before


def test_parent_cycles_and_self_parents_terminate(tmp_path: Path) -> None:
    """pi hangs on these (spec §8.7); our walks stop and the tree keeps every entry."""
    lines = [
        {"type": "session", "version": 3, "id": "s", "timestamp": TIMESTAMPS[0], "cwd": "/p"},
        {
            "type": "message",
            "id": "a",
            "parentId": "b",
            "timestamp": TIMESTAMPS[1],
            "message": {"role": "user", "content": "A", "timestamp": 1},
        },
        {
            "type": "message",
            "id": "b",
            "parentId": "a",
            "timestamp": TIMESTAMPS[2],
            "message": {"role": "user", "content": "B", "timestamp": 1},
        },
        {
            "type": "message",
            "id": "c",
            "parentId": "c",
            "timestamp": TIMESTAMPS[3],
            "message": {"role": "user", "content": "C", "timestamp": 1},
        },
        {
            "type": "message",
            "id": "d",
            "parentId": "b",
            "timestamp": TIMESTAMPS[4],
            "message": {"role": "user", "content": "D", "timestamp": 1},
        },
    ]
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))
    with time_limit(10):
        manager = SessionManager.open(path)
        assert [e["id"] for e in manager.get_branch("d")] == ["a", "b", "d"]
        assert [e["id"] for e in manager.get_branch("c")] == ["c"]
        assert [m["content"] for m in manager.build_session_context("d")["messages"]] == ["A", "B", "D"]
        assert [m["content"] for m in build_session_context(manager.get_entries(), "a")["messages"]] == [
            "B",
            "A",
        ]
        roots = manager.get_tree()
        assert [r.record.id for r in roots] == ["c", "a"]
        assert len(_all_nodes(roots)) == 4


def test_duplicate_ids_later_wins_like_pi(tmp_path: Path) -> None:
    lines = [
        {"type": "session", "version": 3, "id": "s", "timestamp": TIMESTAMPS[0], "cwd": "/p"},
        {
            "type": "message",
            "id": "a",
            "parentId": None,
            "timestamp": TIMESTAMPS[1],
            "message": {"role": "user", "content": "first a", "timestamp": 1},
        },
        {
            "type": "message",
            "id": "a",
            "parentId": None,
            "timestamp": TIMESTAMPS[2],
            "message": {"role": "user", "content": "second a", "timestamp": 1},
        },
        {"type": "session", "version": 3, "id": "dup", "timestamp": TIMESTAMPS[0], "cwd": "/p"},
        {
            "type": "message",
            "id": "b",
            "parentId": "a",
            "timestamp": TIMESTAMPS[3],
            "message": {"role": "user", "content": "b", "timestamp": 1},
        },
    ]
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))
    manager = SessionManager.open(path)
    assert manager.session_id == "s"
    assert [e["id"] for e in manager.get_entries()] == ["a", "a", "b"]
    assert manager.get_entry("a")["message"]["content"] == "second a"  # type: ignore[index]
    assert [m["content"] for m in manager.build_session_context()["messages"]] == ["second a", "b"]
    assert any(d.get("line") == 4 for d in manager.diagnostics)
