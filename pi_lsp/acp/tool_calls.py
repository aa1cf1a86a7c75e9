"""pi's tool calls as ACP shows them: kind, title, locations, and results as tool call content.

Shared by the live stream (:mod:`.updates`) and the replay of a stored branch (:mod:`.replay`).
"""

from __future__ import annotations

import os
from typing import Any

KINDS = {
    "read": "read",
    "edit": "edit",
    "write": "edit",
    "bash": "execute",
    "grep": "search",
    "find": "search",
    "ls": "search",
}
MAX_SHOWN_TEXT = 64 * 1024
"""The most of a tool's text output shown in one update (the model got pi's own result)."""
MAX_DIFF_FILE_BYTES = 2 * 1024 * 1024
"""A bigger file is shown as the tool's text result instead of a diff."""


def kind(tool: str) -> str:
    return KINDS.get(tool, "other")


def _path_arg(args: dict[str, Any], cwd: str) -> str | None:
    path = args.get("path")
    if not isinstance(path, str) or not path:
        return None
    path = os.path.expanduser(path[1:] if path.startswith("@") else path)
    return os.path.normpath(os.path.join(cwd, path))


def title(tool: str, args: Any, cwd: str) -> str:
    """A one-line title: the command of a bash call, else the tool and its file or pattern."""
    args = args if isinstance(args, dict) else {}
    if tool == "bash" and isinstance(args.get("command"), str):
        return _one_line(args["command"])
    shown = args.get("pattern") if tool in ("grep", "find") else None
    path = args.get("path")
    target = shown if isinstance(shown, str) else path if isinstance(path, str) else None
    return f"{tool} {_one_line(target)}" if target else tool


def _one_line(text: str, limit: int = 200) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line if len(line) <= limit else line[: limit - 1] + "…"


def locations(tool: str, args: Any, cwd: str) -> list[dict[str, Any]]:
    if not isinstance(args, dict):
        return []
    path = _path_arg(args, cwd)
    if path is None:
        return []
    location: dict[str, Any] = {"path": path}
    offset = args.get("offset")
    if tool == "read" and isinstance(offset, int) and not isinstance(offset, bool) and offset > 0:
        location["line"] = offset
    return [location]


def tool_call(call_id: str, tool: str, args: Any, cwd: str, status: str = "pending") -> dict[str, Any]:
    """The ``tool_call`` update announcing a call."""
    return {
        "sessionUpdate": "tool_call",
        "toolCallId": call_id,
        "title": title(tool, args, cwd),
        "kind": kind(tool),
        "status": status,
        "rawInput": args if isinstance(args, dict) else {},
        "locations": locations(tool, args, cwd),
    }


def text_content(text: str) -> dict[str, Any]:
    return {"type": "content", "content": {"type": "text", "text": text}}


def result_text(result: Any) -> str:
    """The text blocks of a pi tool result (images are named, not embedded)."""
    content = result.get("content") if isinstance(result, dict) else result
    if isinstance(content, str):
        return content
    parts: list[str] = []
    for block in content if isinstance(content, list) else []:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text" and isinstance(block.get("text"), str):
            parts.append(block["text"])
        elif block.get("type") == "image":
            parts.append(f"[image {block.get('mimeType', '')}]")
    return "\n".join(parts)


def shown_text(text: str) -> str:
    """At most :data:`MAX_SHOWN_TEXT` characters: the end, where a command's outcome is."""
    if len(text) <= MAX_SHOWN_TEXT:
        return text
    return "…" + text[-MAX_SHOWN_TEXT:]


def diff_content(path: str, old_text: str | None, new_text: str) -> dict[str, Any]:
    return {"type": "diff", "path": path, "oldText": old_text, "newText": new_text}


def read_small_text(path: str) -> str | None:
    """A file's text for a diff, None if it is missing, too big or not text."""
    try:
        if os.path.getsize(path) > MAX_DIFF_FILE_BYTES:
            return None
        with open(path, "rb") as handle:
            return handle.read().decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def target_path(args: Any, cwd: str) -> str | None:
    """The file an edit/write call changes, absolute."""
    return _path_arg(args, cwd) if isinstance(args, dict) else None
