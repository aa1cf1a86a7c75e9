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

from pi_lsp.session import SessionManager
from pi_lsp.session.index import TreeNode
from pi_lsp.session.jsonl import dumps_compact, loads_line
from pi_lsp.session.records import EntryRecord
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
    """One fragment holding a JSON array of already-encoded items."""
    data = b"[" + b",".join(items) + b"]"
    if not _valid_utf8(data):
        data = b"[" + b",".join(_clean(item) for item in items) + b"]"
    return orjson.Fragment(data)


def entry_fragment(record: EntryRecord) -> orjson.Fragment:
    return orjson.Fragment(_clean(record.raw))


def entries_fragment(records: Iterable[EntryRecord]) -> orjson.Fragment:
    return json_array([record.raw for record in records])


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
        "messages": json_array(view.message_json()),
        "thinkingLevel": view.thinking_level,
        "model": view.model,
    }


# ---------------------------------------------------------------------------------------- tree


def node_fields(node: TreeNode) -> dict[str, Any]:
    record = node.record
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
    if node.label is not None:
        fields["label"] = node.label
    return fields


def _walk(roots: Sequence[TreeNode]) -> Iterator[tuple[TreeNode | None, int]]:
    """Depth-first, children in pi's order: yields (node, depth) on entry and (None, depth) on exit."""
    stack: list[tuple[Iterator[TreeNode], int]] = [(iter(roots), 0)]
    while stack:
        children, depth = stack[-1]
        node = next(children, None)
        if node is None:
            stack.pop()
            if stack:
                yield None, depth - 1
            continue
        yield node, depth
        stack.append((iter(node.children), depth + 1))


def nested_tree(roots: Sequence[TreeNode]) -> orjson.Fragment:
    """``TreeNode[]`` with nested ``children``, written without recursion."""
    parts: list[bytes] = [b"["]
    need_comma = [False]
    for node, _depth in _walk(roots):
        if node is None:
            parts.append(b"]}")
            need_comma.pop()
            continue
        if need_comma[-1]:
            parts.append(b",")
        need_comma[-1] = True
        parts.append(dumps(node_fields(node))[:-1])
        parts.append(b',"children":[')
        need_comma.append(False)
    parts.append(b"]")
    return orjson.Fragment(b"".join(parts))


def flat_tree(roots: Sequence[TreeNode]) -> tuple[list[str | None], orjson.Fragment]:
    """Nodes in depth-first order with ``childIds`` instead of nested children (plus root ids)."""
    parts: list[bytes] = []
    for node, _depth in _walk(roots):
        if node is None:
            continue
        fields = node_fields(node)
        fields["childIds"] = [child.record.id for child in node.children]
        parts.append(dumps(fields))
    return [root.record.id for root in roots], json_array(parts)


def tree_result(
    manager_or_roots: SessionManager | Sequence[TreeNode], leaf_id: str | None, flat: bool
) -> dict[str, Any]:
    """``pi/getTree``: ``{leafId, roots}``, or ``{leafId, format, rootIds, nodes}`` when flat."""
    roots = manager_or_roots.get_tree() if isinstance(manager_or_roots, SessionManager) else manager_or_roots
    if flat:
        root_ids, nodes = flat_tree(roots)
        return {"leafId": leaf_id, "format": "flat", "rootIds": root_ids, "nodes": nodes}
    return {"leafId": leaf_id, "roots": nested_tree(roots)}
