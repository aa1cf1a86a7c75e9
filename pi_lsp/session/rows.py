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

_CANONICAL_HEAD = (
    rb'\{"type":"message","id":"('
    + _ASCII
    + rb')","parentId":(?:"'
    + _ASCII
    + rb'"|null),"timestamp":"'
    + _ASCII
    + rb'","message":\{"role":"'
    + _ASCII
    + rb'"'
)
BLOCK_IDS = re.compile(rb"(?:" + _CANONICAL_HEAD + rb"[^\n]*\}|[^\n]*)\n")
"""One line: its id when it is canonical (its head, and a last byte "}"), else b"" (an empty id
counts as not canonical). Every line gives exactly one match, so the matches are the lines in
order."""

HEAD_IDS = re.compile(rb"(?:" + _CANONICAL_HEAD + rb"[^\n]*|[^\n]*)\n")
""":data:`BLOCK_IDS` for the heads of long lines (their last bytes are checked apart)."""

HEAD_BYTES = 256
"""Where lines are long, the pattern reads only their first HEAD_BYTES (pi's heads take about
130); a head longer than that is not found, and its line is read by the per-line reader."""
_LONG_LINES = 2 * HEAD_BYTES
_SAMPLE_BYTES = 1 << 16
_HEAD = itemgetter(slice(0, HEAD_BYTES))
PARENT_KEY = b'"parentId":'


class _Unsplit:
    """The slot of each line of a block whose lines are all canonical, until one is needed: the
    block is split into its lines then (and not copied line by line at open)."""

    __slots__ = ("count", "data", "end", "first", "start")

    def __init__(self, data: bytes, start: int, end: int, first: int, count: int) -> None:
        self.data = data
        self.start = start
        self.end = end
        self.first = first  # the position of its first line
        self.count = count


class Rows:
    """Entries in file order: made records, or canonical lines (made into records on first use),
    which a block whose lines are all canonical keeps unsplit (:class:`_Unsplit`) until then.

    ``positions`` maps each id (as :func:`id_key`) to the position of its last entry. Line
    numbers of lines not made yet are kept as runs: ``_run_starts[k]`` is the position where a
    run of consecutive line numbers starts at ``_run_numbers[k]``.
    """

    def __init__(self) -> None:
        self.slots: list[EntryRecord | bytes | _Unsplit] = []
        self._unsplit: list[_Unsplit] = []
        self.positions: dict[bytes | None, int] = {}  # None: never a key
        self.records: list[EntryRecord] = []  # the records made while reading (not from lines)
        self._run_starts: list[int] = []
        self._run_numbers: list[int] = []

    def add_record(self, record: EntryRecord) -> None:
        if record.id is not None:
            self.positions[record.id.encode("utf-8", "surrogatepass")] = len(self.slots)
        self.slots.append(record)
        self.records.append(record)

    def add_lines(self, lines: list[bytes], ids: Iterable[bytes], first_number: int) -> None:
        """Canonical lines and their ids (ASCII bytes: their :func:`id_key`), numbered from
        ``first_number`` on."""
        if not lines:
            return
        position = len(self.slots)
        self._note_run(position, first_number)
        self.slots += lines
        self.positions.update(zip(ids, range(position, position + len(lines)), strict=True))

    def add_block(self, data: bytes, start: int, end: int, ids: list[bytes], first_number: int) -> None:
        """A block's lines ``data[start:end]``, all canonical, with their ids."""
        position = len(self.slots)
        block = _Unsplit(data, start, end, position, len(ids))
        self._note_run(position, first_number)
        self.slots += [block] * len(ids)
        self._unsplit.append(block)
        self.positions.update(zip(ids, range(position, position + len(ids)), strict=True))

    def _note_run(self, position: int, first_number: int) -> None:
        if not self._run_starts or self.number_of(position) != first_number:
            self._run_starts.append(position)
            self._run_numbers.append(first_number)

    def _split(self, block: _Unsplit) -> None:
        lines = block.data[block.start : block.end].split(b"\n")
        lines.pop()
        assert len(lines) == block.count
        self.slots[block.first : block.first + block.count] = lines
        block.data = b""

    def number_of(self, position: int) -> int:
        """The line number of the line at ``position`` (of a run; made records keep their own)."""
        run = bisect_right(self._run_starts, position) - 1
        if run < 0:
            return 0
        return self._run_numbers[run] + position - self._run_starts[run]

    def make(self, position: int) -> EntryRecord:
        """The record at ``position``, made now if it was a line."""
        slot = self.slots[position]
        if type(slot) is _Unsplit:
            self._split(slot)
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
        for block in self._unsplit:
            if block.data:
                self._split(block)
        self._unsplit = []
        slots = self.slots
        match = MESSAGE_HEAD.match
        from_head = EntryRecord.from_head
        ends = [*self._run_starts[1:], len(slots)] if self._run_starts else []
        for start, end, number in zip(self._run_starts, ends, self._run_numbers, strict=True):
            first = number - start  # the line number of position 0, in this run
            for position in range(start, end):
                slot = slots[position]
                if type(slot) is bytes:
                    slots[position] = from_head(slot, match(slot), 0, first + position)  # type: ignore[arg-type]
        return slots  # type: ignore[return-value]

    def chain(self, position: int | None, steps: int) -> list[EntryRecord] | None:
        """The records from ``position`` up through their parents (the start first), made as they
        are met; None when there are more than ``steps`` (a parent cycle)."""
        positions = self.positions
        slots = self.slots
        match = MESSAGE_HEAD.match
        from_head = EntryRecord.from_head
        run_start = run_end = first = 0  # the run of the last line made (usually the next one's)
        chain: list[EntryRecord] = []
        append = chain.append
        while position is not None:
            if not steps:
                return None
            steps -= 1
            slot = slots[position]
            if type(slot) is _Unsplit:
                self._split(slot)
                slot = slots[position]
            if type(slot) is bytes:
                if not run_start <= position < run_end:
                    run_start, run_end, first = self._run_of(position)
                slot = slots[position] = from_head(slot, match(slot), 0, first + position)  # type: ignore[arg-type]
            append(slot)  # type: ignore[arg-type]
            parent = slot.parent_id  # type: ignore[union-attr]
            position = positions.get(parent.encode("utf-8", "surrogatepass")) if parent is not None else None
        return chain

    def _run_of(self, position: int) -> tuple[int, int, int]:
        """The run holding ``position``: its start, its end and the line number of position 0."""
        starts = self._run_starts
        run = bisect_right(starts, position) - 1
        end = starts[run + 1] if run + 1 < len(starts) else len(self.slots)
        return starts[run], end, self._run_numbers[run] - starts[run]


def id_key(entry_id: object) -> bytes | None:
    """An id as a key of ``Rows.positions``: its UTF-8 bytes (a lone surrogate kept as Python's
    ``surrogatepass`` writes it, so two ids never share a key), which a canonical line holds as it
    is (no decoding at open); None for what is not a string."""
    return entry_id.encode("utf-8", "surrogatepass") if isinstance(entry_id, str) else None


def id_of_key(key: bytes) -> str:
    return key.decode("utf-8", "surrogatepass")


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
    sample = data.count(b"\n", start, min(end, start + _SAMPLE_BYTES))
    if min(end - start, _SAMPLE_BYTES) <= _LONG_LINES * sample:
        ids = BLOCK_IDS.findall(data, start, end)
        if not ids.count(b"") and data.count(PARENT_KEY, start, end) == len(ids):
            rows.add_block(data, start, end, ids, number)  # the usual block: every line canonical
            return number + len(ids)
        lines = _lines(data, start, end)
    else:  # long lines: the pattern reads their heads alone, not megabytes of messages
        lines = _lines(data, start, end)
        ids = HEAD_IDS.findall(b"\n".join(map(_HEAD, lines)) + b"\n")
    count = len(lines)
    ends = list(map(bytes.endswith, lines, repeat(b"}")))
    bad = list(compress(range(count), map(not_, ids))) if ids.count(b"") else []
    if ends.count(False):
        bad = sorted({*bad, *compress(range(count), map(not_, ends))})
    if data.count(PARENT_KEY, start, end) != count - len(bad) + sum(
        lines[index].count(PARENT_KEY) for index in bad
    ):
        # A canonical line holds a second "parentId" (pi's torn write and its next append on
        # one line, or a nested one): those lines are read one by one.
        twice = compress(range(count), map((1).__lt__, map(bytes.count, lines, repeat(PARENT_KEY))))
        bad = sorted({*bad, *twice})
    if not bad:
        rows.add_lines(lines, ids, number)
        return number + count
    done = 0
    offset = start
    for index in bad:
        if index > done:
            rows.add_lines(lines[done:index], ids[done:index], number + done)
        offset += sum(map(len, lines[done:index])) + index - done
        take_other(lines[index], offset, number + index)
        offset += len(lines[index]) + 1
        done = index + 1
    if done < count:
        rows.add_lines(lines[done:], ids[done:], number + done)
    return number + count


def _lines(data: bytes, start: int, end: int) -> list[bytes]:
    """The LF-terminated lines of ``data[start:end]`` (``start`` is a line's first byte), without
    copying the block first when what follows ``end`` is the rest of one line (as in a LineBlock)
    and few lines come before ``start`` (the end of a line begun in the chunk before)."""
    lines = data.split(b"\n")
    if len(lines.pop()) != len(data) - end:
        lines = data[start:end].split(b"\n")
        lines.pop()
    elif start:
        del lines[: data.count(b"\n", 0, start)]
    return lines
