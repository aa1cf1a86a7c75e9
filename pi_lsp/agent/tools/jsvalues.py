"""The few JavaScript number semantics the tools' arguments go through (floats, slices)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TypeVar

from pi_lsp.jscompat import js_number

T = TypeVar("T")


def js_int(value: float) -> float:
    """``ToIntegerOrInfinity``: drop the fraction (towards zero), keep infinities."""
    if math.isinf(value):
        return value
    return float(math.trunc(value))


def js_slice(items: Sequence[T], start: float, end: float | None = None) -> list[T]:
    """``Array.prototype.slice(start, end)``: negative counts from the end, fractions truncated."""
    length = len(items)

    def clamp(index: float) -> int:
        index = js_int(index)
        if index < 0:
            return int(max(0, length + index))
        return int(min(index, length))

    lo = clamp(start)
    hi = length if end is None else clamp(end)
    return list(items[lo:hi]) if hi > lo else []


def num(value: float) -> str:
    """A number as JavaScript prints it in a template string (``5``, not ``5.0``)."""
    return js_number(value)
