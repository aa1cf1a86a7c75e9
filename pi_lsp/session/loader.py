"""Reading session files into records, with diagnostics instead of exceptions for bad lines.

The reader streams the file in chunks so memory stays close to the size of the kept lines, and
it can resume from a byte offset to pick up lines that another process appended.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import orjson

from pi_lsp.fileerrors import TOO_LARGE, FileProblem
from pi_lsp.gcpause import gc_paused
from pi_lsp.regular_files import open_regular
from pi_lsp.session.jsonl import MAX_LINE_BYTES, LineBlock, LongLine, RawLine, loads_line, read_line_blocks
from pi_lsp.session.records import MESSAGE_HEAD, EntryRecord
from pi_lsp.session.rows import Rows, take_block

Severity = Literal["error", "warning", "info"]
UTF8_BOM = b"\xef\xbb\xbf"


def diagnostic(severity: Severity, message: str, line: int | None = None) -> dict[str, Any]:
    """A FileDiagnostic as the protocol defines it."""
    result: dict[str, Any] = {"severity": severity, "message": message}
    if line is not None:
        result["line"] = line
    return result


@dataclass
class ReadResult:
    """What one pass over (part of) a file produced."""

    header: dict[str, Any] | None = None
    header_line: int = 0
    header_offset: int = 0  # where the header line starts in the file, and its exact bytes
    header_raw: bytes = b""
    first_object_is_header: bool = True
    records: list[EntryRecord] = field(default_factory=list)
    rows: Rows | None = None  # with ``lazy``: every entry, in place of ``records``
    objects: list[dict[str, Any] | bytes] | None = None  # every line, kept only for migration
    diagnostics: list[dict[str, Any]] = field(default_factory=list)
    end_offset: int = 0
    next_line: int = 1
    any_parsed: bool = False

    def add(self, record: EntryRecord) -> None:
        if self.rows is not None:
            self.rows.add_record(record)
        else:
            self.records.append(record)


@gc_paused()
def read_lines(
    path: Path,
    *,
    start: int = 0,
    first_line: int = 1,
    expect_header: bool = True,
    keep_objects: bool = False,
    lazy: bool = False,
) -> ReadResult:
    """Parse the file from ``start``: header detection, records, and diagnostics per bad line.

    With ``expect_header`` the first parsed object must be the header (garbage before it is
    skipped); later header lines are ignored with a warning. ``keep_objects`` keeps every parsed
    object (and unparseable line bytes) in order for a migration rewrite. ``lazy`` (an open)
    gives ``rows`` instead of ``records``: pi's message lines are kept as lines, their records
    made on first use (``rows.py``).
    """
    result = ReadResult(first_object_is_header=True)
    if keep_objects:
        result.objects = []
    elif lazy:
        result.rows = Rows()
    need_header = expect_header
    number = first_line
    offset = start
    with open_regular(path) as handle:
        handle.seek(start)
        for item in read_line_blocks(handle, start):
            if isinstance(item, LineBlock):
                number, need_header = _take_lines(
                    result, item.data, item.end, item.offset, number, need_header, start=item.start
                )
                offset = item.offset + item.end
            elif isinstance(item, LongLine):
                _long_line(result, item, number, path)
                if item.terminated:
                    number += 1
                    offset = item.offset + item.size + 1
            elif item.data.strip():
                result.end_offset, result.next_line = offset, number
                _read_tail(result, item.data, item.offset, number, need_header)
                return result
    result.end_offset = offset
    result.next_line = number
    return result


def _long_line(result: ReadResult, line: LongLine, number: int, path: Path) -> None:
    """A line over MAX_LINE_BYTES: skipped, never read whole; a migration or a fork (which copy
    every line) refuse the file rather than drop it."""
    if result.objects is not None:
        raise FileProblem(
            str(path),
            TOO_LARGE,
            f"{path}: line {number} is longer than {MAX_LINE_BYTES:,} bytes; it cannot be carried "
            "into a migrated or forked copy without losing it, so the file was left untouched",
        )
    ending = "" if line.terminated else " and has no final newline"
    result.diagnostics.append(
        diagnostic(
            "warning",
            f"skipped line {number}: it is longer than {MAX_LINE_BYTES:,} bytes "
            f"({line.size:,}{ending}); it was not read, and the file is left as it is",
            number,
        )
    )


def _take_lines(
    result: ReadResult,
    data: bytes,
    end: int,
    base: int,
    number: int,
    need_header: bool,
    *,
    one_line: bool = False,
    start: int = 0,
) -> tuple[int, bool]:
    """Take the LF-terminated lines of ``data[start:end]`` (``base`` is the file offset of ``data``).

    Returns the next line number and whether the header is still being looked for. Plain entry
    lines take a fast path: a message line as pi writes it is indexed from its head alone (its
    message is parsed when a context or a page needs it, see ``EntryRecord.verify``), other entry
    lines are parsed; everything else (blank, malformed, headers, migration) goes through
    :func:`_take_line`.
    """
    rows = result.rows
    add = result.add
    fast = result.objects is None
    find = data.find
    head_of = MESSAGE_HEAD.match
    from_head = EntryRecord.from_head
    position = start
    while position < end:
        if rows is not None and not need_header and not one_line:
            return _take_block(result, rows, data, position, end, base, number), need_header
        newline = find(b"\n", position, end)
        if fast and not need_header:
            head = head_of(data, position, newline)
            # A line ending in "}" whose rest holds no second entry's "parentId" (pi's torn write
            # followed by its next append on the same line parses whole, and fails, as before).
            if (
                head is not None
                and data[newline - 1] == 0x7D
                and find(b'"parentId":', head.end(), newline) < 0
            ):
                try:
                    record = from_head(data[position:newline], head, position, number)
                except UnicodeDecodeError:
                    pass
                else:
                    result.any_parsed = True
                    add(record)
                    number += 1
                    position = newline + 1
                    continue
        line = data[position:newline]
        if fast and not need_header:
            try:
                value = orjson.loads(line)
            except orjson.JSONDecodeError:
                value = None
            if type(value) is dict and value.get("type") != "session":
                result.any_parsed = True
                add(EntryRecord(value, line, number))
                number += 1
                position = newline + 1
                continue
        if line.strip():
            need_header = _take_line(result, RawLine(number, base + position, line), need_header)
        number += 1
        position = newline + 1
    return number, need_header


def _take_block(
    result: ReadResult, rows: Rows, data: bytes, start: int, end: int, base: int, number: int
) -> int:
    """The rest of a block once the header is behind: canonical message lines kept as lines
    (``rows.take_block``), every other line read by :func:`_take_lines` as it would be."""

    def take_other(line: bytes, offset: int, line_number: int) -> None:
        _take_lines(result, line + b"\n", len(line) + 1, base + offset, line_number, False, one_line=True)

    next_number = take_block(rows, data, start, end, number, take_other)
    if rows.slots:
        result.any_parsed = True
    return next_number


def _without_bom(data: bytes, offset: int) -> bytes:
    """The file's first line without a UTF-8 BOM (pi trims the content, which drops U+FEFF)."""
    return data[len(UTF8_BOM) :] if offset == 0 and data.startswith(UTF8_BOM) else data


def _read_tail(result: ReadResult, tail: bytes, offset: int, number: int, need_header: bool) -> None:
    try:
        value = loads_line(_without_bom(tail, offset))
    except ValueError:
        value = None
    if isinstance(value, dict):
        _take_line(result, RawLine(number, offset, tail), need_header)
        result.end_offset = offset + len(tail)
        result.diagnostics.append(
            diagnostic("info", f"line {number} has no final newline; the next append adds it", number)
        )
    else:
        if result.objects is not None:
            result.objects.append(tail)  # a migration rewrite keeps it verbatim, like other bad lines
        result.diagnostics.append(
            diagnostic(
                "warning",
                f"torn last line {number} (an interrupted write); it is skipped and will be "
                "isolated by the next append",
                number,
            )
        )


def _take_line(result: ReadResult, raw: RawLine, need_header: bool) -> bool:
    """Account for one line; returns whether the header is still being looked for."""
    bom = raw.offset == 0 and raw.data.startswith(UTF8_BOM)
    if bom:
        raw = RawLine(raw.number, raw.offset, _without_bom(raw.data, 0))
    try:
        value = loads_line(raw.data)
    except ValueError as error:
        result.diagnostics.append(
            diagnostic("warning", f"skipped malformed line {raw.number}: {error}", raw.number)
        )
        if result.objects is not None:
            result.objects.append(raw.data)
        return need_header
    if not isinstance(value, dict):
        result.diagnostics.append(
            diagnostic("warning", f"skipped line {raw.number}: not a JSON object", raw.number)
        )
        if result.objects is not None:
            result.objects.append(raw.data)
        return need_header
    first = not result.any_parsed
    result.any_parsed = True
    if value.get("type") == "session":
        if need_header and first and isinstance(value.get("id"), str):
            result.header = value
            result.header_line = raw.number
            result.header_offset = raw.offset + (len(UTF8_BOM) if bom else 0)
            result.header_raw = raw.data
            if result.objects is not None:
                result.objects.append(value)
            return False
        result.diagnostics.append(
            diagnostic("warning", f"ignored extra session header on line {raw.number}", raw.number)
        )
        if result.objects is not None:
            result.objects.append(value)
        return need_header
    if need_header and first:
        result.first_object_is_header = False
    if result.objects is not None:
        result.objects.append(value)
    result.add(EntryRecord(value, raw.data, raw.number))
    return need_header
