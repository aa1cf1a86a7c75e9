"""Context views: the current branch's LLM context without parsing every message up front.

A view lists, per context message, either the entry record it comes from (parsed on demand) or
a small synthetic message (summaries, custom messages). The store keeps the view of the current
leaf and extends it when an entry is appended under that leaf, so rebuilding the context after an
append costs O(1) work on top of copying the list, never a rebuild from scratch.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal, overload

import orjson

from pi_lsp.gcpause import gc_paused
from pi_lsp.json_parts import JsonParts
from pi_lsp.session.context import (
    ModelRef,
    SessionContext,
    compaction_summary_message,
    entry_to_message,
    select_context,
)
from pi_lsp.session.json_check import each_one_value, utf8_parts
from pi_lsp.session.jsonl import dumps_compact
from pi_lsp.session.records import EntryRecord, mark_checked, verify_records

ContextItem = EntryRecord | dict[str, Any]


def _emit(record: EntryRecord) -> ContextItem | None:
    """What one record contributes: itself for stored messages, a synthetic dict otherwise."""
    if record.type == "message":
        return record if record.role is not None or record.message() is not None else None
    if record.type in ("custom_message", "branch_summary"):
        return entry_to_message(record.entry())
    return None


@overload
def _item_json(item: ContextItem, *, view: Literal[False] = False) -> bytes | None: ...
@overload
def _item_json(item: ContextItem, *, view: bool) -> bytes | memoryview | None: ...
def _item_json(item: ContextItem, *, view: bool = False) -> bytes | memoryview | None:
    """One context message as JSON (a record's stored bytes where possible, with ``view`` as a view
    of them, not a copy); None: left out."""
    if isinstance(item, EntryRecord):
        data = item.message_view() if view else item.message_json()
        if data is None:
            message = item.message()
            if message is None:
                return None
            data = orjson.dumps(message)
        return data
    return dumps_compact(item)


@dataclass(frozen=True, slots=True)
class ContextView:
    """The context of one leaf: ``items`` in order, plus the settings scanned along the path."""

    leaf_id: str | None
    path: tuple[EntryRecord, ...]
    items: tuple[ContextItem, ...]
    thinking_level: Any
    model: ModelRef | None
    compaction_index: int

    def __len__(self) -> int:
        return len(self.items)

    def iter_messages(self) -> Iterator[dict[str, Any]]:
        """Messages as fresh dicts, parsed one at a time."""
        for item in self.items:
            if isinstance(item, EntryRecord):
                message = item.message()
                if message is not None:
                    yield message
            else:
                yield item

    def messages(self) -> list[dict[str, Any]]:
        return list(self.iter_messages())

    def message_json(self) -> list[bytes]:
        """Each message as JSON bytes, sliced from the stored line where possible (no re-encode).

        Lines indexed from their head are checked first, in one parse (``verify_records``); a
        message whose line turns out not to be JSON is left out, as a malformed line is."""
        verify_records(item for item in self.items if isinstance(item, EntryRecord))
        return [data for data in map(_item_json, self.items) if data is not None]

    @gc_paused()
    def message_array(self) -> JsonParts | None:
        """:meth:`message_json` as one JSON array, for the usual context, where every line is
        valid: the lines not checked yet are checked in one pass over the parts as they will be
        sent (``json_check``), not record by record. The array is the messages' bytes as views of
        the stored lines, with the brackets and commas between them: never joined here (a big
        context's answer is written from them). None when a check fails: then
        :meth:`message_json` finds what to leave out or re-encode."""
        parts: list[bytes | memoryview] = []
        append = parts.append
        unchecked: list[EntryRecord] = []
        for item in self.items:
            if isinstance(item, EntryRecord) and not item.checked:
                unchecked.append(item)
                append(item.message_json_unchecked())
                continue
            data = _item_json(item, view=True)
            if data is not None:
                append(data)
        if unchecked:
            if not each_one_value(parts):
                return None
            mark_checked(unchecked)
        elif not utf8_parts(parts):
            return None  # a line that is not UTF-8 is re-encoded the way pi reads it
        if not parts:
            return JsonParts([b"[]"])
        pieces: list[bytes | memoryview] = [b"["] * (2 * len(parts) + 1)
        pieces[1::2] = parts
        for index in range(2, len(pieces) - 1, 2):
            pieces[index] = b","
        pieces[-1] = b"]"
        return JsonParts(pieces)

    def to_context(self) -> SessionContext:
        return {"messages": self.messages(), "thinkingLevel": self.thinking_level, "model": self.model}


EMPTY_VIEW = ContextView(None, (), (), "off", None, -1)


def _scan(record: EntryRecord, thinking: Any, model: ModelRef | None) -> tuple[Any, ModelRef | None]:
    if record.type == "thinking_level_change":
        return record.thinking_level, model
    if record.type == "model_change":
        return thinking, {"provider": record.provider, "modelId": record.model}
    if record.role == "assistant":
        return thinking, {"provider": record.provider, "modelId": record.model}
    return thinking, model


def _last_settings(path: Sequence[EntryRecord]) -> tuple[Any, ModelRef | None]:
    """The thinking level and model in force at the end of ``path``: the last change of each,
    found from the end, so only the newest assistant message is read for its model."""
    thinking: Any = None
    model: ModelRef | None = None
    found_thinking = found_model = False
    for record in reversed(path):
        kind = record.type
        if kind == "thinking_level_change" and not found_thinking:
            thinking, found_thinking = record.thinking_level, True
        elif not found_model and (kind == "model_change" or record.role == "assistant"):
            model, found_model = {"provider": record.provider, "modelId": record.model}, True
        if found_thinking and found_model:
            break
    return (thinking if found_thinking else "off"), model


def build_view(path: Sequence[EntryRecord]) -> ContextView:
    """The view of a root→leaf path (pi's buildSessionContext steps 4–7)."""
    if not path:
        return EMPTY_VIEW
    thinking, model = _last_settings(path)
    compaction_index = -1
    for index, record in enumerate(path):
        if record.type == "compaction":
            compaction_index = index
    items = _items(path, compaction_index)
    return ContextView(path[-1].id, tuple(path), tuple(items), thinking, model, compaction_index)


def _items(path: Sequence[EntryRecord], compaction_index: int) -> list[ContextItem]:
    return select_context(
        path,
        compaction_index,
        emit=_emit,
        summary=lambda compaction: compaction_summary_message(compaction.entry()),
        is_first_kept=lambda record, compaction: record.id is not None and record.id == compaction.first_kept,
    )


def extend_view(view: ContextView, record: EntryRecord) -> ContextView:
    """The view after appending ``record`` as a child of ``view``'s leaf."""
    path = view.path + (record,)  # noqa: RUF005 (one copy; unpacking is 2× slower)
    if record.type == "compaction":
        return build_view(path)
    thinking, model = _scan(record, view.thinking_level, view.model)
    item = _emit(record)
    items = view.items + (item,) if item is not None else view.items  # noqa: RUF005
    return ContextView(record.id, path, items, thinking, model, view.compaction_index)


def extend_view_many(view: ContextView, records: Sequence[EntryRecord]) -> ContextView:
    """``extend_view`` for each of ``records`` in turn (a chain of appends), copying the tuples once."""
    if len(records) <= 1:
        return extend_view(view, records[0]) if records else view
    path = view.path + tuple(records)
    if any(record.type == "compaction" for record in records):
        return build_view(path)
    thinking, model = view.thinking_level, view.model
    added: list[ContextItem] = []
    for record in records:
        thinking, model = _scan(record, thinking, model)
        item = _emit(record)
        if item is not None:
            added.append(item)
    items = view.items + tuple(added) if added else view.items
    return ContextView(records[-1].id, path, items, thinking, model, view.compaction_index)
