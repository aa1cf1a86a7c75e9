"""An open keeps pi's message lines as lines (``rows.py``) and makes their records on first use;
everything it answers must be what reading every line into a record gives (the reader used for
other writers' appends, ``read_lines`` without ``lazy``).

Files are generated from canonical message lines (pi's key order) mixed with the lines the block
scan must hand to the per-line reader: other key orders, unicode and escaped quotes in ids and
timestamps, a nested ``"parentId"``, pi's torn write with the next append on the same line, a
line cut short at a ``}``, CRLF, trailing blanks, duplicate ids, cycles, other entry types,
malformed lines, extra headers, blank lines and a torn last line; read in small blocks too, so
lines fall on every block boundary.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pi_lsp.json_parts import JsonParts
from pi_lsp.session import SessionManager, jsonl
from pi_lsp.session.index import SessionIndex
from pi_lsp.session.loader import ReadResult, read_lines
from pi_lsp.session.records import EntryRecord
from pi_lsp.session.view import build_view

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
IDS = ["a1", "b2", "c3", "d4", "é5", 'q"6', "f7", "long" * 70]
HEADER = b'{"type":"session","version":3,"id":"sess","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}'


def _canonical(entry_id: str, parent: str | None, role: str, text: str, stamp: str) -> bytes:
    message: dict[str, Any] = {"role": role, "content": [{"type": "text", "text": text}], "timestamp": 1}
    if role == "assistant":
        message.update(provider="anthropic", model="m", stopReason="stop")
    entry = {"type": "message", "id": entry_id, "parentId": parent, "timestamp": stamp, "message": message}
    return orjson.dumps(entry)


@st.composite
def lines(draw: st.DrawFn) -> bytes:
    entry_id = draw(st.sampled_from(IDS))
    parent = draw(st.sampled_from([*IDS, None, "missing"]))
    role = draw(st.sampled_from(["user", "assistant", "toolResult", "custom", "ünï"]))
    text = draw(st.one_of(st.text(max_size=12), st.just("x" * 3000)))  # long lines: heads read alone
    stamp = draw(st.sampled_from(["2026-01-01T00:00:01.000Z", "2026-01-01T00:00:02.000Z", "x", "é"]))
    line = _canonical(entry_id, parent, role, text, stamp)
    kind = draw(st.integers(0, 25))
    if kind < 12:
        return line
    if kind == 12:  # another key order: parsed whole
        obj = orjson.loads(line)
        return orjson.dumps({"id": obj["id"], **obj})
    if kind == 13:  # a nested "parentId" (valid JSON)
        return line[:-1] + b',"details":{"parentId":"z"}}'
    if kind == 14:  # pi's torn write and its next append on one line
        return line[: draw(st.integers(30, len(line) - 1))] + _canonical("t9", entry_id, "user", "x", "y")
    if kind == 15:  # cut short right after a "}" (matches the head, is not JSON)
        cut = line.rfind(b"}", 0, len(line) - 2)
        return line[: cut + 1] if cut > 0 else line
    if kind == 16:
        return line + b"  "
    if kind == 17:
        return line + b"\r"
    if kind == 18:
        label = {"type": "label", "id": "l" + entry_id, "parentId": parent, "timestamp": stamp}
        return orjson.dumps(
            {**label, "targetId": draw(st.sampled_from(IDS)), "label": draw(st.sampled_from(["L", ""]))}
        )
    if kind == 19:
        info = {"type": "session_info", "id": "n" + entry_id, "parentId": parent, "timestamp": stamp}
        return orjson.dumps({**info, "name": draw(st.sampled_from(["name", " "]))})
    if kind == 20:
        change = {"type": "model_change", "id": entry_id, "parentId": parent, "timestamp": stamp}
        return orjson.dumps({**change, "provider": "p", "modelId": "m2"})
    if kind == 21:
        return draw(st.sampled_from([b"", b" ", b"{", b"garbage", b"[1]", b'{"type":"message",', b"\xff}"]))
    if kind == 22:
        return HEADER.replace(b'"sess"', b'"other"')
    if kind == 23:  # invalid UTF-8 in the message: still a canonical head
        return line.replace(b'"content":[', b'"content":["\xff",', 1)
    if kind == 24:
        return line.replace(b'"id":"', b'"id":"\\u0041', 1)  # an escape in the id
    return line.replace(b'"id":"', b'"id":"\\ud800', 1)  # a lone surrogate in the id


@st.composite
def files(draw: st.DrawFn) -> bytes:
    body = draw(st.lists(lines(), max_size=30))
    content = b"\n".join([HEADER, *body]) + b"\n"
    ending = draw(st.integers(0, 3))
    if ending == 1:  # a torn last line
        tail = _canonical("z8", "a1", "user", "torn", "s")
        content += tail[: draw(st.integers(1, len(tail) - 1))]
    elif ending == 2:  # a last line without its newline
        content += _canonical("z8", "a1", "user", "last", "s")
    return content


def _fields(record: EntryRecord) -> tuple[Any, ...]:
    return (
        record.id,
        record.parent_id,
        record.type,
        record.timestamp,
        record.role,
        record.line,
        record.raw,
        record.message_start,
        record.checked,
        record.target_id,
        record.label,
        record.name,
        record.first_kept,
        record.thinking_level,
    )


def _eager(path: Path) -> tuple[ReadResult, SessionIndex]:
    read = read_lines(path)
    index = SessionIndex()
    index.extend(read.records)
    return read, index


def _lazy(path: Path) -> tuple[ReadResult, SessionIndex]:
    read = read_lines(path, lazy=True)
    assert read.rows is not None and not read.records
    index = SessionIndex()
    index.take_rows(read.rows)
    return read, index


def _walks(index: SessionIndex, ids: list[str]) -> list[Any]:
    """What an open and its first requests ask of the index, before anything makes every record."""
    last = index.last()
    answers: list[Any] = [index.count, last and _fields(last), index.session_name, dict(index.labels)]
    for entry_id in [*ids, "missing"]:
        record = index.get(entry_id)
        answers.append((index.has(entry_id), record and _fields(record)))
        answers.append([_fields(r) for r in index.path_to(entry_id)])
        tail, more = index.path_tail(entry_id, 2)
        answers.append(([_fields(r) for r in tail], more))
    return answers


def _joined(array: JsonParts | None) -> bytes | None:
    return None if array is None else array.joined()


def _same(path: Path) -> None:
    eager_read, eager = _eager(path)
    lazy_read, lazy = _lazy(path)
    for name in (
        "header",
        "header_line",
        "header_offset",
        "header_raw",
        "diagnostics",
        "end_offset",
        "next_line",
    ):
        assert getattr(lazy_read, name) == getattr(eager_read, name), name
    ids = [record.id for record in eager.records if record.id is not None]
    assert _walks(lazy, ids) == _walks(eager, ids)
    leaf = eager.records[-1].id if eager.records else None
    lazy_view = build_view(lazy.path_to(leaf))
    eager_view = build_view(eager.path_to(leaf))
    assert _joined(lazy_view.message_array()) == _joined(eager_view.message_array())
    assert lazy_view.message_json() == eager_view.message_json()
    # Then every record, made now: the same records, ids, counts and tree.
    assert [_fields(r) for r in lazy.records] == [_fields(r) for r in eager.records]
    assert {key: _fields(r) for key, r in lazy.by_id.items()} == {
        key: _fields(r) for key, r in eager.by_id.items()
    }
    assert list(lazy.by_id) == list(eager.by_id)
    assert all(lazy.by_id[key] is lazy.records[lazy.records.index(r)] for key, r in lazy.by_id.items())
    assert lazy.assistant_count == eager.assistant_count
    assert [(r.preview, r.entry()) for r in lazy.records] == [(r.preview, r.entry()) for r in eager.records]
    assert _tree(lazy) == _tree(eager)


def _tree(index: SessionIndex) -> list[Any]:
    flat: list[Any] = []
    stack = [(node, 0) for node in reversed(index.tree())]
    while stack:
        node, depth = stack.pop()
        flat.append((depth, node.record.id, node.record.line, node.label))
        stack.extend((child, depth + 1) for child in reversed(node.children))
    return flat


@pytest.fixture(params=[None, 64, 4096], ids=["default-blocks", "64-byte-blocks", "4k-blocks"])
def block_bytes(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    if request.param is not None:
        monkeypatch.setattr(jsonl, "READ_CHUNK_BYTES", request.param)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(content=files())
def test_lazy_open_equals_reading_every_line(tmp_path: Path, block_bytes: None, content: bytes) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(content)
    _same(path)


@pytest.mark.parametrize("fixture", sorted(p.name for p in FIXTURES.rglob("*.jsonl")))
def test_lazy_open_of_the_fixtures(tmp_path: Path, block_bytes: None, fixture: str) -> None:
    (source,) = FIXTURES.rglob(fixture)
    path = tmp_path / fixture
    path.write_bytes(source.read_bytes())
    _same(path)


def test_an_open_makes_only_the_records_it_is_asked_for(tmp_path: Path) -> None:
    """Open + the leaf's page makes the page's records, not the file's; the first request that
    needs every record (the tree) makes them all, the same objects as those already made."""
    body = [
        _canonical(f"e{n}", f"e{n - 1}" if n else None, "user" if n % 2 else "assistant", "t", "s")
        for n in range(500)
    ]
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"\n".join([HEADER, *body]) + b"\n")
    manager = SessionManager.open(path, persist=False)
    assert manager.entry_count == 500 and manager.leaf_id == "e499"
    page, more = manager.index.path_tail(manager.leaf_id, 10)
    assert more and [r.id for r in page] == [f"e{n}" for n in range(490, 500)]
    rows = manager.index._rows
    assert rows is not None
    made = [slot for slot in rows.slots if isinstance(slot, EntryRecord)]
    assert len(made) == 11  # the page and the entry before it (``more``)
    tree = manager.get_tree()
    assert manager.index._rows is None and len(tree) == 1
    assert all(a is b for a, b in zip(manager.index.records[490:], page, strict=True))
    assert manager.index.assistant_count == 250
