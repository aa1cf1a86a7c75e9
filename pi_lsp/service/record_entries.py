"""Stored entries seen as read-only mappings, parsed only when a field beyond the basics is read."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Final

from pi_lsp.compaction.tokens import assistant_usage
from pi_lsp.session.records import EntryRecord

_MISSING: Final = object()


class RecordEntry(Mapping[str, Any]):
    """A stored entry seen as a read-only dict, parsed only when a field beyond the basics is read.

    The compaction domain works on entry mappings; most of what it reads on most entries (type,
    id, parent, timestamp) is already on the :class:`EntryRecord`, so whole branches can be handed
    over without parsing every line.
    """

    __slots__ = ("_entry", "_message", "record")

    def __init__(self, record: EntryRecord) -> None:
        self.record = record
        self._entry: dict[str, Any] | None = None
        self._message: Any = _MISSING

    def _full(self) -> dict[str, Any]:
        if self._entry is None:
            self._entry = self.record.entry()
        return self._entry

    def get(self, key: str, default: Any = None) -> Any:
        record = self.record
        if key == "type" and record.type:
            return record.type
        if key == "id" and record.id is not None:
            return record.id
        if key == "parentId" and record.parent_id is not None:
            return record.parent_id
        if key == "timestamp" and isinstance(record.timestamp, str):
            return record.timestamp
        if key == "message" and record.type == "message":
            if self._message is _MISSING:
                message = record.message()
                self._message = message if message is not None else self._full().get("message", _MISSING)
            return default if self._message is _MISSING else self._message
        return self._full().get(key, default)

    def __getitem__(self, key: str) -> Any:
        value = self.get(key, _MISSING)
        if value is _MISSING:
            raise KeyError(key)
        return value

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and self.get(key, _MISSING) is not _MISSING

    def __iter__(self) -> Iterator[str]:
        return iter(self._full())

    def __len__(self) -> int:
        return len(self._full())


def usage_path(path: Sequence[EntryRecord], compaction_index: int) -> list[RecordEntry]:
    """The smallest sub-path for which ``context_usage_for_path`` gives the full path's answer.

    The answer only depends on the last compaction (the post-compaction rule) and on the context
    from the last valid assistant usage on: ``[last compaction] + path[last usage:]``. Without any
    usage after the compaction the answer is "unknown", decided by the compaction alone; without
    usage and without compaction every message counts and the whole path is needed.
    """
    usage_index: int | None = None
    for index in range(len(path) - 1, compaction_index, -1):
        record = path[index]
        if record.type == "message" and record.role == "assistant":
            message = record.message()
            if message is not None and assistant_usage(message) is not None:
                usage_index = index
                break
    if compaction_index < 0:
        chosen: Sequence[EntryRecord] = path if usage_index is None else path[usage_index:]
        return [RecordEntry(record) for record in chosen]
    start = usage_index if usage_index is not None else compaction_index + 1
    return [RecordEntry(path[compaction_index]), *(RecordEntry(record) for record in path[start:])]
