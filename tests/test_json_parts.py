"""A JSON value given as pieces is written as the same bytes it would be joined, wherever it stands."""

from __future__ import annotations

import json
import os
import threading
from typing import Any

import orjson
import pytest

from pi_lsp import full_writes
from pi_lsp.json_parts import _MARK, JsonParts, encode_pieces, joined_default
from pi_lsp.server.replies import encode


def _array(values: list[Any]) -> JsonParts:
    pieces: list[bytes | memoryview] = [b"["]
    for value in values:
        pieces += [memoryview(orjson.dumps(value)), b","]
    pieces[-1] = b"]" if values else b"[]"
    return JsonParts(pieces)


def _plain(value: Any) -> Any:
    """The payload with every JsonParts as the value it stands for."""
    if isinstance(value, JsonParts):
        return json.loads(value.joined())
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_plain(item) for item in value]
    return value


PAYLOADS = {
    "none": {"jsonrpc": "2.0", "id": 1, "result": {"messages": [1, 2]}},
    "one": {"jsonrpc": "2.0", "id": 2, "result": {"messages": _array([{"a": "é"}, [1], "x"]), "model": None}},
    "empty": {"result": {"messages": _array([])}},
    "two and nested": {"a": [_array([1]), {"b": _array(["two", {"c": 3}])}], "tail": "end"},
    "the value alone": _array([1, 2, 3]),
}


@pytest.mark.parametrize("name", list(PAYLOADS))
def test_pieces_join_to_the_payload_encoded(name: str) -> None:
    payload = PAYLOADS[name]
    pieces = encode_pieces(payload)
    body = b"".join(pieces)
    assert json.loads(body) == _plain(payload)
    assert body == orjson.dumps(payload, default=joined_default)
    if name == "none":
        assert pieces == [orjson.dumps(payload)]


def test_the_value_s_own_pieces_are_passed_on_unjoined() -> None:
    view = memoryview(b'{"big":"message"}')
    pieces = encode_pieces({"messages": JsonParts([b"[", view, b"]"])})
    assert any(piece is view for piece in pieces)


def test_content_that_looks_like_the_mark_is_joined_instead() -> None:
    """The mark is a string no content holds unless it knows the process's token; if some did, the
    answer is joined rather than spliced at the wrong place."""
    lookalike = (_MARK % 0)[1:-1].decode().replace("\\u0000", "\0")
    payload = {"text": lookalike, "messages": _array([{"role": "user"}])}
    body = b"".join(encode_pieces(payload))
    assert json.loads(body) == {"text": lookalike, "messages": [{"role": "user"}]}


def test_the_caller_s_default_still_applies_and_unknown_types_fail() -> None:
    payload = {"set": {3}, "messages": _array([1])}
    body = b"".join(encode_pieces(payload, default=sorted))
    assert json.loads(body) == {"set": [3], "messages": [1]}
    with pytest.raises(TypeError):
        encode_pieces({"x": object(), "messages": _array([1])})


def test_the_standard_library_fallback_joins_the_pieces() -> None:
    """An integer beyond 64 bits is written by the standard library, which gets the value joined."""
    payload = {"id": 1 << 70, "result": {"messages": _array([{"n": 1}])}}
    body = b"".join(encode(payload))
    assert json.loads(body) == {"id": 1 << 70, "result": {"messages": [{"n": 1}]}}


def test_write_all_pieces_writes_every_piece_in_order_across_short_writes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """More pieces than one writev takes, and a writev that takes only part of what it is given
    (a pipe write cut short by a stop), as the kernel may: every byte arrives, in order."""
    real_writev = os.writev
    calls: list[int] = []

    def short_writev(fd: int, buffers: list[bytes | memoryview]) -> int:
        calls.append(len(buffers))
        total = sum(map(len, buffers))
        cut = max(1, total // 3)  # a third of what was asked, ending inside some piece
        taken: list[bytes | memoryview] = []
        for buffer in buffers:
            if cut <= 0:
                break
            taken.append(memoryview(buffer)[:cut])
            cut -= len(buffer)
        return real_writev(fd, taken)

    monkeypatch.setattr(os, "writev", short_writev)
    pieces = [(b"%d," % number) * (number % 7 + 1) for number in range(3_000)]
    read_end, write_end = os.pipe()
    received = bytearray()

    def drain() -> None:
        while chunk := os.read(read_end, 1 << 16):
            received.extend(chunk)

    reader = threading.Thread(target=drain)
    reader.start()
    try:
        full_writes.write_all_pieces(write_end, pieces)
    finally:
        os.close(write_end)
        reader.join()
        os.close(read_end)
    assert bytes(received) == b"".join(pieces)
    assert len(calls) >= 3 and max(calls) <= 1024
