"""Builders and comparison helpers shared by the session-store tests."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import orjson

from pi_lsp.session import SessionManager
from pi_lsp.session.index import TreeNode

Entry = dict[str, Any]

TS = "2025-01-01T00:00:00Z"


def now_ms() -> int:
    return int(time.time() * 1000)


def user_msg(text: str, timestamp: int | None = None) -> dict[str, Any]:
    """pi's test helper ``userMsg``."""
    return {"role": "user", "content": text, "timestamp": timestamp if timestamp is not None else now_ms()}


def assistant_msg(
    text: str, *, provider: str = "anthropic", model: str = "test", timestamp: int | None = None
) -> dict[str, Any]:
    """pi's test helper ``assistantMsg`` (one text block, usage 1/1/0/0 total 2, zero cost)."""
    return {
        "role": "assistant",
        "content": [{"type": "text", "text": text}],
        "api": "anthropic-messages",
        "provider": provider,
        "model": model,
        "usage": {
            "input": 1,
            "output": 1,
            "cacheRead": 0,
            "cacheWrite": 0,
            "totalTokens": 2,
            "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
        },
        "stopReason": "stop",
        "timestamp": timestamp if timestamp is not None else now_ms(),
    }


def header(session_id: str = "sess-1", *, version: int | None = 3, cwd: str = "/proj", **extra: Any) -> Entry:
    obj: Entry = {"type": "session"}
    if version is not None:
        obj["version"] = version
    obj.update(id=session_id, timestamp=TS, cwd=cwd, **extra)
    return obj


def msg_entry(
    entry_id: str,
    parent_id: str | None,
    role: str,
    text: str,
    *,
    timestamp: str = TS,
    model: str = "claude-test",
) -> Entry:
    """A ``message`` entry as pi's build-context tests make them."""
    if role == "assistant":
        message = assistant_msg(text, model=model, timestamp=1)
    else:
        message = user_msg(text, timestamp=1)
    return {
        "type": "message",
        "id": entry_id,
        "parentId": parent_id,
        "timestamp": timestamp,
        "message": message,
    }


def compaction_entry(
    entry_id: str, parent_id: str | None, summary: str, first_kept: str, tokens_before: int = 1000
) -> Entry:
    return {
        "type": "compaction",
        "id": entry_id,
        "parentId": parent_id,
        "timestamp": TS,
        "summary": summary,
        "firstKeptEntryId": first_kept,
        "tokensBefore": tokens_before,
    }


def branch_summary_entry(entry_id: str, parent_id: str | None, summary: str) -> Entry:
    return {
        "type": "branch_summary",
        "id": entry_id,
        "parentId": parent_id,
        "timestamp": TS,
        "fromId": parent_id or "root",
        "summary": summary,
    }


def thinking_entry(entry_id: str, parent_id: str | None, level: str) -> Entry:
    return {
        "type": "thinking_level_change",
        "id": entry_id,
        "parentId": parent_id,
        "timestamp": TS,
        "thinkingLevel": level,
    }


def model_entry(entry_id: str, parent_id: str | None, provider: str, model_id: str) -> Entry:
    return {
        "type": "model_change",
        "id": entry_id,
        "parentId": parent_id,
        "timestamp": TS,
        "provider": provider,
        "modelId": model_id,
    }


def write_jsonl(path: Path, objects: list[Entry]) -> Path:
    path.write_bytes(b"".join(orjson.dumps(obj) + b"\n" for obj in objects))
    return path


def read_objects(path: Path) -> list[Entry]:
    return [orjson.loads(line) for line in path.read_bytes().split(b"\n") if line.strip()]


def texts(messages: list[dict[str, Any]]) -> list[str]:
    """A readable rendering of context messages: the text (or summary) of each one."""
    out: list[str] = []
    for message in messages:
        if "summary" in message:
            out.append(f"[{message['role']}] {message['summary']}")
            continue
        content = message.get("content")
        if isinstance(content, str):
            out.append(content)
        elif isinstance(content, list):
            out.append(" ".join(b.get("text", "") for b in content if isinstance(b, dict)))
        else:
            out.append(f"[{message.get('role')}]")
    return out


def tree_shape(nodes: list[TreeNode]) -> list[Any]:
    """Nested ``(id, label, children)`` tuples of our tree (iterative, so deep trees are fine)."""
    out: list[Any] = []
    stack: list[tuple[TreeNode, list[Any]]] = [(node, out) for node in reversed(nodes)]
    while stack:
        node, sink = stack.pop()
        children: list[Any] = []
        sink.append((node.record.id, node.label, children))
        stack.extend((child, children) for child in reversed(node.children))
    return out


def flat_tree(nodes: list[TreeNode]) -> list[dict[str, Any]]:
    """Pre-order rows like the oracle's ``treeFormat: "flat"``.

    Each row: id, type, label?, parentId, depth, children.
    """
    rows: list[dict[str, Any]] = []
    stack: list[tuple[TreeNode, str | None, int]] = [(node, None, 0) for node in reversed(nodes)]
    while stack:
        node, parent, depth = stack.pop()
        row: dict[str, Any] = {"id": node.record.id, "type": node.record.type}
        if node.label is not None:
            row["label"] = node.label
        row.update(parentId=parent, depth=depth, children=[child.record.id for child in node.children])
        rows.append(row)
        stack.extend((child, node.record.id, depth + 1) for child in reversed(node.children))
    return rows


def entry_ids(manager: SessionManager) -> list[str | None]:
    return [entry.get("id") for entry in manager.get_entries()]


def file_lines(path: Path) -> list[bytes]:
    return [line for line in path.read_bytes().split(b"\n") if line]
