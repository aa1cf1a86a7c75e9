"""A file's entries as read at open: records, or canonical message lines not made into records yet.

Opening a session needs, of most lines, only that they are pi's message lines and their ids
(the leaf, the id index, the count); the record of a line is made when a request first touches
it. The lines are found a block at a time by one regular expression over the block
(``findall``: no Python work per line), and a line counts as canonical exactly when the per-line
reader (``loader._take_lines``) would index it from its head: its head matches
:data:`~pi_lsp.session.records.MESSAGE_HEAD` (here with ASCII-only strings, so it decodes), it
ends in ``}`` and holds no second ``"parentId":``. Every other line goes through the per-line
reader, unchanged.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from itertools import compress, repeat
from operator import itemgetter, not_
from typing import TYPE_CHECKING

from pi_lsp.session.records import MESSAGE_HEAD, EntryRecord

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

_ASCII = rb"[\x20\x21\x23-\x5b\x5d-\x7f]*"
"""A JSON string's content without escapes, control characters or non-ASCII bytes."""

BLOCK_LINE = re.compile(
    rb'(?:(\{"type":"message","id":"('
    + _ASCII
    + rb')","parentId":(?:"'
    + _ASCII
    + rb'"|null),"timestamp":"'
    + _ASCII
    + rb'","message":\{"role":"'
    + _ASCII
    + rb'"[^\n]*\})|[^\n]*)\n'
)
"""One line of a block: (the line when canonical, else b"", its id). Every line gives exactly
one match, so the matches are the block's lines in order."""

PARENT_KEY = b'"parentId":'
_LINE = itemgetter(0)
_ID = itemgetter(1)


class Rows:
    """Entries in file order: made records, or the bytes of canonical lines (made on first use).

    ``positions`` maps each id to the position of its last entry. Line numbers of lines not made
    yet are kept as runs: ``_run_starts[k]`` is the position where a run of consecutive line
    numbers starts at ``_run_numbers[k]``.
    """

    def __init__(self) -> None:
        self.slots: list[EntryRecord | bytes] = []
        self.positions: dict[str, int] = {}
        self.records: list[EntryRecord] = []  # the records made while reading (not from lines)
        self._run_starts: list[int] = []
        self._run_numbers: list[int] = []

    def add_record(self, record: EntryRecord) -> None:
        if record.id is not None:
            self.positions[record.id] = len(self.slots)
        self.slots.append(record)
        self.records.append(record)

    def add_lines(self, lines: list[bytes], ids: Iterable[str], first_number: int) -> None:
        """Canonical lines and their ids, numbered from ``first_number`` on."""
        if not lines:
            return
        position = len(self.slots)
        if not self._run_starts or self.number_of(position) != first_number:
            self._run_starts.append(position)
            self._run_numbers.append(first_number)
        self.slots += lines
        self.positions.update(zip(ids, range(position, position + len(lines)), strict=True))

    def number_of(self, position: int) -> int:
        """The line number of the line at ``position`` (of a run; made records keep their own)."""
        run = bisect_right(self._run_starts, position) - 1
        if run < 0:
            return 0
        return self._run_numbers[run] + position - self._run_starts[run]

    def make(self, position: int) -> EntryRecord:
        """The record at ``position``, made now if it was a line."""
        slot = self.slots[position]
        if type(slot) is not bytes:
            return slot  # type: ignore[return-value]
        head = MESSAGE_HEAD.match(slot)
        assert head is not None  # the block pattern accepted it
        record = EntryRecord.from_head(slot, head, 0, self.number_of(position))
        self.slots[position] = record
        return record

    def make_all(self) -> list[EntryRecord]:
        """Every record (the slots list itself, now made throughout)."""
        make = self.make
        slots = self.slots
        for position in compress(range(len(slots)), map(isinstance, slots, repeat(bytes))):
            make(position)
        return slots  # type: ignore[return-value]


def take_block(
    rows: Rows,
    data: bytes,
    start: int,
    end: int,
    number: int,
    take_other: Callable[[bytes, int, int], None],
) -> int:
    """Take the LF-terminated lines of ``data[start:end]`` into ``rows``: canonical lines as they
    are, every other line through ``take_other(line, offset in data, number)``, in file order.
    Returns the next line number."""
    found = BLOCK_LINE.findall(data, start, end)
    lines: list[bytes] = list(map(_LINE, found))
    count = len(lines)
    bad = list(compress(range(count), map(not_, lines)))
    others = _lines_at(data, start, lines, bad)
    if data.count(PARENT_KEY, start, end) != count - len(bad) + sum(
        line.count(PARENT_KEY) for _, line in others
    ):
        # A canonical line holds a second "parentId" (pi's torn write and its next append on
        # one line, or a nested one): those lines are read one by one.
        twice = compress(range(count), map((1).__lt__, map(bytes.count, lines, repeat(PARENT_KEY))))
        bad = sorted({*bad, *twice})
        others = _lines_at(data, start, lines, bad)
    if not bad:
        rows.add_lines(lines, map(bytes.decode, map(_ID, found)), number)
        return number + count
    done = 0
    for index, (offset, line) in zip(bad, others, strict=True):
        if index > done:
            rows.add_lines(lines[done:index], map(bytes.decode, map(_ID, found[done:index])), number + done)
        take_other(line, offset, number + index)
        done = index + 1
    if done < count:
        rows.add_lines(lines[done:], map(bytes.decode, map(_ID, found[done:])), number + done)
    return number + count


def _lines_at(data: bytes, start: int, lines: list[bytes], indices: list[int]) -> list[tuple[int, bytes]]:
    """The offset and bytes of the lines at ``indices`` (ascending) of the block's lines, which
    start at ``start`` of ``data`` (``lines``: the canonical ones, b"" for the others)."""
    found: list[tuple[int, bytes]] = []
    position = start
    done = 0
    for index in indices:
        position += sum(map(len, lines[done:index])) + index - done
        end = data.index(b"\n", position)
        found.append((position, data[position:end]))
        position = end + 1
        done = index + 1
    return found
