"""JavaScript semantics pi's behaviour depends on, in one place.

pi measures text with ``String.length`` (UTF-16 code units), prints numbers with
``Number.prototype.toString``, serialises with ``JSON.stringify``, trims with ``String.trim`` and
tests values for truthiness, slices arrays with ``Array.prototype.slice``; it tells ``undefined``
from ``null`` and parses dates with ``Date.parse``. Python differs on each (emoji, ``2.0``,
``1e-7``, U+FEFF, ``[]``, ``-0.5``), so a literal port would drift from pi's token counts, session
bytes, skill diagnostics and tool output.
"""

from __future__ import annotations

import errno
import json
import math
from collections.abc import Sequence
from datetime import datetime
from typing import Any, Final, TypeVar

T = TypeVar("T")

_MAX_SAFE_INT = 2**53
_ARRAY_INDEX_LIMIT = 2**32 - 1


class Unset:
    """Marker for "no leaf given" (pi's ``undefined``), distinct from ``None`` (pi's ``null``)."""

    def __repr__(self) -> str:
        return "UNSET"


UNSET: Final = Unset()


def iso_to_ms(timestamp: Any) -> float | int | None:
    """Parse an ISO-8601 timestamp to epoch milliseconds like JS ``Date.parse``; None when invalid."""
    if not isinstance(timestamp, str) or not timestamp:
        return None
    text = timestamp.strip()
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        return None
    if parsed.tzinfo is None:
        # JS treats date-time forms without an offset as local time; sessions always carry Z.
        parsed = parsed.astimezone()
    return int(parsed.timestamp() * 1000)


def js_len(text: str) -> int:
    """``String.length``: UTF-16 code units (characters beyond the BMP count twice)."""
    if text.isascii():
        return len(text)
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def js_number(value: float | int) -> str:
    """``Number.prototype.toString`` / ``JSON.stringify`` for a number (NaN/inf → ``null``)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        if -_MAX_SAFE_INT < value < _MAX_SAFE_INT:
            return str(value)
        value = float(value)
    if not math.isfinite(value):
        return "null"
    return js_finite_float(value)


def js_finite_float(value: float) -> str:
    """``String(value)`` for a finite float: shortest digits, JS's fixed/exponent thresholds."""
    if value == 0:
        return "0"
    text = repr(value)
    if "e" not in text and "n" not in text:
        # Python writes 1e-4 <= |value| < 1e16 in fixed notation with the same shortest digits
        # as JS (which keeps fixed notation up to 1e21); only an integral value's ".0" differs.
        return text[:-2] if text.endswith(".0") else text
    from decimal import Decimal  # only for exponent forms (1e21, 1e-7): not loaded with every start

    sign, digit_tuple, exponent = Decimal(text).as_tuple()
    assert isinstance(exponent, int)
    digits = "".join(map(str, digit_tuple)).rstrip("0") or "0"
    exponent += len("".join(map(str, digit_tuple))) - len(digits)
    count = len(digits)
    point = count + exponent  # value = 0.digits × 10^point
    if count <= point <= 21:
        text = digits + "0" * (point - count)
    elif 0 < point <= 21:
        text = f"{digits[:point]}.{digits[point:]}"
    elif -6 < point <= 0:
        text = "0." + "0" * (-point) + digits
    else:
        mantissa = digits[0] + (f".{digits[1:]}" if count > 1 else "")
        power = point - 1
        text = f"{mantissa}e{'+' if power > 0 else '-'}{abs(power)}"
    return f"-{text}" if sign else text


def js_int(value: float) -> float:
    """``ToIntegerOrInfinity``: drop the fraction (towards zero), keep infinities."""
    if math.isinf(value):
        return value
    return float(math.trunc(value))


def js_slice(items: Sequence[T], start: float, end: float | None = None) -> list[T]:
    """``Array.prototype.slice(start, end)``: negative counts from the end, fractions truncated
    (the read tool's ``offset`` / ``limit``)."""
    length = len(items)

    def clamp(index: float) -> int:
        index = js_int(index)
        if index < 0:
            return int(max(0, length + index))
        return int(min(index, length))

    lo = clamp(start)
    hi = length if end is None else clamp(end)
    return list(items[lo:hi]) if hi > lo else []


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


def js_stringify(value: Any, indent: int = 0, _depth: int = 0) -> str | None:
    """``JSON.stringify(value, null, indent)``; None where JS returns ``undefined`` (no JSON value)."""
    if value is None:
        return "null"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, bool | int | float):
        return js_number(value)
    inner = "\n" + " " * (indent * (_depth + 1)) if indent else ""
    outer = "\n" + " " * (indent * _depth) if indent else ""
    colon = ": " if indent else ":"
    if isinstance(value, list | tuple):
        if not value:
            return "[]"
        items = [js_stringify(item, indent, _depth + 1) or "null" for item in value]
        return "[" + inner + ("," + inner).join(items) + outer + "]"
    if isinstance(value, dict):
        parts: list[str] = []
        for key in js_keys(value):
            rendered = js_stringify(value[key], indent, _depth + 1)
            if rendered is not None:
                parts.append(json.dumps(str(key), ensure_ascii=False) + colon + rendered)
        if not parts:
            return "{}"
        return "{" + inner + ("," + inner).join(parts) + outer + "}"
    return None


# Characters String.prototype.trim removes (ECMAScript WhiteSpace + LineTerminator).
_JS_WHITESPACE = (
    "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000\ufeff"
)


def js_trim(text: str) -> str:
    """``text.trim()`` (Python's ``strip`` disagrees on U+FEFF and U+001C..U+001F)."""
    return text.strip(_JS_WHITESPACE)


def js_truthy(value: Any) -> bool:
    """JavaScript truthiness: empty lists and dicts are truthy, NaN is not."""
    if value is None or value is False:
        return False
    if isinstance(value, bool):
        return True
    if isinstance(value, (int, float)):
        return not (value == 0 or (isinstance(value, float) and math.isnan(value)))
    if isinstance(value, str):
        return value != ""
    return True


# libuv's wording for the errors a skill or context file read can hit (Node prints these).
_UV_MESSAGES = {
    "EACCES": "permission denied",
    "EPERM": "operation not permitted",
    "ENOENT": "no such file or directory",
    "EISDIR": "illegal operation on a directory",
    "ENOTDIR": "not a directory",
    "ELOOP": "too many symbolic links encountered",
    "EIO": "i/o error",
    "ENAMETOOLONG": "name too long",
    "EEXIST": "file already exists",
    "EROFS": "read-only file system",
    "ENOSPC": "no space left on device",
    "EBUSY": "resource busy or locked",
    "EMFILE": "too many open files",
    "ETXTBSY": "text file is busy",
    "EINVAL": "invalid argument",
    "EFBIG": "file too large",
    "EDQUOT": "disk quota exceeded",
}


def errno_code(error: OSError) -> str:
    """The errno name node reports as ``error.code`` (``ENOENT``), ``EIO`` when there is none."""
    return errno.errorcode.get(error.errno or 0, "EIO")


def node_error_message(error: OSError, syscall: str, path: str) -> str:
    """The message Node gives for a failed fs call, e.g. ``EACCES: permission denied, open '/x'``."""
    code = errno_code(error)
    text = _UV_MESSAGES.get(code, (error.strerror or "unknown error").lower())
    return f"{code}: {text}, {syscall} '{path}'"


def read_text(path: str) -> str:
    """Read a file as Node's ``readFileSync(path, "utf-8")`` does: bad bytes become U+FFFD, BOM kept."""
    with open(path, "rb") as handle:
        return handle.read().decode("utf-8", errors="replace")
