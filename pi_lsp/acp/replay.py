"""A stored branch as the ``session/update``s that ``session/load`` replays.

User messages → ``user_message_chunk`` (text and images); assistant messages → thought and text
chunks and a ``tool_call`` per call; tool results → the call's ``tool_call_update`` (completed or
failed, the result as text); the user's ``!command``s → an ``execute`` tool call with its output;
compaction and branch summaries → agent text marked as such.
"""

from __future__ import annotations

from typing import Any

from pi_lsp.acp import tool_calls
from pi_lsp.acp.updates import chunk

Entry = dict[str, Any]


def replay_updates(entries: list[Entry], cwd: str) -> list[dict[str, Any]]:
    """The updates for ``entries`` (a branch, root first)."""
    updates: list[dict[str, Any]] = []
    names: dict[str, str] = {}  # tool call id → tool name
    for entry in entries:
        kind = entry.get("type")
        if kind == "message":
            _message(entry.get("message") or {}, cwd, updates, names)
        elif kind == "compaction":
            updates.append(
                chunk("agent_message_chunk", f"_(compaction summary)_\n\n{entry.get('summary', '')}\n\n")
            )
        elif kind == "branch_summary":
            updates.append(
                chunk("agent_message_chunk", f"_(branch summary)_\n\n{entry.get('summary', '')}\n\n")
            )
        elif kind == "custom_message" and entry.get("display"):
            text = _text(entry.get("content"))
            if text:
                updates.append(chunk("agent_message_chunk", text))
    return updates


def _message(message: dict[str, Any], cwd: str, updates: list[dict[str, Any]], names: dict[str, str]) -> None:
    role = message.get("role")
    content = message.get("content")
    if role == "user":
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content or []
        for block in blocks:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "text" and isinstance(block.get("text"), str):
                updates.append(chunk("user_message_chunk", block["text"]))
            elif block.get("type") == "image" and isinstance(block.get("data"), str):
                image = {"type": "image", "data": block["data"], "mimeType": str(block.get("mimeType", ""))}
                updates.append({"sessionUpdate": "user_message_chunk", "content": image})
    elif role == "assistant":
        for block in content if isinstance(content, list) else []:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "thinking" and block.get("thinking"):
                updates.append(chunk("agent_thought_chunk", str(block["thinking"])))
            elif block.get("type") == "text" and block.get("text"):
                updates.append(chunk("agent_message_chunk", str(block["text"])))
            elif block.get("type") == "toolCall":
                call_id, name = str(block.get("id")), str(block.get("name"))
                names[call_id] = name
                updates.append(tool_calls.tool_call(call_id, name, block.get("arguments"), cwd))
        if message.get("stopReason") == "error" and message.get("errorMessage"):
            updates.append(chunk("agent_message_chunk", f"\n\n_(error: {message['errorMessage']})_"))
    elif role == "toolResult":
        call_id = str(message.get("toolCallId"))
        text = tool_calls.shown_text(tool_calls.result_text(message))
        updates.append(
            {
                "sessionUpdate": "tool_call_update",
                "toolCallId": call_id,
                "status": "failed" if message.get("isError") else "completed",
                "content": [tool_calls.text_content(text)] if text else [],
            }
        )
    elif role == "bashExecution":
        call_id = f"bash-{message.get('timestamp')}"
        command = str(message.get("command", ""))
        update = tool_calls.tool_call(call_id, "bash", {"command": command}, cwd, status="completed")
        output = str(message.get("output") or "")
        update["content"] = [tool_calls.text_content(tool_calls.shown_text(output))] if output else []
        updates.append(update)
    elif role in ("custom",) and message.get("display"):
        text = _text(content)
        if text:
            updates.append(chunk("agent_message_chunk", text))


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return tool_calls.result_text({"content": content})
