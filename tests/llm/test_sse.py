"""The SSE body's lines (``llm/sse.py``): ended by LF, CRLF or a lone CR only, whatever the chunks."""

from __future__ import annotations

import pytest

from pi_lsp.llm.sse import SseLines, SseState

BODY = 'event: a\r\ndata: {"t":"x\u2028y\x85z"}\r\n\r\n: comment\rdata: 2\r\rdata: é\n\nlast'
LINES = ["event: a", 'data: {"t":"x\u2028y\x85z"}', "", ": comment", "data: 2", "", "data: é", "", "last"]


def _lines(parts: list[bytes]) -> list[str]:
    splitter = SseLines()
    return [line for part in parts for line in splitter.feed(part)] + splitter.end()


def test_lines_are_the_same_wherever_the_chunks_split() -> None:
    body = BODY.encode()
    assert _lines([body]) == LINES
    assert _lines([bytes([b]) for b in body]) == LINES  # one byte at a time, é split too
    for cut in range(1, len(body)):
        assert _lines([body[:cut], body[cut:]]) == LINES, cut


@pytest.mark.parametrize(
    ("body", "lines"),
    [
        (b"a\r", ["a"]),  # a last CR ends its line
        (b"a\n\r", ["a", ""]),
        (b"a", ["a"]),  # a last line with no end
        (b"", []),
        (b"\xff\n", ["\ufffd"]),  # a bad byte is replaced
    ],
)
def test_the_end_of_the_body(body: bytes, lines: list[str]) -> None:
    assert _lines([body]) == lines


def test_lines_fold_into_events() -> None:
    state = SseState()
    frames = [frame for line in LINES if (frame := state.feed(line)) is not None]
    assert frames == [
        ("a", '{"t":"x\u2028y\x85z"}', ["event: a", 'data: {"t":"x\u2028y\x85z"}']),
        (None, "2", [": comment", "data: 2"]),
        (None, "é", ["data: é"]),
    ]
    assert state.feed("last") is None
    assert state.flush() is None  # a line that is not a field makes no event
