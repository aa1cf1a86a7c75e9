"""Linear chains of the session tree, kept up to date as entries are appended.

A segment starts at a root or at a child of an entry with several children and goes down while
an entry has exactly one child. Tree views fold each segment into one node, so what they need is
O(segments), not O(entries), and the whole tree is built chain by chain from them. Each record
points to its segment (``EntryRecord.chain``). An append extends a chain or starts one in O(1);
one that branches off the middle of a chain splits it in O(length of the part below).

They are only valid while every parent link points backwards in file order (unique ids, no
parent read after its child): :class:`~pi_lsp.session.index.SessionIndex` drops them otherwise.
"""

from __future__ import annotations

from pi_lsp.session.records import EntryRecord


class Segment:
    """One chain's records, top first."""

    __slots__ = ("records",)

    def __init__(self, records: list[EntryRecord]) -> None:
        self.records = records

    @property
    def first(self) -> EntryRecord:
        return self.records[0]

    @property
    def last(self) -> EntryRecord:
        return self.records[-1]


class ChainSegments:
    """The segments of a tree, by their first record."""

    def __init__(self) -> None:
        self.by_first: dict[EntryRecord, Segment] = {}
        # How far below its segment's first record a record is (for labels), until a split.
        self._depths: dict[EntryRecord, int] = {}

    def extend(self, parent: EntryRecord, record: EntryRecord) -> None:
        """``record`` was appended as the first child of ``parent`` (the last of its chain)."""
        segment = record.chain = parent.chain
        segment.records.append(record)

    def start(self, record: EntryRecord) -> None:
        """``record`` starts a chain: a root, or a further child of an entry that has children."""
        segment = Segment([record])
        self.by_first[record] = record.chain = segment

    def branch(self, parent: EntryRecord, only_child: EntryRecord, record: EntryRecord) -> None:
        """``record`` was appended under ``parent``, whose one child so far was ``only_child``.

        ``parent`` was inside a chain: that chain ends at it now, and the rest becomes its own.
        """
        segment: Segment = parent.chain
        depth = self.depth(parent)
        lower = Segment(segment.records[depth + 1 :])
        del segment.records[depth + 1 :]
        assert lower.first is only_child
        for moved in lower.records:
            moved.chain = lower
        self.by_first[only_child] = lower
        self.start(record)
        self._depths.clear()

    def segment_of(self, record: EntryRecord) -> Segment:
        segment: Segment = record.chain
        return segment

    def depth(self, record: EntryRecord) -> int:
        """How many steps below its segment's first record ``record`` is."""
        segment = self.segment_of(record)
        if segment.records[-1] is record:
            return len(segment.records) - 1
        depth = self._depths.get(record)
        if depth is None:
            depth = self._depths[record] = segment.records.index(record)
        return depth
