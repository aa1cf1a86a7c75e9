"""Which stored entry each message of a run's context is, so that its conversion for a request is kept.

A run's context is a list of message dicts: the branch's messages when the run started (parsed
from the session's records) and those the run added (each appended as an entry). Every request
of the run converts that whole list into the Messages API's form; a stored entry never changes, so
its conversion is done once and kept in the server's :class:`ConversionCache` under its record.
The key is the record object itself (``EntryRecord``: identity, never equality): a session read
again from disk has new records, so nothing converted from an older reading is ever found for it,
and a message that is not a stored entry (a summary, a custom message, anything not appended)
has no key and is converted afresh each time.

One per run, used under the session's lock like the manager (``load`` and ``append``) and on the
event loop (``keys``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pi_lsp.session.records import EntryRecord
from pi_lsp.session.store import SessionManager

Message = dict[str, Any]


class EntryKeys:
    """Message dicts of one run's context → the record each was read from or appended as."""

    def __init__(self) -> None:
        self._records: dict[int, tuple[Message, EntryRecord]] = {}  # the message is held: ids stay unique

    def load(self, manager: SessionManager) -> list[Message]:
        """``manager.context_view().messages()``, each stored message noted with its record."""
        messages: list[Message] = []
        for item in manager.context_view().items:
            if isinstance(item, EntryRecord):
                message = item.message()
                if message is None:
                    continue
                self._records[id(message)] = (message, item)
            else:
                message = item
            messages.append(message)
        return messages

    def append(self, manager: SessionManager, message: Message) -> str:
        """``manager.append_message(message)``, noting the record it became."""
        entry_id = manager.append_message(message)
        record = manager.get_record(entry_id)
        if record is not None:
            self._records[id(message)] = (message, record)
        return entry_id

    def keys(self, messages: Sequence[Message]) -> list[EntryRecord | None]:
        """The record of each message, None for those that are not stored entries."""
        keys: list[EntryRecord | None] = []
        for message in messages:
            found = self._records.get(id(message))
            keys.append(found[1] if found is not None and found[0] is message else None)
        return keys
