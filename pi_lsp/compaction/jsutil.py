"""JavaScript-compatible string length and ``JSON.stringify`` for exact parity with pi's counts.

pi measures text with ``String.length`` (UTF-16 code units) and tool-call arguments with
``JSON.stringify``. Python counts code points and prints floats differently, so a literal port
would drift on emoji, ``1.0`` or ``1e-7``. These helpers close that gap.
"""

from __future__ import annotations

import json
import math
from decimal import Decimal
from typing import Any

_MAX_SAFE_INT = 2**53
_ARRAY_INDEX_LIMIT = 2**32 - 1


def js_len(text: str) -> int:
    """``String.length``: UTF-16 code units (characters beyond the BMP count twice)."""
    if text.isascii():
        return len(text)
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def js_number(value: float | int) -> str:
    """``Number.prototype.toString`` / ``JSON.stringify`` for a finite number (NaN/inf → ``null``)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        if -_MAX_SAFE_INT < value < _MAX_SAFE_INT:
            return str(value)
        value = float(value)
    if not math.isfinite(value):
        return "null"
    if value == 0:
        return "0"
    sign = "-" if value < 0 else ""
    _, digit_tuple, exponent = Decimal(repr(abs(value))).as_tuple()
    digits = "".join(map(str, digit_tuple)).rstrip("0") or "0"
    trailing_zeros = len("".join(map(str, digit_tuple))) - len(digits)
    assert isinstance(exponent, int)
    k = len(digits)
    n = k + exponent + trailing_zeros  # position of the decimal point, as in ECMA-262 Number::toString
    if k <= n <= 21:
        body = digits + "0" * (n - k)
    elif 0 < n <= 21:
        body = digits[:n] + "." + digits[n:]
    elif -6 < n <= 0:
        body = "0." + "0" * (-n) + digits
    else:
        e = n - 1
        exp = f"e{'+' if e >= 0 else '-'}{abs(e)}"
        body = (digits if k == 1 else digits[0] + "." + digits[1:]) + exp
    return sign + body


def _is_array_index(key: str) -> bool:
    return key.isdigit() and key.isascii() and (key == "0" or key[0] != "0") and int(key) < _ARRAY_INDEX_LIMIT


def js_keys(obj: dict[str, Any]) -> list[str]:
    """JS own-property order: integer-like keys ascending first, then the rest in insertion order."""
    keys = list(obj)
    index_keys = [k for k in keys if isinstance(k, str) and _is_array_index(k)]
    if not index_keys:
        return keys
    index_keys.sort(key=int)
    return index_keys + [k for k in keys if not (isinstance(k, str) and _is_array_index(k))]


def js_stringify(value: Any) -> str | None:
    """Compact ``JSON.stringify(value)``; None where JS returns ``undefined`` (no JSON value)."""
    if value is None:
        return "null"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, bool | int | float):
        return js_number(value)
    if isinstance(value, list | tuple):
        return "[" + ",".join(js_stringify(item) or "null" for item in value) + "]"
    if isinstance(value, dict):
        parts: list[str] = []
        for key in js_keys(value):
            rendered = js_stringify(value[key])
            if rendered is not None:
                parts.append(json.dumps(str(key), ensure_ascii=False) + ":" + rendered)
        return "{" + ",".join(parts) + "}"
    return None
