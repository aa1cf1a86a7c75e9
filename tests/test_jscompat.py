"""JS-compatible lengths and JSON.stringify: the basis of exact token parity with pi."""

from __future__ import annotations

import pytest

from pi_lsp.jscompat import js_keys, js_len, js_number, js_stringify


@pytest.mark.parametrize(
    ("text", "expected"),
    [("", 0), ("abc", 3), ("é", 1), ("日本語", 3), ("😀", 2), ("a😀b", 4), ("𝔘x", 3)],
)
def test_js_len_counts_utf16_units(text: str, expected: int) -> None:
    assert js_len(text) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (0, "0"),
        (-0.0, "0"),
        (1.0, "1"),
        (-3, "-3"),
        (0.5, "0.5"),
        (123.456, "123.456"),
        (1e-7, "1e-7"),
        (1e-6, "0.000001"),
        (2.5e-3, "0.0025"),
        (1e21, "1e+21"),
        (1e20, "100000000000000000000"),
        (1.5e300, "1.5e+300"),
        (0.1 + 0.2, "0.30000000000000004"),
        (2**53 + 1, "9007199254740992"),
        (2**60, "1152921504606847000"),
        (float("nan"), "null"),
        (float("inf"), "null"),
        (True, "true"),
    ],
)
def test_js_number_matches_ecmascript(value: float, expected: str) -> None:
    assert js_number(value) == expected


def test_js_keys_put_integer_like_keys_first() -> None:
    assert js_keys({"b": 1, "10": 2, "2": 3, "01": 4, "a": 5}) == ["2", "10", "b", "01", "a"]


def test_js_stringify_is_compact_and_keeps_unicode() -> None:
    value = {"path": "src/ü.ts", "n": [1.0, None, True], "s": 'q"\n\\', "o": {}, "z": "😀"}
    assert js_stringify(value) == '{"path":"src/ü.ts","n":[1,null,true],"s":"q\\"\\n\\\\","o":{},"z":"😀"}'


def test_js_stringify_undefined_cases() -> None:
    assert js_stringify(object()) is None
    assert js_stringify({"a": object(), "b": 1}) == '{"b":1}'
    assert js_stringify([object()]) == "[null]"
