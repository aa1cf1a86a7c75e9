"""Which files the summarised part of a conversation read or changed, as pi tracks them.

The file lists survive compaction in two places: appended to the summary text as
``<read-files>``/``<modified-files>`` blocks (the model sees them) and stored in the compaction
entry's ``details`` (the next compaction starts from them). Only pi's built-in ``read``, ``write``
and ``edit`` tools with a string ``path`` argument are tracked; paths are kept verbatim.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypedDict


@dataclass
class FileOps:
    """Paths seen per operation. Insertion-ordered sets (dict keys), like JS ``Set``."""

    read: dict[str, None] = field(default_factory=dict)
    written: dict[str, None] = field(default_factory=dict)
    edited: dict[str, None] = field(default_factory=dict)

    def as_pi(self) -> dict[str, list[str]]:
        """The oracle's JSON form (sets as arrays in insertion order)."""
        return {"read": list(self.read), "written": list(self.written), "edited": list(self.edited)}


class FileLists(TypedDict):
    readFiles: list[str]
    modifiedFiles: list[str]


_TOOL_BUCKET = {"read": "read", "write": "written", "edit": "edited"}


def extract_file_ops_from_message(message: Mapping[str, Any], ops: FileOps) -> None:
    """Add the read/write/edit tool calls of an assistant message to ``ops``."""
    if message.get("role") != "assistant":
        return
    content = message.get("content")
    if not isinstance(content, list):
        return
    for block in content:
        if not isinstance(block, dict) or block.get("type") != "toolCall" or "name" not in block:
            continue
        args = block.get("arguments")
        if not isinstance(args, dict):
            continue
        path = args.get("path")
        if not isinstance(path, str) or not path:
            continue
        bucket = _TOOL_BUCKET.get(block["name"]) if isinstance(block["name"], str) else None
        if bucket is not None:
            getattr(ops, bucket)[path] = None


def seed_from_details(ops: FileOps, entry: Mapping[str, Any]) -> None:
    """Carry over the lists of a pi-made compaction/branch summary (``fromHook`` false).

    Extension-made entries (``fromHook`` true) may store anything in ``details``, so they are
    ignored. Earlier modified files land in ``edited`` (pi cannot tell writes from edits any more).
    """
    if entry.get("fromHook"):
        return
    details = entry.get("details")
    if not isinstance(details, dict):
        return
    read_files = details.get("readFiles")
    if isinstance(read_files, list):
        for path in read_files:
            ops.read[path] = None
    modified_files = details.get("modifiedFiles")
    if isinstance(modified_files, list):
        for path in modified_files:
            ops.edited[path] = None


def extract_file_ops(messages: Iterable[Mapping[str, Any]], ops: FileOps | None = None) -> FileOps:
    """File operations of many messages, added to ``ops`` (or a fresh set)."""
    ops = ops if ops is not None else FileOps()
    for message in messages:
        extract_file_ops_from_message(message, ops)
    return ops


def _utf16_key(path: Any) -> bytes:
    # JS Array.prototype.sort() without a comparator compares strings by UTF-16 code units;
    # big-endian UTF-16 bytes compare in exactly that order.
    return str(path).encode("utf-16-be", "surrogatepass")


def compute_file_lists(ops: FileOps) -> FileLists:
    """pi's ``computeFileLists``: modified = edited ∪ written; read-only = read − modified; sorted."""
    modified = dict.fromkeys([*ops.edited, *ops.written])
    read_only = [p for p in ops.read if p not in modified]
    return {
        "readFiles": sorted(read_only, key=_utf16_key),
        "modifiedFiles": sorted(modified, key=_utf16_key),
    }


def format_file_operations(read_files: list[str], modified_files: list[str]) -> str:
    """The suffix appended to a summary: ``""`` or a blank line plus the tag blocks, read first."""
    sections: list[str] = []
    if read_files:
        sections.append("<read-files>\n" + "\n".join(read_files) + "\n</read-files>")
    if modified_files:
        sections.append("<modified-files>\n" + "\n".join(modified_files) + "\n</modified-files>")
    return "\n\n" + "\n\n".join(sections) if sections else ""


__all__ = [
    "FileLists",
    "FileOps",
    "compute_file_lists",
    "extract_file_ops",
    "extract_file_ops_from_message",
    "format_file_operations",
    "seed_from_details",
]
