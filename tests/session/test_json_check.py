"""``session/json_check``: the check that stored bytes are JSON before they are sent as they are.

It must accept exactly what orjson's parse accepted (which it replaced, ~10× slower), except
numbers beyond a double's range, which are JSON by the grammar: checked case by case and against
orjson on thousands of damaged copies of pi's own lines.
"""

from __future__ import annotations

import random

import orjson
import pytest

from pi_lsp.session.json_check import each_one_value, utf8, utf8_parts
from tests.oracle import PI_FIXTURES

MEGABYTE = 1 << 20

REFUSED = {
    "trailing comma": b'{"a":1,}',
    "cut short": b'{"a":"x',
    "not UTF-8": b'{"a":"caf\xe9"}',
    "an encoded surrogate": b'{"a":"\xed\xa0\x80"}',
    "escaped lone surrogate": b'{"a":"\\ud800"}',
    "NaN": b"NaN",
    "Infinity": b'{"a":Infinity}',
    "two values": b'{"a":1} {"b":2}',
    "two values, a comma between": b'{"a":1},{"b":2}',
    "control character": b'{"a":"x\x01y"}',
    "bad escape": b'{"a":"\\x"}',
    "leading zero": b'{"a":01}',
    "nothing": b"",
    "too deep": b"[" * 2000 + b"]" * 2000,
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_what_is_not_one_json_value_in_utf8_is_refused(name: str) -> None:
    good = b'{"role":"user","content":"fine"}'
    assert each_one_value([good, good])
    assert not each_one_value([good, REFUSED[name], good])
    # as a context checks them: views of the stored lines
    line = b'{"type":"message","message":' + REFUSED[name] + b"}"
    assert not each_one_value([memoryview(good), memoryview(line)[len(b'{"type":"message","message":') : -1]])


def test_parts_that_make_up_for_each_other_are_refused() -> None:
    """A part cut short closed by the next, and a part of two values: the count is right, the
    lengths are not (the check counted values only, and took it)."""
    parts = [b'{"a":"x', b'y"}', b'{"b":1},{"c":2}']
    assert len(orjson.loads(b"[" + b",".join(parts) + b"]")) == len(parts)
    assert not each_one_value(parts)
    assert not each_one_value([b'{"a":1} 2'])


def test_what_orjson_reads_is_accepted_and_numbers_beyond_a_double_too() -> None:
    parts = [
        b'{"a":"h\xc3\xa9llo \xe2\x98\x83 \xf0\x9f\x98\x80","b":[1,-0.5,2e10,true,null]}',
        b'"\\ud83d\\ude00"',
        b"123456789012345678901234567890",
        b' {"spaced" : [ ] } ',
    ]
    assert all(orjson.loads(part) is not None or part for part in parts)
    assert each_one_value(parts)
    assert each_one_value([b'{"timestamp":1e400}'])  # orjson refuses; JSON.parse reads Infinity


def test_a_bad_part_is_found_in_any_megabyte() -> None:
    part = b'{"role":"user","content":"' + b"x" * 1000 + b'"}'
    parts = [part] * (3 * MEGABYTE // len(part))
    assert each_one_value(parts)
    for where in (0, len(parts) // 2, len(parts) - 1):
        damaged = list(parts)
        damaged[where] = part[:-1]
        assert not each_one_value(damaged)


def test_utf8_of_parts_never_splits_a_character() -> None:
    snowman = "\u2603".encode()
    part = b"a" * (MEGABYTE - 1) + snowman  # a part's end falls inside no character
    assert utf8_parts([part, snowman, part])
    assert not utf8_parts([part, snowman[:2], part])
    assert utf8(b"ascii") and not utf8(b"\xff")


def test_it_agrees_with_orjson_on_damaged_copies_of_pi_lines() -> None:
    lines = [line for line in (PI_FIXTURES / "large-session.jsonl").read_bytes().splitlines() if line]
    pieces = [
        b'"',
        b"\\",
        b",",
        b"{",
        b"}",
        b"[",
        b"]",
        b":",
        b"1",
        b"-",
        b".",
        b"e",
        b"\xff",
        b"\xc3",
        b"\x01",
    ]
    pieces += [b" ", b"\\u", b"\\ud83d", b"\\ude00", b"0", b"E+", b"null", b"\t", b"\xed\xa0\x80"]
    rng = random.Random(24)
    compared = 0
    for _ in range(4000):
        damaged = bytearray(rng.choice(lines))
        for _ in range(rng.randint(1, 3)):
            if not damaged:
                break
            at = rng.randrange(len(damaged))
            choice = rng.random()
            if choice < 0.4:
                del damaged[at]
            elif choice < 0.8:
                damaged[at:at] = rng.choice(pieces)
            else:
                del damaged[at:]
        data = bytes(damaged)
        try:
            orjson.loads(data)
            expected = True
        except orjson.JSONDecodeError as error:
            if "infinity" in str(error):  # beyond a double: accepted here on purpose
                continue
            expected = False
        assert each_one_value([data]) is expected, data[:200]
        compared += 1
    assert compared > 3900
