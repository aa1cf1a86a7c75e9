"""The in-memory tree over a session's records: id index, labels, name, paths and the tree."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from itertools import compress, repeat
from operator import attrgetter, ne
from typing import Any

from pi_lsp.gcpause import gc_paused
from pi_lsp.jscompat import iso_to_ms
from pi_lsp.session.records import EntryRecord
from pi_lsp.session.rows import Rows, id_key, id_of_key
from pi_lsp.session.segments import ChainSegments


@dataclass(slots=True)
class TreeNode:
    """One node of :meth:`SessionIndex.tree` (pi's ``SessionTreeNode``)."""

    record: EntryRecord
    children: list[TreeNode] = field(default_factory=list)
    label: str | None = None
    label_timestamp: Any = None


_CHILDREN = attrgetter("children")
_ID = attrgetter("id")
_ROLE = attrgetter("role")
_TYPE = attrgetter("type")


class SessionIndex:
    """Records in file order plus the lookups pi keeps (later duplicate ids win, as in pi).

    ``records``, ``by_id``, the labels, the name and the assistant count are kept as records
    arrive. The tree links (children, roots, chains) are built on first use when a whole file is
    taken at once (:meth:`extend` on an empty index, i.e. an open): opening a session and reading
    a page or the context of its leaf need only the id index, and the links cost as much again.

    An open gives :meth:`take_rows` the file's :class:`Rows`, most of them lines not made into
    records yet: until ``records`` or ``by_id`` is first asked for (which makes every record),
    :meth:`get`, :meth:`has`, :meth:`count`, :meth:`last` and the path walks make only the
    records they touch, from an index of positions by id.
    """

    def __init__(self) -> None:
        self._records: list[EntryRecord] = []
        self._by_id: dict[str, EntryRecord] = {}
        # Between an open and the first use of ``records``/``by_id``: the rows and their
        # positions by id (later duplicates win, as in ``by_id``).
        self._rows: Rows | None = None
        self._positions: dict[bytes | None, int] = {}
        self.labels: dict[str, tuple[str, Any]] = {}
        self.name_record: EntryRecord | None = None
        self._assistant_count = 0
        # Children by parent id, in file order, for on-demand tree queries: most entries have one
        # child, so the first is kept alone and only further children get a list.
        self._first_child: dict[str, EntryRecord] = {}
        self._more_children: dict[str, list[EntryRecord]] = {}
        # The roots by position in file order, and the positions of roots whose parent id is not
        # known yet (they stop being roots when an entry with that id arrives).
        self._roots: dict[int, EntryRecord] = {}
        self._orphans: dict[str, list[int]] = {}
        # True once a parent link may point forwards in file order (a duplicate id, or an orphan
        # adopted later): only then can the tree have cycles or children move between nodes.
        self._forward_links = False
        self._segments: ChainSegments | None = ChainSegments()
        # How many records the links cover, and the ids those records hold (the same dict as
        # ``by_id`` once they cover every record).
        self._linked = 0
        self._linked_ids: dict[str, EntryRecord] = self._by_id

    @property
    def records(self) -> list[EntryRecord]:
        """Every record in file order (made now for an open that has not made them all)."""
        if self._rows is not None:
            self._make_all()
        return self._records

    @property
    def by_id(self) -> dict[str, EntryRecord]:
        """The record of each id (the last in file order), see :attr:`records`."""
        if self._rows is not None:
            self._make_all()
        return self._by_id

    @gc_paused()
    def _make_all(self) -> None:
        rows = self._rows
        assert rows is not None
        records = rows.make_all()
        self._assistant_count += list(map(_ROLE, records)).count("assistant")
        positions = self._positions
        ids = map(id_of_key, positions)  # type: ignore[arg-type]  # no None key
        self._by_id.update(zip(ids, map(records.__getitem__, positions.values()), strict=True))
        self._records = records
        self._rows = None
        self._positions = {}
        self._linked_ids = {}

    @property
    def assistant_count(self) -> int:
        """How many assistant messages there are (counted once every record is made)."""
        if self._rows is not None:
            self._make_all()
        return self._assistant_count

    @property
    def count(self) -> int:
        """How many records there are."""
        rows = self._rows
        return len(rows.slots) if rows is not None else len(self._records)

    def get(self, entry_id: str) -> EntryRecord | None:
        """``by_id.get(entry_id)``, making only that record."""
        rows = self._rows
        if rows is None:
            return self._by_id.get(entry_id)
        position = self._positions.get(id_key(entry_id))
        return rows.make(position) if position is not None else None

    def has(self, entry_id: str) -> bool:
        """``entry_id in by_id``."""
        if self._rows is not None:
            return id_key(entry_id) in self._positions
        return entry_id in self._by_id

    def last(self) -> EntryRecord | None:
        """The last record in file order."""
        rows = self._rows
        if rows is not None:
            return rows.make(len(rows.slots) - 1) if rows.slots else None
        return self._records[-1] if self._records else None

    def _id_count(self) -> int:
        if self._rows is not None:
            return len(self._positions)
        return len(self._by_id)

    def take_rows(self, rows: Rows) -> None:
        """Start an empty index with a file's rows (an open), making no records yet."""
        assert not self._records and self._rows is None
        if not rows.slots:
            return
        self._rows = rows
        self._positions = rows.positions
        # Lines are messages: only the records made while reading can be labels or names.
        for record in compress(rows.records, map(ne, map(_TYPE, rows.records), repeat("message"))):
            self._note(record)

    @property
    def forward_links(self) -> bool:
        self._link_all()
        return self._forward_links

    def add(self, record: EntryRecord) -> None:
        self._link_all()
        self.records.append(record)
        self._link(record)
        if record.id is not None:
            self.by_id[record.id] = record
        self._note(record)

    def _note(self, record: EntryRecord) -> None:
        """The labels, the name and the assistant count (kept for every record as it arrives)."""
        if record.type == "label" and isinstance(record.target_id, str):
            if record.label:
                # Like a JS Map: updating a key keeps its position, deleting and re-adding moves it.
                self.labels[record.target_id] = (str(record.label), record.timestamp)
            else:
                self.labels.pop(record.target_id, None)
        elif record.type == "session_info":
            self.name_record = record
        elif record.role == "assistant":
            self._assistant_count += 1

    def _link(self, record: EntryRecord) -> None:
        """Link the next record in file order into the tree (``self._linked`` is its position)."""
        position = self._linked
        self._linked = position + 1
        by_id = self._linked_ids
        entry_id = record.id
        parent_id = record.parent_id
        parent: EntryRecord | None = None
        first: EntryRecord | None = None
        siblings = 0  # children the parent's id had before this one
        if parent_id is not None and parent_id != entry_id:
            parent = by_id.get(parent_id)
            first = self._first_child.setdefault(parent_id, record)
            if first is not record:
                more = self._more_children.get(parent_id)
                if more is None:
                    self._more_children[parent_id] = [record]
                    siblings = 1
                else:
                    siblings = 1 + len(more)
                    more.append(record)
            if parent is None:
                self._orphans.setdefault(parent_id, []).append(position)
        if parent is None:
            self._roots[position] = record
        if entry_id is not None:
            if entry_id in by_id:
                self._forward_links = True
            elif self._orphans:
                adopted = self._orphans.pop(entry_id, None)
                if adopted is not None:
                    self._forward_links = True
                    for orphan in adopted:
                        del self._roots[orphan]
            by_id[entry_id] = record
        segments = self._segments
        if segments is not None:
            if self._forward_links:
                self._segments = None
            elif parent is None or siblings >= 2:
                segments.start(record)
            elif siblings == 0:
                segments.extend(parent, record)
            else:
                assert first is not None
                segments.branch(parent, first, record)

    def extend(self, records: Iterable[EntryRecord]) -> None:
        """:meth:`add` each record; into an empty index (a file read whole) the tree links are
        left for first use (:meth:`_link_all`)."""
        if self.records:
            for record in records:
                self.add(record)
            return
        self.records.extend(records)
        by_id = self.by_id
        by_id.update(zip(map(_ID, self.records), self.records, strict=True))
        by_id.pop(None, None)  # type: ignore[call-overload]  # records without an id
        # Roles are None but on messages; only the few other records can be labels or names.
        self._assistant_count += list(map(_ROLE, self.records)).count("assistant")
        for record in compress(self.records, map(ne, map(_TYPE, self.records), repeat("message"))):
            self._note(record)
        if self.records:
            self._linked_ids = {}

    def _link_all(self) -> None:
        """Build the tree links of the records not linked yet (see the class docstring); asked
        before every tree answer and append, so the usual case (nothing left) is one comparison."""
        if self._linked != len(self.records):
            self._link_rest()

    @gc_paused()
    def _link_rest(self) -> None:
        records = self.records
        link = self._link
        by_id = self._linked_ids
        first_child = self._first_child
        orphans = self._orphans
        for record in records[self._linked :]:
            entry_id = record.id
            parent_id = record.parent_id
            if (
                self._segments is None
                or entry_id is None
                or parent_id is None
                or entry_id in by_id
                or parent_id in first_child
                or (orphans and entry_id in orphans)
            ):
                link(record)
                continue
            parent = by_id.get(parent_id)
            if parent is None:
                link(record)
                continue
            # The usual record (continuing a chain): link(record), inlined.
            self._linked += 1
            first_child[parent_id] = record
            by_id[entry_id] = record
            chain = record.chain = parent.chain  # segments.extend(parent, record), inlined
            chain.records.append(record)
        self._linked_ids = self.by_id

    @property
    def session_name(self) -> str | None:
        """The newest pi's rule: trimmed name of the last ``session_info`` in file order, "" clears."""
        if self.name_record is None or not isinstance(self.name_record.name, str):
            return None
        return self.name_record.name.strip() or None

    @gc_paused()
    def path_to(self, entry_id: str | None) -> list[EntryRecord]:
        """Records root→``entry_id``; [] for None/unknown. Stops at unknown parents and cycles."""
        if entry_id is None:
            return []
        rows = self._rows
        if rows is not None:
            chain = rows.chain(self._positions.get(id_key(entry_id)), self._id_count())
            if chain is None:
                return self._path_through_cycle(entry_id)
            chain.reverse()
            return chain
        find = self.get
        record = find(entry_id)
        path: list[EntryRecord] = []
        append = path.append
        # A path without a cycle holds each record at most once: a longer walk has met a cycle,
        # and only then is the walk redone remembering what it has seen.
        steps_left = self._id_count()
        while record is not None:
            if not steps_left:
                return self._path_through_cycle(entry_id)
            steps_left -= 1
            append(record)
            parent = record.parent_id
            record = find(parent) if parent is not None else None
        path.reverse()
        return path

    def _path_through_cycle(self, entry_id: str) -> list[EntryRecord]:
        record = self.get(entry_id)
        path: list[EntryRecord] = []
        seen: set[int] = set()
        while record is not None and id(record) not in seen:
            seen.add(id(record))
            path.append(record)
            parent = record.parent_id
            record = self.get(parent) if parent is not None else None
        path.reverse()
        return path

    def path_tail(self, entry_id: str | None, limit: int) -> tuple[list[EntryRecord], bool]:
        """The last ``limit`` records of :meth:`path_to` and whether older ones exist, in O(limit)."""
        tail: list[EntryRecord] = []
        record = self.get(entry_id) if entry_id is not None else None
        seen: set[int] = set()
        while record is not None and id(record) not in seen and len(tail) < limit:
            seen.add(id(record))
            tail.append(record)
            parent = record.parent_id
            record = self.get(parent) if parent is not None else None
        tail.reverse()
        return tail, record is not None and id(record) not in seen

    def child_records(self, parent_id: str) -> list[EntryRecord]:
        """Records whose parentId is ``parent_id`` (not itself), in file order, in O(children)."""
        self._link_all()
        first = self._first_child.get(parent_id)
        if first is None:
            return []
        return [first, *self._more_children.get(parent_id, ())]

    def child_count(self, record: EntryRecord) -> int:
        """How many children ``record`` has in :meth:`tree` (an overridden duplicate id has none)."""
        self._link_all()
        entry_id = record.id
        if entry_id is None or self.by_id.get(entry_id) is not record or entry_id not in self._first_child:
            return 0
        return 1 + len(self._more_children.get(entry_id, ()))

    def root_records(self) -> list[EntryRecord]:
        """Records with a null, own or unknown parent, in file order (the roots of :meth:`tree`)."""
        self._link_all()
        return list(self._roots.values())

    def children_of(self, parent_id: str | None) -> list[EntryRecord]:
        """Records whose parentId is ``parent_id``, in file order (pi's ``getChildren``)."""
        return [record for record in self.records if record.parent_id == parent_id]

    def tree_children(self, record: EntryRecord) -> list[EntryRecord]:
        """The children of ``record`` in :meth:`tree`, in pi's order (timestamp, then file order)."""
        entry_id = record.id
        if entry_id is None or self.by_id.get(entry_id) is not record:
            return []
        children = self.child_records(entry_id)
        if len(children) > 1:
            children.sort(key=record_time_key)
        return children

    def segments(self) -> ChainSegments | None:
        """The linear chains of the tree (kept on append); None once a parent link points forwards."""
        self._link_all()
        return self._segments

    @gc_paused()
    def tree(self) -> list[TreeNode]:
        """pi's ``getTree``: roots in file order, children sorted stably by timestamp.

        Roots are entries with a null, own or unknown parent. Unlike pi, entries caught in a parent
        cycle are not lost: the first of each cycle in file order becomes a root.
        """
        self._link_all()
        segments = self._segments
        if segments is None:
            return self._tree_with_forward_links()
        # Chain by chain: a chain's nodes each hold the next; the last holds the heads of the chains
        # below it (only entries with several children end a chain before a leaf).
        nodes_of: dict[EntryRecord, list[TreeNode]] = {}
        for first, segment in segments.by_first.items():
            nodes = [TreeNode(record, []) for record in segment.records]
            following = iter(nodes)
            next(following)
            for _ in map(list.append, map(_CHILDREN, nodes), following):
                pass
            nodes_of[first] = nodes
        for first, segment in segments.by_first.items():
            children = self.tree_children(segment.last)
            if children:
                nodes_of[first][-1].children = [nodes_of[child][0] for child in children]
        for target, (label, timestamp) in self.labels.items():
            record = self.by_id.get(target)
            if record is not None:
                node = nodes_of[segments.segment_of(record).first][segments.depth(record)]
                node.label, node.label_timestamp = label, timestamp
        return [nodes_of[root][0] for root in self._roots.values()]

    def _tree_with_forward_links(self) -> list[TreeNode]:
        labels = self.labels
        nodes = [TreeNode(record, []) for record in self.records]
        node_by_id: dict[str, TreeNode] = {}
        for node in nodes:
            entry_id = node.record.id
            if entry_id is not None:
                node_by_id[entry_id] = node
                if labels:
                    label = labels.get(entry_id)
                    if label is not None:
                        node.label, node.label_timestamp = label
        roots: list[TreeNode] = []
        find = node_by_id.get
        for node in nodes:
            record = node.record
            parent_id = record.parent_id
            parent = find(parent_id) if parent_id is not None else None
            if parent is None or parent_id == record.id:
                roots.append(node)
            else:
                parent.children.append(node)
        self._rescue_cycles(nodes, roots, node_by_id)
        for node in nodes:
            if len(node.children) > 1:
                node.children.sort(key=timestamp_key)
        return roots

    @staticmethod
    def _rescue_cycles(nodes: list[TreeNode], roots: list[TreeNode], node_by_id: dict[str, TreeNode]) -> None:
        # Every non-root node hangs under exactly one parent, so a walk from the roots meets each
        # reachable node once: when it meets them all there is no cycle (the common case).
        count = 0
        stack = list(roots)
        while stack:
            count += 1
            stack.extend(stack.pop().children)
        if count == len(nodes):
            return
        reachable: set[int] = set()
        stack = list(roots)
        while stack:
            node = stack.pop()
            reachable.add(id(node))
            stack.extend(node.children)
        for node in nodes:
            if id(node) in reachable:
                continue
            # Unreachable nodes are never roots, so they hang under the node of their parent id.
            parent_id = node.record.parent_id
            parent = node_by_id.get(parent_id) if parent_id is not None else None
            if parent is not None:
                parent.children.remove(node)
            roots.append(node)
            stack = [node]
            while stack:
                current = stack.pop()
                reachable.add(id(current))
                stack.extend(current.children)


def record_time_key(record: EntryRecord) -> tuple[int, float]:
    """pi's order of siblings: by timestamp, entries without a readable one last (stable sort)."""
    millis = iso_to_ms(record.timestamp)
    return (0, float(millis)) if millis is not None else (1, 0.0)


def timestamp_key(node: TreeNode) -> tuple[int, float]:
    return record_time_key(node.record)
