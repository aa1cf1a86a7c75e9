"""Linear chains of the session tree, kept up to date as entries are appended.

A segment starts at a root or at a child of an entry with several children and goes down while
an entry has exactly one child. Tree views fold each segment into one node, so what they need is
O(segments), not O(entries); the whole tree is built chain by chain from them. Each append
adjusts them in O(1) (extending a chain, or starting a new one) or, when it branches off the
middle of a chain, in O(length of that chain).

They are only valid while every parent link points backwards in file order (unique ids, no
parent read after its child): :class:`~pi_lsp.session.index.SessionIndex` drops them otherwise.
"""

from __future__ import annotations

from collections.abc import Callable

from pi_lsp.session.records import EntryRecord

ParentOf = Callable[[EntryRecord], "EntryRecord | None"]


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
    """The segments of a tree, by their first and by their last record."""

    def __init__(self, parent_of: ParentOf) -> None:
        self._parent_of = parent_of
        self.by_first: dict[EntryRecord, Segment] = {}
        self.by_last: dict[EntryRecord, Segment] = {}
        # Where labelled entries and leaves were found (segment, steps below its first record),
        # valid until a chain is split.
        self._located: dict[EntryRecord, tuple[Segment, int]] = {}

    def extend(self, parent: EntryRecord, record: EntryRecord) -> None:
        """``record`` was appended as the first child of ``parent`` (the last of its chain)."""
        segment = self.by_last.pop(parent)
        segment.records.append(record)
        self.by_last[record] = segment

    def start(self, record: EntryRecord) -> None:
        """``record`` starts a chain: a root, or a further child of an entry that has children."""
        segment = Segment([record])
        self.by_first[record] = segment
        self.by_last[record] = segment

    def branch(self, parent: EntryRecord, only_child: EntryRecord, record: EntryRecord) -> None:
        """``record`` was appended under ``parent``, whose one child so far was ``only_child``.

        ``parent`` was inside a chain: that chain ends at it now, and the rest becomes its own.
        """
        segment, depth = self.locate(parent)
        lower = Segment(segment.records[depth + 1 :])
        del segment.records[depth + 1 :]
        assert lower.first is only_child
        self.by_last[parent] = segment
        self.by_first[only_child] = lower
        self.by_last[lower.last] = lower
        self.start(record)
        self._located.clear()

    def locate(self, record: EntryRecord) -> tuple[Segment, int]:
        """The segment holding ``record`` and how many steps below the segment's first it is."""
        found = self._located.get(record)
        if found is not None:
            return found
        segment = self.by_first.get(record)
        if segment is not None:
            return segment, 0
        segment = self.by_last.get(record)
        if segment is not None:
            return segment, len(segment.records) - 1
        steps = 0
        parent_of = self._parent_of
        current: EntryRecord | None = record
        while current is not None and current not in self.by_first:
            current = parent_of(current)
            steps += 1
        assert current is not None, "every record lies under a segment's first record"
        found = self.by_first[current], steps
        self._located[record] = found
        return found
