"""Lines nested deeper than orjson (1,024) or Python's recursion allow are entries pi reads.

pi's ``JSON.parse`` has no depth limit. We read such lines with the iterative reader of
:mod:`pi_lsp.session.deep_json` and compare with pi itself (the oracle); the reader is checked
against the standard library on random JSON, shallow enough for both.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pi_lsp.session import SessionManager
from pi_lsp.session.deep_json import loads_deep
from pi_lsp.session.listing import list_sessions
from pi_lsp.session.loader import read_lines
from tests.oracle import PiOracle
from tests.session.deep_sessions import HEADER, deep_session


@pytest.mark.parametrize("depth", [1100, 5000, 200_000])
@pytest.mark.parametrize("shape", ["[]", "{}"])
def test_deep_lines_are_read_like_pi(tmp_path: Path, depth: int, shape: str, pi_oracle: PiOracle) -> None:
    path = deep_session(tmp_path / "deep.jsonl", depth, shape)
    raw_lines = path.read_bytes().splitlines()
    manager = SessionManager.open(path)
    assert [record.id for record in manager.index.records] == ["d1", "d2", "d3"]
    assert manager.leaf_id == "d3" and manager.diagnostics == []
    # the stored bytes are the line as written; the context hands the message out unchanged
    assert [record.raw for record in manager.index.records] == raw_lines[1:]
    messages = manager.context_view().message_json()
    assert len(messages) == 2
    assert messages[0] == raw_lines[2][raw_lines[2].index(b'"message":') + len(b'"message":') : -1]
    pi = pi_oracle.result("loadOutline", path=str(path))
    assert [entry["id"] for entry in pi["entries"]] == ["d1", "d2", "d3"]
    assert pi["leafId"] == "d3" and pi["contextRoles"] == ["user", "user"]
    # the picker's listing reads the file too (pi counts the two messages)
    [info] = list_sessions("/proj", tmp_path)
    [pi_info] = pi_oracle.result("list", dir=str(tmp_path), cwd="/proj")
    assert info.message_count == pi_info["messageCount"] == 2
    assert info.first_message == pi_info["firstMessage"] == "deep"


def test_deep_entry_survives_append_and_reopen(tmp_path: Path) -> None:
    path = deep_session(tmp_path / "deep.jsonl", 50_000)
    before = path.read_bytes()
    manager = SessionManager.open(path)
    entry = manager.get_entry("d2")
    assert entry is not None and entry["message"]["content"] == [{"type": "text", "text": "deep"}]
    new_id = manager.append_message({"role": "user", "content": "more", "timestamp": 3})
    assert path.read_bytes().startswith(before)
    reopened = SessionManager.open(path)
    assert [record.id for record in reopened.index.records] == ["d1", "d2", "d3", new_id]


def test_a_very_long_line_is_read_in_linear_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A guard, not a timing: with 64-byte chunks an 8 MB line was copied 131,072 times (~550 GB
    moved, hours); read linearly it takes well under a second, so 60 s only catches the old way."""
    import pi_lsp.session.jsonl as jsonl

    monkeypatch.setattr(jsonl, "READ_CHUNK_BYTES", 64)
    text = "x" * (8 << 20)
    entry = {
        "type": "message",
        "id": "l1",
        "parentId": None,
        "timestamp": "2026-01-01T00:00:00.000Z",
        "message": {"role": "user", "content": text, "timestamp": 1},
    }
    path = tmp_path / "long.jsonl"
    path.write_bytes(HEADER.encode() + b"\n" + orjson.dumps(entry) + b"\n")
    result: list[Any] = []
    worker = threading.Thread(target=lambda: result.append(read_lines(path)), daemon=True)
    worker.start()
    worker.join(60)
    assert result, "reading one long line did not finish: it is not linear"
    assert [record.id for record in result[0].records] == ["l1"]


# ---------------------------------------------------------------------- the reader itself

JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**63 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=5), children, max_size=4)
    ),
    max_leaves=30,
)


FULL_DEPTH = 10_000  # every container built: the plain value, to compare with the standard library


@settings(max_examples=300, deadline=None)
@given(JSON_VALUES, st.integers(min_value=0, max_value=4), st.sampled_from([None, 1, 2]))
def test_reader_agrees_with_the_standard_library(value: Any, keep_depth: int, indent: int | None) -> None:
    text = json.dumps(value, indent=indent, ensure_ascii=False)
    assert loads_deep(text, FULL_DEPTH) == json.loads(text)
    # deep parts come back as fragments holding their exact text; written out, it is the same JSON
    assert json.loads(orjson.dumps(loads_deep(text, keep_depth))) == json.loads(text)


NOISE = ["", "[", "]", "{", "}", ",", ":", '"', "\\", "1", "-", "x", " ", "\x01"]


def _no_constants(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


@settings(max_examples=400, deadline=None)
@given(JSON_VALUES, st.data())
def test_reader_rejects_what_json_rejects(value: Any, data: st.DataObject) -> None:
    text = json.dumps(value)
    position = data.draw(st.integers(min_value=0, max_value=len(text)))
    noise = data.draw(st.sampled_from(NOISE))
    cut = data.draw(st.integers(min_value=0, max_value=1))
    damaged = text[:position] + noise + text[position + cut :]
    try:
        expected: Any = json.loads(damaged, parse_constant=_no_constants)
    except ValueError:
        for keep_depth in (0, 1, FULL_DEPTH):
            with pytest.raises(ValueError):
                loads_deep(damaged, keep_depth)
        return
    assert loads_deep(damaged, FULL_DEPTH) == expected
    loads_deep(damaged, 0)  # the skipping path accepts it too
