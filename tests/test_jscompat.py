"""JS-compatible lengths and JSON.stringify: the basis of exact token parity with pi."""

from __future__ import annotations

import json
import math
import random
import struct
import subprocess
import sys

import pytest

from pi_lsp.jscompat import js_keys, js_len, js_number, js_slice, js_stringify
from pi_lsp.session.jsonl import dumps_compact
from tests.oracle import require_oracle


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


@pytest.mark.parametrize(
    ("start", "end", "expected"),
    [
        (1, None, [1, 2, 3]),
        (-1.5, None, [3]),
        (1.9, 3, [1, 2]),
        (3, 1, []),
        (-9, 2, [0, 1]),
        (math.inf, None, []),
    ],
)
def test_js_slice_is_array_prototype_slice(start: float, end: float | None, expected: list[int]) -> None:
    assert js_slice([0, 1, 2, 3], start, end) == expected


def test_js_keys_put_integer_like_keys_first() -> None:
    assert js_keys({"b": 1, "10": 2, "2": 3, "01": 4, "a": 5}) == ["2", "10", "b", "01", "a"]


def test_js_stringify_is_compact_and_keeps_unicode() -> None:
    value = {"path": "src/ü.ts", "n": [1.0, None, True], "s": 'q"\n\\', "o": {}, "z": "😀"}
    assert js_stringify(value) == '{"path":"src/ü.ts","n":[1,null,true],"s":"q\\"\\n\\\\","o":{},"z":"😀"}'


def test_js_stringify_undefined_cases() -> None:
    assert js_stringify(object()) is None
    assert js_stringify({"a": object(), "b": 1}) == '{"b":1}'
    assert js_stringify([object()]) == "[null]"


def _floats_around_the_thresholds() -> list[float]:
    """Floats where a writer's notation could change: decades, 2**53, the band orjson writes in
    exponent form (1e-6 .. 1e-5), plus random bit patterns and random magnitudes."""
    rng = random.Random(20261203)
    values: list[float] = [0.0, -0.0, 5e-324, sys.float_info.max, 2.0**53, 2.0**53 + 2, 2.0**53 - 1]
    for exponent in range(-12, 25):
        for mantissa in (1.0, 1.5, 9.999999, 1.0000001, 3.0):
            decade = mantissa * 10.0**exponent
            values += [decade, math.nextafter(decade, 0), math.nextafter(decade, math.inf)]
    for _ in range(4000):
        values.append(rng.random() * 10 ** rng.uniform(-9, 24))
        values.append(float(rng.randrange(-(2**60), 2**60)))
        bits = struct.unpack("<d", struct.pack("<Q", rng.getrandbits(64)))[0]
        if math.isfinite(bits):
            values.append(bits)
    return values + [-value for value in values] + [math.nan, math.inf, -math.inf]


def test_session_lines_write_floats_as_node_json_stringify() -> None:
    """dumps_compact leaves most floats to orjson (session/jsonl.py): checked against node itself
    for the orjson installed here, so an orjson that writes another form fails this test."""
    require_oracle()  # node is what this needs; CI requires it
    values = _floats_around_the_thresholds()
    bits = [struct.pack("<d", value).hex() for value in values]
    script = (
        "const bits = JSON.parse(require('fs').readFileSync(0, 'utf8'));"
        "const view = new DataView(new ArrayBuffer(8));"
        "process.stdout.write(JSON.stringify(bits.map((hex) => {"
        "  for (let i = 0; i < 8; i++) view.setUint8(i, parseInt(hex.slice(2 * i, 2 * i + 2), 16));"
        "  return view.getFloat64(0, true); })));"
    )
    node = subprocess.run(
        ["node", "-e", script], input=json.dumps(bits), capture_output=True, text=True, check=True
    )
    expected = node.stdout.encode()
    ours = dumps_compact(values)
    if ours != expected:
        pairs = zip(ours.decode()[1:-1].split(","), node.stdout[1:-1].split(","), strict=True)
        differing = [(value, a, b) for value, (a, b) in zip(values, pairs, strict=True) if a != b]
        pytest.fail(f"{len(differing)} floats differ from node, e.g. {differing[:5]}")
