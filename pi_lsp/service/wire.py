"""Results as JSON without re-encoding what is already JSON.

Entries travel exactly as stored, so their raw lines are embedded as ``orjson.Fragment`` (the
output encoder copies the bytes). Context messages are sliced from the lines the same way. The
tree is written iteratively into bytes, because a linear session of 100k entries is 100k levels
deep: recursive encoders (and orjson's 1024-level limit) cannot build it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import orjson

from pi_lsp.gcpause import gc_paused
from pi_lsp.json_parts import JsonParts
from pi_lsp.session import SessionManager
from pi_lsp.session.index import SessionIndex, TreeNode, record_time_key
from pi_lsp.session.jsonl import dumps_compact, loads_line
from pi_lsp.session.records import EntryRecord, verify_records
from pi_lsp.session.view import ContextView


def dumps(value: Any) -> bytes:
    """Compact JSON for small values; falls back to the JS-compatible encoder for odd numbers."""
    try:
        return orjson.dumps(value)
    except TypeError:
        return dumps_compact(value)


def _valid_utf8(data: bytes) -> bool:
    if data.isascii():
        return True
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _clean(item: bytes) -> bytes:
    """Re-encode one stored line that is not valid UTF-8 (pi reads such bytes as U+FFFD)."""
    return item if _valid_utf8(item) else dumps_compact(loads_line(item))


def json_array(items: Sequence[bytes]) -> orjson.Fragment:
    """One fragment holding a JSON array of already-encoded items (copied once).

    Items that are not pure ASCII are checked to be valid UTF-8 (a line pi wrote with invalid bytes
    is re-encoded the way pi reads it), so the output is always valid JSON text.
    """
    if not items:
        return orjson.Fragment(b"[]")
    parts: list[bytes] = [b"["]
    append = parts.append
    for item in items:
        append(item if item.isascii() else _clean(item))
        append(b",")
    parts[-1] = b"]"
    return orjson.Fragment(b"".join(parts))


def entry_fragment(record: EntryRecord) -> orjson.Fragment:
    return orjson.Fragment(_clean(record.wire_json()))


def entries_fragment(records: Iterable[EntryRecord]) -> orjson.Fragment:
    """The entries as stored; lines indexed from their head are checked first, in one parse."""
    records = list(records)
    verify_records(records)
    return json_array([record.wire_json() for record in records])


def session_state(manager: SessionManager) -> dict[str, Any]:
    """The protocol's SessionState."""
    version = manager.header.get("version")
    state: dict[str, Any] = {
        "sessionId": manager.session_id,
        "file": manager.session_file if manager.persist else None,
        "cwd": manager.cwd,
        "name": manager.get_session_name(),
        "leafId": manager.leaf_id,
        "entryCount": manager.entry_count,
        "version": version if isinstance(version, int) and not isinstance(version, bool) else manager.version,
    }
    if manager.parent_session is not None:
        state["parentSession"] = manager.parent_session
    state["diagnostics"] = list(manager.diagnostics)
    return state


def context_result(view: ContextView) -> dict[str, Any]:
    """``pi/buildContext`` without ``usage`` (filled in by the compaction wiring)."""
    return {
        "messages": _context_messages(view),
        "thinkingLevel": view.thinking_level,
        "model": view.model,
    }


def _context_messages(view: ContextView) -> JsonParts | orjson.Fragment:
    array = view.message_array()
    return array if array is not None else json_array(view.message_json())


# ---------------------------------------------------------------------------------------- tree


def node_fields(node: TreeNode) -> dict[str, Any]:
    return record_fields(node.record, node.label)


def record_fields(record: EntryRecord, label: str | None) -> dict[str, Any]:
    """A node of the flat form without ``childIds``."""
    fields: dict[str, Any] = {
        "id": record.id,
        "parentId": record.parent_id,
        "type": record.type,
        "timestamp": record.timestamp,
    }
    if record.role is not None:
        fields["role"] = record.role
    if record.preview is not None:
        fields["preview"] = record.preview
    if record.no_text:
        fields["noText"] = True
    if label is not None:
        fields["label"] = label
    return fields


def label_of(index: SessionIndex, record: EntryRecord) -> str | None:
    label = index.labels.get(record.id) if record.id is not None else None
    return label[0] if label is not None else None


def _preorder(roots: Sequence[TreeNode]) -> Iterator[TreeNode]:
    """Depth-first, children in pi's order, without recursion."""
    stack = list(reversed(roots))
    while stack:
        node = stack.pop()
        yield node
        if node.children:
            stack.extend(reversed(node.children))


def nested_tree(roots: Sequence[TreeNode]) -> orjson.Fragment:
    """``TreeNode[]`` with nested ``children``, written without recursion."""
    parts: list[bytes] = [b"["]
    append = parts.append
    stack: list[Iterator[TreeNode]] = [iter(roots)]
    first = [True]
    while stack:
        node = next(stack[-1], None)
        if node is None:
            stack.pop()
            first.pop()
            append(b"]}" if stack else b"]")
            continue
        if first[-1]:
            first[-1] = False
        else:
            append(b",")
        append(dumps(node_fields(node))[:-1])
        if node.children:
            append(b',"children":[')
            stack.append(iter(node.children))
            first.append(True)
        else:
            append(b',"children":[]}')
    return orjson.Fragment(b"".join(parts))


def flat_tree(roots: Sequence[TreeNode]) -> tuple[list[str | None], orjson.Fragment]:
    """Nodes in depth-first order with ``childIds`` instead of nested children (plus root ids)."""
    nodes = []
    for node in _preorder(roots):
        fields = node_fields(node)
        fields["childIds"] = [child.record.id for child in node.children]
        nodes.append(fields)
    try:
        data = orjson.dumps(nodes)
    except TypeError:
        data = b"[" + b",".join(dumps(fields) for fields in nodes) + b"]"
    return [root.record.id for root in roots], orjson.Fragment(data)


def folded_tree(index: SessionIndex, leaf_id: str | None) -> dict[str, Any]:
    """The tree with each linear chain folded into one segment (depth-first, children in pi's order).

    A segment starts at a root or at a child of a node with several children and goes down while a
    node has exactly one child; it carries its ``length``, its ``first`` and ``last`` nodes, the
    labels inside it, and ``childIds``: the segments that start under its last node. Costs
    O(segments) from the chains the index keeps (O(n) when parent links point forwards).
    """
    segments = index.segments()
    if segments is None:
        return folded_nodes(index.tree(), leaf_id)
    labels: dict[EntryRecord, list[tuple[int, str, str | None]]] = {}
    for target, (label, _timestamp) in index.labels.items():
        record = index.by_id.get(target)
        if record is not None:
            first = segments.segment_of(record).first
            labels.setdefault(first, []).append((segments.depth(record), target, label))
    leaf = index.by_id.get(leaf_id) if leaf_id is not None else None
    leaf_segment = segments.segment_of(leaf).first.id if leaf is not None else None
    roots = index.root_records()
    folded: list[dict[str, Any]] = []
    stack = list(reversed(roots))
    while stack:
        segment = segments.segment_of(stack.pop())
        first, last = segment.first, segment.last
        children = index.tree_children(last)
        inside = sorted(labels.get(first, ()), key=lambda item: item[0])
        folded.append(
            {
                "id": first.id,
                "parentId": first.parent_id,
                "length": len(segment.records),
                "first": record_fields(first, label_of(index, first)),
                "last": record_fields(last, label_of(index, last)),
                "labels": [{"id": entry_id, "label": label} for _depth, entry_id, label in inside],
                "childIds": [child.id for child in children],
            }
        )
        stack.extend(reversed(children))
    return {
        "leafId": leaf_id,
        "format": "folded",
        "rootIds": [root.id for root in roots],
        "leafSegmentId": leaf_segment,
        "segments": orjson.Fragment(dumps(folded)),
    }


def folded_nodes(roots: Sequence[TreeNode], leaf_id: str | None) -> dict[str, Any]:
    """:func:`folded_tree` from a built tree (for trees whose parent links point forwards)."""
    segments: list[dict[str, Any]] = []
    leaf_segment: str | None = None
    stack = list(reversed(roots))
    while stack:
        start = node = stack.pop()
        length = 1
        labels: list[dict[str, Any]] = []
        while True:
            if node.label is not None:
                labels.append({"id": node.record.id, "label": node.label})
            if leaf_id is not None and node.record.id == leaf_id:
                leaf_segment = start.record.id
            if len(node.children) != 1:
                break
            node = node.children[0]
            length += 1
        segments.append(
            {
                "id": start.record.id,
                "parentId": start.record.parent_id,
                "length": length,
                "first": node_fields(start),
                "last": node_fields(node),
                "labels": labels,
                "childIds": [child.record.id for child in node.children],
            }
        )
        stack.extend(reversed(node.children))
    return {
        "leafId": leaf_id,
        "format": "folded",
        "rootIds": [root.record.id for root in roots],
        "leafSegmentId": leaf_segment,
        "segments": orjson.Fragment(dumps(segments)),
    }


def children_result(index: SessionIndex, leaf_id: str | None, parent_id: str | None) -> dict[str, Any]:
    """``pi/getTree`` with ``parentId``: one level of the tree, each node with its ``childCount``."""
    records = index.root_records() if parent_id is None else index.child_records(parent_id)
    if len(records) > 1 and parent_id is not None:
        records.sort(key=record_time_key)
    children = []
    for record in records:
        fields = record_fields(record, label_of(index, record))
        fields["childCount"] = index.child_count(record)
        children.append(fields)
    return {"leafId": leaf_id, "parentId": parent_id, "children": orjson.Fragment(dumps(children))}


@gc_paused()  # 100k nodes' fields and child lists all survive until the answer is written
def tree_result(
    manager_or_roots: SessionManager | Sequence[TreeNode], leaf_id: str | None, flat: bool
) -> dict[str, Any]:
    """``pi/getTree``: ``{leafId, roots}``, or ``{leafId, format, rootIds, nodes}`` when flat."""
    roots = manager_or_roots.get_tree() if isinstance(manager_or_roots, SessionManager) else manager_or_roots
    if flat:
        root_ids, nodes = flat_tree(roots)
        return {"leafId": leaf_id, "format": "flat", "rootIds": root_ids, "nodes": nodes}
    return {"leafId": leaf_id, "roots": nested_tree(roots)}
