"""The in-memory tree over a session's records: id index, labels, name, paths and the tree."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from pi_lsp.jscompat import iso_to_ms
from pi_lsp.session.gcpause import gc_paused
from pi_lsp.session.records import EntryRecord


@dataclass(slots=True)
class TreeNode:
    """One node of :meth:`SessionIndex.tree` (pi's ``SessionTreeNode``)."""

    record: EntryRecord
    children: list[TreeNode] = field(default_factory=list)
    label: str | None = None
    label_timestamp: Any = None


class SessionIndex:
    """Records in file order plus the lookups pi keeps (later duplicate ids win, as in pi)."""

    def __init__(self) -> None:
        self.records: list[EntryRecord] = []
        self.by_id: dict[str, EntryRecord] = {}
        self.labels: dict[str, tuple[str, Any]] = {}
        self.name_record: EntryRecord | None = None
        self.assistant_count = 0
        # Children by parent id, in file order, for on-demand tree queries: most entries have one
        # child, so the first is kept alone and only further children get a list.
        self._first_child: dict[str, EntryRecord] = {}
        self._more_children: dict[str, list[EntryRecord]] = {}

    def add(self, record: EntryRecord) -> None:
        self.records.append(record)
        parent_id = record.parent_id
        if (
            parent_id is not None
            and parent_id != record.id
            and self._first_child.setdefault(parent_id, record) is not record
        ):
            self._more_children.setdefault(parent_id, []).append(record)
        if record.id is not None:
            self.by_id[record.id] = record
        if record.type == "label" and isinstance(record.target_id, str):
            if record.label:
                # Like a JS Map: updating a key keeps its position, deleting and re-adding moves it.
                self.labels[record.target_id] = (str(record.label), record.timestamp)
            else:
                self.labels.pop(record.target_id, None)
        elif record.type == "session_info":
            self.name_record = record
        elif record.role == "assistant":
            self.assistant_count += 1

    def extend(self, records: Iterable[EntryRecord]) -> None:
        for record in records:
            self.add(record)

    @property
    def session_name(self) -> str | None:
        """The newest pi's rule: trimmed name of the last ``session_info`` in file order, "" clears."""
        if self.name_record is None or not isinstance(self.name_record.name, str):
            return None
        return self.name_record.name.strip() or None

    def path_to(self, entry_id: str | None) -> list[EntryRecord]:
        """Records root→``entry_id``; [] for None/unknown. Stops at unknown parents and cycles."""
        if entry_id is None:
            return []
        record = self.by_id.get(entry_id)
        path: list[EntryRecord] = []
        seen: set[int] = set()
        while record is not None and id(record) not in seen:
            seen.add(id(record))
            path.append(record)
            parent = record.parent_id
            record = self.by_id.get(parent) if parent is not None else None
        path.reverse()
        return path

    def path_tail(self, entry_id: str | None, limit: int) -> tuple[list[EntryRecord], bool]:
        """The last ``limit`` records of :meth:`path_to` and whether older ones exist, in O(limit)."""
        tail: list[EntryRecord] = []
        record = self.by_id.get(entry_id) if entry_id is not None else None
        seen: set[int] = set()
        while record is not None and id(record) not in seen and len(tail) < limit:
            seen.add(id(record))
            tail.append(record)
            parent = record.parent_id
            record = self.by_id.get(parent) if parent is not None else None
        tail.reverse()
        return tail, record is not None and id(record) not in seen

    def child_records(self, parent_id: str) -> list[EntryRecord]:
        """Records whose parentId is ``parent_id`` (not itself), in file order, in O(children)."""
        first = self._first_child.get(parent_id)
        if first is None:
            return []
        return [first, *self._more_children.get(parent_id, ())]

    def child_count(self, record: EntryRecord) -> int:
        """How many children ``record`` has in :meth:`tree` (an overridden duplicate id has none)."""
        entry_id = record.id
        if entry_id is None or self.by_id.get(entry_id) is not record or entry_id not in self._first_child:
            return 0
        return 1 + len(self._more_children.get(entry_id, ()))

    def root_records(self) -> list[EntryRecord]:
        """Records with a null, own or unknown parent, in file order (the roots of :meth:`tree`)."""
        by_id = self.by_id
        return [
            record
            for record in self.records
            if record.parent_id is None or record.parent_id == record.id or record.parent_id not in by_id
        ]

    def children_of(self, parent_id: str | None) -> list[EntryRecord]:
        """Records whose parentId is ``parent_id``, in file order (pi's ``getChildren``)."""
        return [record for record in self.records if record.parent_id == parent_id]

    @gc_paused()
    def tree(self) -> list[TreeNode]:
        """pi's ``getTree``: roots in file order, children sorted stably by timestamp.

        Roots are entries with a null, own or unknown parent. Unlike pi, entries caught in a parent
        cycle are not lost: the first of each cycle in file order becomes a root.
        """
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


def timestamp_key(node: TreeNode) -> tuple[int, float]:
    millis = iso_to_ms(node.record.timestamp)
    return (0, float(millis)) if millis is not None else (1, 0.0)
