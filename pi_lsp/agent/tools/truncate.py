"""Output truncation shared by the tools: pi's two limits (lines, bytes), whichever is hit first.

The record returned is what pi stores in ``details.truncation``, with pi's key order, so a
session written by us reads the same as one written by pi.
"""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from pi_lsp.jscompat import js_len

DEFAULT_MAX_LINES = 2000
DEFAULT_MAX_BYTES = 50 * 1024
GREP_MAX_LINE_LENGTH = 500

Truncation = dict[str, Any]


def utf8_len(text: str) -> int:
    """Bytes ``text`` takes in UTF-8 (lone surrogates count as the 3 bytes of U+FFFD, as in node)."""
    if text.isascii():
        return len(text)
    return len(text.encode("utf-8", "surrogatepass"))


def format_size(size: int) -> str:
    """``123B``, ``1.5KB``, ``2.0MB``: pi's human-readable size."""
    if size < 1024:
        return f"{size}B"
    if size < 1024 * 1024:
        return f"{to_fixed(size / 1024, 1)}KB"
    return f"{to_fixed(size / (1024 * 1024), 1)}MB"


def to_fixed(value: float, digits: int) -> str:
    """``Number.prototype.toFixed(digits)``: the exact binary value rounded half away from zero."""
    return str(Decimal(value).quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP))


def _record(
    content: str,
    truncated_by: str | None,
    lines: tuple[int, int],
    sizes: tuple[int, int],
    limits: tuple[int, int],
    *,
    last_line_partial: bool = False,
    first_line_exceeds_limit: bool = False,
) -> Truncation:
    """pi's truncation record; ``lines``/``sizes`` are (total, output), ``limits`` (lines, bytes)."""
    return {
        "content": content,
        "truncated": truncated_by is not None,
        "truncatedBy": truncated_by,
        "totalLines": lines[0],
        "totalBytes": sizes[0],
        "outputLines": lines[1],
        "outputBytes": sizes[1],
        "lastLinePartial": last_line_partial,
        "firstLineExceedsLimit": first_line_exceeds_limit,
        "maxLines": limits[0],
        "maxBytes": limits[1],
    }


def _cut(
    kept: list[str],
    used: int,
    by: str,
    total: tuple[int, int],
    limits: tuple[int, int],
    partial: bool = False,
) -> Truncation:
    """The record of a truncated text made of ``kept`` (``used`` bytes counted on the way)."""
    if len(kept) >= limits[0] and used <= limits[1]:
        by = "lines"
    output = "\n".join(kept)
    return _record(
        output, by, (total[0], len(kept)), (total[1], utf8_len(output)), limits, last_line_partial=partial
    )


def _measure(
    content: str, max_lines: int, max_bytes: int
) -> tuple[list[str], tuple[int, int], tuple[int, int], Truncation | None]:
    """(lines, (total lines, total bytes), limits, the record when nothing needs cutting)."""
    total_bytes = utf8_len(content)
    lines = content.split("\n")
    total, limits = (len(lines), total_bytes), (max_lines, max_bytes)
    if len(lines) <= max_lines and total_bytes <= max_bytes:
        return (
            lines,
            total,
            limits,
            _record(content, None, (total[0], total[0]), (total[1], total[1]), limits),
        )
    return lines, total, limits, None


def truncate_head(
    content: str, max_lines: int = DEFAULT_MAX_LINES, max_bytes: int = DEFAULT_MAX_BYTES
) -> Truncation:
    """Keep the first lines that fit; never cuts inside a line (file reads, search results)."""
    lines, total, limits, whole = _measure(content, max_lines, max_bytes)
    if whole is not None:
        return whole
    if utf8_len(lines[0]) > max_bytes:
        return _record("", "bytes", (total[0], 0), (total[1], 0), limits, first_line_exceeds_limit=True)
    kept: list[str] = []
    used = 0
    by = "lines"
    for index, line in enumerate(lines[:max_lines]):
        size = utf8_len(line) + (1 if index > 0 else 0)
        if used + size > max_bytes:
            by = "bytes"
            break
        kept.append(line)
        used += size
    return _cut(kept, used, by, total, limits)


def truncate_tail(
    content: str, max_lines: int = DEFAULT_MAX_LINES, max_bytes: int = DEFAULT_MAX_BYTES
) -> Truncation:
    """Keep the last lines that fit (command output); a single huge last line is cut at its end."""
    lines, total, limits, whole = _measure(content, max_lines, max_bytes)
    if whole is not None:
        return whole
    kept: list[str] = []  # newest first while collecting
    used = 0
    by = "lines"
    partial = False
    for line in reversed(lines):
        if len(kept) >= max_lines:
            break
        size = utf8_len(line) + (1 if kept else 0)
        if used + size > max_bytes:
            by = "bytes"
            if not kept:
                tail = tail_bytes(line, max_bytes)
                kept.append(tail)
                used = utf8_len(tail)
                partial = True
            break
        kept.append(line)
        used += size
    kept.reverse()
    return _cut(kept, used, by, total, limits, partial)


def tail_bytes(text: str, max_bytes: int) -> str:
    """The end of ``text`` in at most ``max_bytes`` UTF-8 bytes, starting on a character boundary."""
    data = text.encode("utf-8", "surrogatepass")
    if len(data) <= max_bytes:
        return text
    start = len(data) - max_bytes
    while start < len(data) and (data[start] & 0xC0) == 0x80:
        start += 1
    return data[start:].decode("utf-8", "replace")


def truncate_line(line: str, max_chars: int = GREP_MAX_LINE_LENGTH) -> tuple[str, bool]:
    """A grep line cut to ``max_chars`` UTF-16 units with pi's ``... [truncated]`` marker."""
    if js_len(line) <= max_chars:
        return line, False
    return f"{js_slice(line, max_chars)}... [truncated]", True


def js_slice(text: str, units: int) -> str:
    """``text.slice(0, units)`` counted in UTF-16 code units (may split a surrogate pair, as JS does)."""
    if text.isascii():
        return text[:units]
    encoded = text.encode("utf-16-le", "surrogatepass")[: units * 2]
    return encoded.decode("utf-16-le", "surrogatepass")
