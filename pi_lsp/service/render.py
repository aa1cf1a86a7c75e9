"""Human-readable session trees and contexts, shared by the CLI and the demo.

Trees are drawn the way pi's ``/tree`` selector lays them out: a chain of single children stays
in one column and only branch points indent, so a 100k-entry linear session is not 100k columns
wide. Rendering is iterative for the same reason.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, TypeVar

N = TypeVar("N")
PREVIEW = 100


def describe_node(fields: Mapping[str, Any], leaf_id: str | None) -> str:
    kind = fields.get("role") or fields.get("type") or "?"
    text = f"{fields.get('id')} {kind}"
    preview = fields.get("preview")
    if preview:
        text += f": {_short(str(preview))}"
    if fields.get("label"):
        text += f"  [{fields['label']}]"
    if leaf_id is not None and fields.get("id") == leaf_id:
        text += "  ← leaf"
    return text


def render_tree(
    roots: Sequence[N],
    fields: Callable[[N], Mapping[str, Any]],
    children: Callable[[N], Sequence[N]],
    leaf_id: str | None,
) -> list[str]:
    """Lines of an indented tree; a leaf of ``None`` (before the first entry) is noted on top."""
    lines: list[str] = []
    if leaf_id is None and roots:
        lines.append("(leaf: before the first entry)")
    stack: list[tuple[N, str, str]] = []
    _push_children(stack, list(roots), "")
    while stack:
        node, line_prefix, child_prefix = stack.pop()
        lines.append(line_prefix + describe_node(fields(node), leaf_id))
        kids = list(children(node))
        if len(kids) == 1:
            stack.append((kids[0], child_prefix, child_prefix))
        else:
            _push_children(stack, kids, child_prefix)
    return lines


def _push_children(stack: list[tuple[N, str, str]], kids: list[N], prefix: str) -> None:
    if len(kids) == 1:
        stack.append((kids[0], prefix, prefix))
        return
    for position in range(len(kids) - 1, -1, -1):
        last = position == len(kids) - 1
        stack.append(
            (kids[position], prefix + ("└─ " if last else "├─ "), prefix + ("   " if last else "│  "))
        )


def wire_tree_lines(result: Mapping[str, Any]) -> list[str]:
    """Lines for a ``pi/getTree`` result (nested form)."""
    return render_tree(
        result.get("roots") or [],
        lambda node: node,
        lambda node: node.get("children") or [],
        result.get("leafId"),
    )


def _short(text: str, limit: int = PREVIEW) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(
            str(block.get("text", ""))
            for block in content
            if isinstance(block, dict) and block.get("type") == "text"
        )
    return ""


def describe_message(message: Mapping[str, Any]) -> str:
    role = str(message.get("role", "?"))
    if role == "assistant":
        parts = [_short(_text(message.get("content")))] if _text(message.get("content")) else []
        for block in message.get("content") or []:
            if isinstance(block, dict) and block.get("type") == "toolCall":
                arguments = json.dumps(block.get("arguments"), ensure_ascii=False, separators=(",", ":"))
                parts.append(f"→ {block.get('name')}({_short(arguments, 60)})")
        return f"assistant: {' '.join(parts)}"
    if role == "toolResult":
        return f"toolResult {message.get('toolName')}: {_short(_text(message.get('content')))}"
    if role == "bashExecution":
        return f"bash: $ {_short(str(message.get('command', '')))}"
    if role in ("compactionSummary", "branchSummary"):
        return f"{role}: {_short(str(message.get('summary', '')))}"
    return f"{role}: {_short(_text(message.get('content')))}"


def context_lines(messages: Iterable[Mapping[str, Any]], thinking_level: Any, model: Any) -> list[str]:
    lines = []
    model_text = f"{model.get('provider')}/{model.get('modelId')}" if isinstance(model, Mapping) else "none"
    lines.append(f"thinking level: {thinking_level}   model: {model_text}")
    for number, message in enumerate(messages, 1):
        lines.append(f"{number:>4}. {describe_message(message)}")
    if len(lines) == 1:
        lines.append("   (empty context)")
    return lines
