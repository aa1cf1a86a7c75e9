"""Property tests: the tree indexes kept on append agree with a naive computation from scratch.

The index keeps the roots, the children of each entry and the linear chains ("segments") up to
date as entries are appended; ``get_tree``, ``pi/getTree`` with ``parentId`` and with ``fold`` are
answered from them. Here random sessions are grown by appends, branches, navigation, labels,
compactions and new roots (through ``SessionManager``), or from raw records with duplicate ids,
parents that come later, unknown parents, self-parents and cycles (through ``SessionIndex``), and
after every step each answer is compared with one computed naively from the records alone.
"""

from __future__ import annotations

from typing import Any

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from pi_lsp.jscompat import iso_to_ms
from pi_lsp.service import wire
from pi_lsp.session import SessionManager
from pi_lsp.session.index import SessionIndex, TreeNode
from pi_lsp.session.jsonl import dumps_compact
from pi_lsp.session.records import EntryRecord

# ------------------------------------------------------------------ naive answers


def _time(record: EntryRecord) -> tuple[int, float]:
    millis = iso_to_ms(record.timestamp)
    return (0, float(millis)) if millis is not None else (1, 0.0)


def naive_tree(records: list[EntryRecord], labels: dict[str, str]) -> list[Any]:
    """pi's tree by its definition, as nested ``(id, label, children)`` tuples.

    The last record of an id owns that id's children; roots have a null, own or unknown parent;
    of the records no root reaches (parent cycles), the first in file order becomes a root, again
    and again. Children are in file order, then sorted stably by timestamp.
    """
    owner = {record.id: record for record in records if record.id is not None}
    kids: dict[int, list[EntryRecord]] = {id(record): [] for record in records}
    roots: list[EntryRecord] = []
    for record in records:
        parent = owner.get(record.parent_id) if record.parent_id is not None else None
        if parent is None or record.parent_id == record.id:
            roots.append(record)
        else:
            kids[id(parent)].append(record)

    def reach(start: EntryRecord, seen: set[int]) -> None:
        seen.add(id(start))
        for child in kids[id(start)]:
            reach(child, seen)

    seen: set[int] = set()
    for root in roots:
        reach(root, seen)
    for record in records:
        if id(record) not in seen:
            parent = owner[record.parent_id]  # type: ignore[index]
            kids[id(parent)].remove(record)
            roots.append(record)
            reach(record, seen)

    def build(record: EntryRecord) -> Any:
        children = sorted(kids[id(record)], key=_time)
        label = labels.get(record.id) if record.id is not None else None
        return (record.id, label, [build(child) for child in children])

    return [build(root) for root in roots]


def as_tuples(nodes: list[TreeNode]) -> list[Any]:
    out: list[Any] = []
    stack: list[tuple[list[Any], list[TreeNode]]] = [(out, nodes)]
    while stack:
        target, level = stack.pop()
        for node in level:
            children: list[Any] = []
            target.append((node.record.id, node.label, children))
            stack.append((children, node.children))
    return out


def naive_folds(tree: list[Any], leaf_id: str | None) -> tuple[list[dict[str, Any]], str | None]:
    """Segments of the naive tree: (id, length, first/last ids, labels, childIds), depth-first."""
    segments: list[dict[str, Any]] = []
    leaf_segment = None
    stack = list(reversed(tree))
    while stack:
        start = node = stack.pop()
        length, labels = 1, []
        while True:
            if node[1] is not None:
                labels.append({"id": node[0], "label": node[1]})
            if leaf_id is not None and node[0] == leaf_id:
                leaf_segment = start[0]
            if len(node[2]) != 1:
                break
            node = node[2][0]
            length += 1
        segments.append(
            {
                "id": start[0],
                "length": length,
                "first": start[0],
                "last": node[0],
                "labels": labels,
                "childIds": [child[0] for child in node[2]],
            }
        )
        stack.extend(reversed(node[2]))
    return segments, leaf_segment


def find(tree: list[Any], entry_id: str) -> Any:
    stack = list(tree)
    while stack:
        node = stack.pop()
        if node[0] == entry_id:
            return node
        stack.extend(node[2])
    return None


def naive_path(records: list[EntryRecord], entry_id: str | None) -> list[EntryRecord]:
    """Root→``entry_id`` through the last record of each id, stopping before a repeated record."""
    owner = {record.id: record for record in records if record.id is not None}
    path: list[EntryRecord] = []
    record = owner.get(entry_id) if entry_id is not None else None
    while record is not None and all(record is not kept for kept in path):
        path.append(record)
        record = owner.get(record.parent_id) if record.parent_id is not None else None
    return path[::-1]


def label_map(index: SessionIndex) -> dict[str, str]:
    return {target: label for target, (label, _timestamp) in index.labels.items()}


def check_index(index: SessionIndex, leaf_id: str | None) -> None:
    """Every tree answer of ``index`` against the naive one."""
    records = index.records
    assert index.path_to(leaf_id) == naive_path(records, leaf_id)
    expected = naive_tree(records, label_map(index))
    assert as_tuples(index.tree()) == expected
    known = {record.id for record in records}
    linked_roots = [
        record
        for record in records
        if record.parent_id is None or record.parent_id == record.id or record.parent_id not in known
    ]
    assert index.root_records() == linked_roots  # one level: links as written, cycles not lifted
    owner = {record.id: record for record in records if record.id is not None}
    for record in records:
        linked = [child for child in records if child.parent_id == record.id and child.id != record.id]
        if record.id is None or owner[record.id] is not record:
            linked = []
        assert index.child_count(record) == len(linked)
        assert index.tree_children(record) == sorted(linked, key=_time)
    segments, leaf_segment = naive_folds(expected, leaf_id if leaf_id in known else None)
    folded = wire.folded_tree(index, leaf_id)
    got = [
        {
            "id": segment["id"],
            "length": segment["length"],
            "first": segment["first"]["id"],
            "last": segment["last"]["id"],
            "labels": segment["labels"],
            "childIds": segment["childIds"],
        }
        for segment in orjson.loads(orjson.dumps(folded["segments"]))
    ]
    assert got == segments
    assert folded["leafSegmentId"] == leaf_segment
    assert folded["rootIds"] == [node[0] for node in expected]


# ------------------------------------------------------------------ sessions grown by a manager

OPS = st.lists(
    st.tuples(
        st.sampled_from(
            ["append", "append", "append", "branch", "label", "unlabel", "compact", "root", "navigate"]
        ),
        st.integers(min_value=0, max_value=10_000),
    ),
    min_size=1,
    max_size=60,
)


@settings(max_examples=150, deadline=None)
@given(OPS)
def test_indexes_follow_appends_branches_labels_and_compactions(ops: list[tuple[str, int]]) -> None:
    manager = SessionManager.in_memory("/tmp")
    for step, (op, pick) in enumerate(ops):
        ids = [record.id for record in manager.index.records if record.id is not None]
        target = ids[pick % len(ids)] if ids else None
        if op == "append" or target is None:
            manager.append_message({"role": "user", "content": f"m{step}", "timestamp": step})
        elif op == "branch":
            manager.branch(target)
            manager.append_message({"role": "assistant", "content": [], "timestamp": step})
        elif op == "label":
            manager.append_label_change(target, f"L{step}")
        elif op == "unlabel":
            manager.append_label_change(target, None)
        elif op == "compact":
            manager.append_compaction("summary", target, 100)
        elif op == "root":
            manager.reset_leaf()
            manager.append_message({"role": "user", "content": f"r{step}", "timestamp": step})
        else:
            manager.branch(target)  # navigating alone moves the leaf into the middle of a chain
        if step % 3 == 0 or step == len(ops) - 1:
            assert not manager.index.forward_links
            check_index(manager.index, manager.leaf_id)


# ------------------------------------------------------------------ raw records, damaged links

IDS = ["a", "b", "c", "d", "e", "f", "g"]
RAW = st.lists(
    st.tuples(
        st.sampled_from([*IDS, None]),
        st.sampled_from([*IDS, None, "missing"]),
        st.sampled_from(["2026-01-01T00:00:01Z", "2026-01-01T00:00:02Z", "2026-01-01T00:00:00Z", "bad"]),
        st.sampled_from([None, "a", "b", "c"]),
    ),
    min_size=1,
    max_size=25,
)


def _record(
    entry_id: str | None, parent_id: str | None, timestamp: str, label_target: str | None
) -> EntryRecord:
    entry: dict[str, Any] = {"type": "message", "id": entry_id, "parentId": parent_id, "timestamp": timestamp}
    if label_target is not None:
        entry = {
            "type": "label",
            "id": entry_id,
            "parentId": parent_id,
            "timestamp": timestamp,
            "targetId": label_target,
            "label": f"on-{label_target}",
        }
    else:
        entry["message"] = {"role": "user", "content": "x"}
    return EntryRecord(entry, dumps_compact(entry), 0)


@settings(max_examples=300, deadline=None)
@given(RAW, st.sampled_from([*IDS, None]))
def test_indexes_with_duplicates_orphans_and_cycles(raw: list[Any], leaf_id: str | None) -> None:
    index = SessionIndex()
    for item in raw:
        index.add(_record(*item))
        check_index(index, leaf_id)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=1_000), min_size=1, max_size=40))
def test_unique_backward_links_keep_the_segments(parents: list[int]) -> None:
    """Well-formed trees (each parent read before its children) never fall back to the slow path."""
    index = SessionIndex()
    for number, pick in enumerate(parents):
        parent = f"n{pick % number}" if number and pick % 4 else None
        index.add(_record(f"n{number}", parent, f"2026-01-01T00:00:{pick % 60:02d}Z", None))
        assert index.segments() is not None
        check_index(index, f"n{pick % (number + 1)}")


@settings(max_examples=300, deadline=None)
@given(RAW, st.integers(min_value=0, max_value=25), st.sampled_from([*IDS, None]))
def test_a_file_read_whole_links_its_tree_on_first_use(
    raw: list[Any], split: int, leaf_id: str | None
) -> None:
    """An open takes the file's records at once (``extend`` on an empty index) and links the tree
    only when a tree answer is asked for: the answers, and those after further appends, are the
    same as when every record is added one by one."""
    records = [_record(*item) for item in raw]
    index = SessionIndex()
    index.extend(records[:split])
    assert index.by_id == {record.id: record for record in records[:split] if record.id is not None}
    assert index.path_to(leaf_id) == SessionIndex.path_to(_added(records[:split]), leaf_id)
    check_index(index, leaf_id)
    for record in records[split:]:
        index.add(record)
        check_index(index, leaf_id)


def _added(records: list[EntryRecord]) -> SessionIndex:
    index = SessionIndex()
    for record in records:
        index.add(record)
    return index
