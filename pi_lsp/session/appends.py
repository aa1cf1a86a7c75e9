"""pi's typed append methods, each building the fields of one entry type in pi's key order.

Kept apart from :mod:`pi_lsp.session.store` so the store holds persistence and the tree, and this
holds the per-type vocabulary. The store supplies ``_append`` (ids, parent, timestamp, writing)
and ``_append_message`` (the same for messages, the most frequent),
``index`` and ``leaf_id``.
"""

from __future__ import annotations

from typing import Any

from pi_lsp.jscompat import UNSET, Unset
from pi_lsp.session import validate
from pi_lsp.session.errors import EntryNotFoundError
from pi_lsp.session.index import SessionIndex

Entry = dict[str, Any]


class AppendMethods:
    """``append_*`` and ``branch_with_summary`` over an abstract ``_append``."""

    index: SessionIndex
    leaf_id: str | None

    def _append(self, fields: Entry) -> str:
        raise NotImplementedError

    def _append_message(self, message: Entry) -> str:
        raise NotImplementedError

    def append_message(self, message: dict[str, Any]) -> str:
        validate.require_object(message, "message")
        return self._append_message(message)

    def append_thinking_level_change(self, thinking_level: str) -> str:
        return self._append({"type": "thinking_level_change", "thinkingLevel": thinking_level})

    def append_model_change(self, provider: str, model_id: str) -> str:
        return self._append({"type": "model_change", "provider": provider, "modelId": model_id})

    def append_compaction(
        self,
        summary: str,
        first_kept_entry_id: str,
        tokens_before: int,
        details: Any = UNSET,
        from_hook: bool | None = None,
    ) -> str:
        fields: Entry = {
            "type": "compaction",
            "summary": summary,
            "firstKeptEntryId": first_kept_entry_id,
            "tokensBefore": tokens_before,
        }
        if not isinstance(details, Unset):
            fields["details"] = details
        if from_hook is not None:
            fields["fromHook"] = from_hook
        return self._append(fields)

    def append_custom_entry(self, custom_type: str, data: Any = UNSET) -> str:
        fields: Entry = {"type": "custom", "customType": custom_type}
        if not isinstance(data, Unset):
            fields["data"] = data
        return self._append(fields)

    def append_session_info(self, name: str) -> str:
        return self._append({"type": "session_info", "name": name.strip()})

    def append_custom_message_entry(
        self, custom_type: str, content: Any, display: bool, details: Any = UNSET
    ) -> str:
        fields: Entry = {
            "type": "custom_message",
            "customType": custom_type,
            "content": content,
            "display": display,
        }
        if not isinstance(details, Unset):
            fields["details"] = details
        return self._append(fields)

    def append_label_change(self, target_id: str, label: str | None = None) -> str:
        if target_id not in self.index.by_id:
            raise EntryNotFoundError(target_id)
        fields: Entry = {"type": "label", "targetId": target_id}
        if label is not None:
            fields["label"] = label
        return self._append(fields)

    def branch_with_summary(
        self, from_id: str | None, summary: str, details: Any = UNSET, from_hook: bool | None = None
    ) -> str:
        """Move the leaf to ``from_id`` and append a ``branch_summary`` under it."""
        if from_id is not None and from_id not in self.index.by_id:
            raise EntryNotFoundError(from_id)
        self.leaf_id = from_id
        fields: Entry = {
            "type": "branch_summary",
            "fromId": from_id if from_id is not None else "root",
            "summary": summary,
        }
        if not isinstance(details, Unset):
            fields["details"] = details
        if from_hook is not None:
            fields["fromHook"] = from_hook
        return self._append(fields)
