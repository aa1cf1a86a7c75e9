"""Property test: indexing pi's message lines from their heads gives the records a full parse gives.

The loader reads a message line written in pi's key order from its head alone (``MESSAGE_HEAD``)
and every other line by parsing it whole. Here files mixing pi's lines with lines that must not
take the fast path (ids with escaped quotes, backslashes or unicode, other key orders, keys after
the message, CRLF endings, other entry types, a write cut short and continued by the next on one
line, a torn or unterminated last line) are read twice:
as the loader does, and with the head pattern disabled so every line is parsed whole. Every
record, its entry, message, wire bytes and preview, and the diagnostics must be the same.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pi_lsp.session import loader
from pi_lsp.session.jsonl import dumps_compact
from pi_lsp.session.loader import ReadResult, read_lines
from pi_lsp.session.records import EntryRecord

HEADER = b'{"type":"session","version":3,"id":"props-1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}'
NEVER = re.compile(rb"(?!)")
TORN = b'{"type":"message","id":"torn","parentId":null,"timestamp":"x","message":{"ro'

IDS = st.sampled_from(["a1", "b2", "c3", 'q"uote', "back\\slash", "caf\u00e9", "\u2603", "tab\there", "d4"])
PARENTS = st.one_of(st.none(), IDS)
MESSAGES = st.sampled_from(
    [
        {"role": "user", "content": "hi", "timestamp": 1},
        {"role": "user", "content": [{"type": "text", "text": 'h\u00e9llo "q" \\ \U0001f600'}]},
        {"role": "assistant", "content": [{"type": "text", "text": "ok"}], "provider": "p", "model": "m"},
        {"role": "assistant", "content": [], "provider": "a", "model": "c", "stopReason": "toolUse"},
        {"role": "toolResult", "toolCallId": "t", "content": [], "isError": False},
        {"role": 'ro"le', "content": "odd role"},
        {"role": 7, "content": "a number for a role"},
        {"content": "no role"},
    ]
)
SHAPES = st.sampled_from(
    ["pi", "pi", "pi", "other order", "keys after", "crlf", "label", "session_info", "torn then next"]
)


@st.composite
def lines(draw: st.DrawFn) -> bytes:
    shape = draw(SHAPES)
    entry_id, parent = draw(IDS), draw(PARENTS)
    timestamp = draw(st.sampled_from(["2026-01-01T00:00:01.000Z", "2026-01-01T00:00:0\u00e9Z"]))
    head: dict[str, Any] = {"type": "message", "id": entry_id, "parentId": parent, "timestamp": timestamp}
    if shape == "label":
        return dumps_compact({**head, "type": "label", "targetId": parent, "label": "L"})
    if shape == "session_info":
        return dumps_compact({**head, "type": "session_info", "name": "n"})
    message = draw(MESSAGES)
    if shape == "other order":
        return dumps_compact({"id": entry_id, "type": "message", **head, "message": message})
    line = dumps_compact({**head, "message": message})
    if shape == "keys after":
        return line[:-1] + b',"extra":{"kept":true}}'
    if shape == "crlf":
        return line + b"\r"
    if shape == "torn then next":  # pi's write cut short, then its next append on the same line
        return line[: draw(st.sampled_from([len(line) // 2, len(line) - 3]))] + line
    return line


def _read(path: Path, monkeypatch: pytest.MonkeyPatch, *, fast: bool) -> ReadResult:
    with monkeypatch.context() as patch:
        if not fast:
            patch.setattr(loader, "MESSAGE_HEAD", NEVER)
        return read_lines(path)


def _seen(record: EntryRecord) -> tuple[Any, ...]:
    facts = (record.id, record.parent_id, record.type, record.timestamp, record.role, record.line)
    return (
        *facts,
        record.raw,
        record.entry(),
        record.message(),
        record.provider,
        record.model,
        record.message_json(),
        record.wire_json(),
        record.preview,
        record.no_text,
    )


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.lists(lines(), max_size=12),
    st.sampled_from([b"\n", b"", TORN]),
)
def test_the_head_index_equals_a_full_parse(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, body: list[bytes], ending: bytes
) -> None:
    path = tmp_path / "s.jsonl"
    data = b"\n".join([HEADER, *body])
    path.write_bytes(data + (ending if ending == b"\n" or not body else b"\n" + ending))
    fast, full = _read(path, monkeypatch, fast=True), _read(path, monkeypatch, fast=False)
    assert [_seen(record) for record in fast.records] == [_seen(record) for record in full.records]
    assert fast.diagnostics == full.diagnostics
    assert (fast.end_offset, fast.next_line) == (full.end_offset, full.next_line)
    orjson.loads(b"[" + b",".join(record.wire_json() for record in fast.records) + b"]")
