"""The few JavaScript semantics pi's skill validation depends on.

pi validates frontmatter values with JS operators (truthiness, ``.length`` in UTF-16
units, ``.trim()``). Reproducing them is what makes our diagnostics and skill lists equal to pi's
for odd inputs such as ``name: 1e3`` or a 600-emoji description.
"""

from __future__ import annotations

import errno
import math
from typing import Any

# Characters String.prototype.trim removes (ECMAScript WhiteSpace + LineTerminator).
_JS_WHITESPACE = (
    "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000\ufeff"
)


def js_trim(text: str) -> str:
    """``text.trim()`` (Python's ``strip`` disagrees on U+FEFF and U+001C..U+001F)."""
    return text.strip(_JS_WHITESPACE)


def js_length(text: str) -> int:
    """``text.length``: UTF-16 code units, so an emoji counts 2."""
    return len(text.encode("utf-16-le")) // 2


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
}


def node_error_message(error: OSError, syscall: str, path: str) -> str:
    """The message Node gives for a failed fs call, e.g. ``EACCES: permission denied, open '/x'``."""
    code = errno.errorcode.get(error.errno or 0, "EIO")
    text = _UV_MESSAGES.get(code, (error.strerror or "unknown error").lower())
    return f"{code}: {text}, {syscall} '{path}'"


def read_text(path: str) -> str:
    """Read a file as Node's ``readFileSync(path, "utf-8")`` does: bad bytes become U+FFFD, BOM kept."""
    with open(path, "rb") as handle:
        return handle.read().decode("utf-8", errors="replace")
