"""The assistant message being streamed, as ``pi/getRunState`` gives it to a client that joins late.

Each delta's text is added to a list, joined only when a snapshot is asked for: adding it to a
growing string copied the whole text on every delta, so a long reply cost more per delta the
longer it got.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

Message = dict[str, Any]

_STARTS: dict[str, tuple[str, str]] = {
    "text_start": ("text", "text"),
    "thinking_start": ("thinking", "thinking"),
    "toolcall_start": ("toolCall", "partialJson"),
}
_DELTAS = {"text_delta": "text", "thinking_delta": "thinking", "toolcall_delta": "partialJson"}


class PartialReply:
    """A light copy of the streamed message: its fields, its blocks, and the pieces of text each
    block's deltas added (by content index and field)."""

    def __init__(self, message: Mapping[str, Any]) -> None:
        self.message: Message = dict(message)
        given = self.message.get("content")
        self.blocks: list[Any] = [_copy(block) for block in given] if isinstance(given, list) else []
        self.pieces: dict[tuple[int, str], list[str]] = {}

    def apply(self, event: Mapping[str, Any]) -> None:
        """Take one assistant-message event (``text_delta``, ``toolcall_end``, …) into the copy."""
        index = event.get("contentIndex")
        if not isinstance(index, int) or index < 0:
            return
        blocks = self.blocks
        while len(blocks) <= index:
            blocks.append({})
        kind = event["type"]
        field = _DELTAS.get(kind)
        if field is not None:
            pieces = self.pieces.get((index, field))
            if pieces is None:
                pieces = self.pieces[index, field] = []
            pieces.append(str(event.get("delta", "")))
            return
        start = _STARTS.get(kind)
        if start is not None:
            blocks[index] = {"type": start[0], start[1]: ""}
        elif kind == "toolcall_end" and isinstance(event.get("toolCall"), Mapping):
            blocks[index] = dict(event["toolCall"])
        else:
            return
        for field in _DELTAS.values():
            self.pieces.pop((index, field), None)

    def snapshot(self) -> Message:
        """The message so far, each block's text joined from its pieces."""
        content = [_copy(block) for block in self.blocks]
        for (index, field), pieces in self.pieces.items():
            block = content[index]
            if isinstance(block, dict):
                block[field] = str(block.get(field, "")) + "".join(pieces)
        message = dict(self.message)
        message["content"] = content
        return message


def _copy(block: Any) -> Any:
    return dict(block) if isinstance(block, Mapping) else block
