"""Turn session messages into the flat transcript a summariser reads.

The summariser must not mistake the history for a conversation to continue, so it gets one user
message holding a plain-text transcript (``[User]: …``, ``[Assistant]: …`` …) inside
``<conversation>`` tags, structured the way pi builds it. Tool output is clipped to 2 000
characters (JS length) so that summarising a huge session cannot itself overflow the model.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from pi_lsp.jscompat import js_keys, js_len, js_stringify
from pi_lsp.llm.convert import bash_execution_text, convert_to_llm

__all__ = [
    "TOOL_RESULT_LIMIT",
    "bash_execution_text",
    "clip",
    "convert_to_llm",
    "serialize_conversation",
    "transcript",
]

Message = dict[str, Any]

TOOL_RESULT_LIMIT: Final = 2000


def clip(text: str, limit: int = TOOL_RESULT_LIMIT) -> str:
    """Keep the first ``limit`` JS characters and say how many were dropped."""
    length = js_len(text)
    if length <= limit:
        return text
    if text.isascii():
        head = text[:limit]
    else:
        units = text.encode("utf-16-le", "surrogatepass")[: limit * 2]
        head = units.decode("utf-16-le", "surrogatepass")
    return f"{head}\n\n[... {length - limit} more characters truncated]"


def _joined_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return "".join(
        str(block.get("text", ""))
        for block in content
        if isinstance(block, dict) and block.get("type") == "text"
    )


def _tool_call(block: Mapping[str, Any]) -> str:
    args = block.get("arguments")
    rendered = ""
    if isinstance(args, dict):
        rendered = ", ".join(f"{key}={js_stringify(args[key])}" for key in js_keys(args))
    return f"{block.get('name', '')}({rendered})"


def _assistant_parts(content: Any) -> list[str]:
    texts: list[str] = []
    thoughts: list[str] = []
    calls: list[str] = []
    for block in content if isinstance(content, list) else []:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text":
            texts.append(str(block.get("text", "")))
        elif kind == "thinking":
            thoughts.append(str(block.get("thinking", "")))
        elif kind == "toolCall":
            calls.append(_tool_call(block))
    parts: list[str] = []
    if thoughts:
        parts.append("[Assistant thinking]: " + "\n".join(thoughts))
    if texts:
        parts.append("[Assistant]: " + "\n".join(texts))
    if calls:
        parts.append("[Assistant tool calls]: " + "; ".join(calls))
    return parts


def serialize_conversation(messages: Sequence[Mapping[str, Any]]) -> str:
    """Render LLM messages (after :func:`convert_to_llm`) as a transcript, parts separated by a blank line.

    Order inside an assistant message is fixed: thinking, then text, then tool calls. Images,
    tool names and error flags of tool results are not shown; empty parts are skipped.
    """
    parts: list[str] = []
    for message in messages:
        role = message.get("role")
        if role == "user":
            text = _joined_text(message.get("content"))
            if text:
                parts.append(f"[User]: {text}")
        elif role == "assistant":
            parts.extend(_assistant_parts(message.get("content")))
        elif role == "toolResult":
            text = _joined_text(message.get("content"))
            if text:
                parts.append(f"[Tool result]: {clip(text)}")
    return "\n\n".join(parts)


def transcript(messages: Sequence[Mapping[str, Any]]) -> str:
    """:func:`convert_to_llm` then :func:`serialize_conversation`: what the summariser reads."""
    return serialize_conversation(convert_to_llm(messages))
