"""The whole context is sent as one array checked by parsing it as sent (``ContextView.message_array``).

Property test: for sessions mixing pi's lines with damaged ones (a message that is not JSON, two
values where one message should be, keys after the message, bytes that are not UTF-8, escaped lone
surrogates, other key orders, summaries), the array is byte for byte what checking each line and
joining the parts one by one gives, on the first read and on the next.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pi_lsp.json_parts import encode_pieces
from pi_lsp.service.wire import context_result, json_array
from pi_lsp.session import SessionManager

HEADER = b'{"type":"session","version":3,"id":"arr-1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}'

MESSAGES = {
    "plain": b'{"role":"user","content":"hello","timestamp":1}',
    "unicode": '{"role":"user","content":"h\u00e9llo \u2603 \U0001f600"}'.encode(),
    "assistant": b'{"role":"assistant","content":[{"type":"text","text":"ok"}],"provider":"p","model":"m"}',
    "not json": b'{"role":"user","content":[1,}',
    "two values": b'{"role":"user","content":"a"},{"role":"user","content":"b"}',
    "not utf-8": b'{"role":"user","content":"caf\xe9"}',
    "lone surrogate": b'{"role":"user","content":"\\ud800"}',
    "escaped quote": b'{"role":"user","content":"say \\"hi\\""}',
    "beyond a double": b'{"role":"user","content":"big","timestamp":1e400}',
    "unclosed": b'{"role":"user","content":[{"type":"text","text":"a"}',
    "closer": b'{"role":"user","content":"b"}]}',
}
KINDS = [*MESSAGES, "keys after", "other order", "compaction", "custom"]


def _line(kind: str, entry_id: str, parent: str | None, first_id: str) -> bytes:
    head: dict[str, Any] = {
        "type": "message",
        "id": entry_id,
        "parentId": parent,
        "timestamp": "2026-01-01T00:00:01.000Z",
    }
    if kind in MESSAGES:
        return orjson.dumps(head)[:-1] + b',"message":' + MESSAGES[kind] + b"}"
    if kind == "keys after":
        return orjson.dumps(head)[:-1] + b',"message":' + MESSAGES["plain"] + b',"note":1}'
    if kind == "other order":
        return orjson.dumps({"message": {"role": "user", "content": "x"}, **head})
    if kind == "compaction":
        fields = {**head, "type": "compaction", "summary": "s", "firstKeptEntryId": first_id}
        return orjson.dumps(fields)
    fields = {**head, "type": "custom_message", "customType": "c", "content": "cm", "display": True}
    return orjson.dumps(fields)


def _session(path: Path, kinds: list[str]) -> Path:
    lines = [HEADER]
    for number, kind in enumerate(kinds):
        parent = f"e{number - 1}" if number else None
        lines.append(_line(kind, f"e{number}", parent, f"e{max(number - 2, 0)}"))
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


def _sent(value: object) -> bytes:
    """What the server writes for ``value`` (its pieces, joined)."""
    return b"".join(encode_pieces(value))


def _checked_one_by_one(path: Path) -> bytes:
    view = SessionManager.open(path, path.parent, cwd_override="/p").context_view()
    fragment = json_array(view.message_json())
    return orjson.dumps(fragment)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.sampled_from(KINDS), min_size=0, max_size=12))
def test_the_array_is_what_checking_each_line_gives(tmp_path: Path, kinds: list[str]) -> None:
    path = _session(tmp_path / "s.jsonl", kinds)
    expected = _checked_one_by_one(path)
    manager = SessionManager.open(path, tmp_path, cwd_override="/p")
    first = _sent(context_result(manager.context_view())["messages"])
    again = _sent(context_result(manager.context_view())["messages"])
    assert first == expected
    assert again == expected
    json.loads(first)  # what is sent is JSON (an escaped lone surrogate is, as in pi)


def test_damaged_lines_that_make_up_for_each_other_are_left_out(tmp_path: Path) -> None:
    """An unclosed message closed by the next line's, and a line of two messages: as many values as
    lines, so a check that counted values took them and sent other messages than pi's."""
    kinds = ["plain", "unclosed", "closer", "two values", "unicode"]
    path = _session(tmp_path / "s.jsonl", kinds)
    manager = SessionManager.open(path, tmp_path, cwd_override="/p")
    sent = orjson.loads(_sent(context_result(manager.context_view())["messages"]))
    assert sent == orjson.loads(_checked_one_by_one(path))
    assert [message["content"] for message in sent] == ["hello", "h\u00e9llo \u2603 \U0001f600"]
