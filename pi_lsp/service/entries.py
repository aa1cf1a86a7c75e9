"""Operations on one open session's entries and tree, as plain synchronous functions.

Each takes the session's :class:`SessionManager`, returns the protocol result and, when the
session changed, a :class:`Change` for ``pi/sessionChanged``. The service runs them in a worker
thread under the session's lock, so they may do file I/O and take their time.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from pi_lsp.jscompat import UNSET, Unset
from pi_lsp.service import navigate as nav
from pi_lsp.service import wire
from pi_lsp.service.errors import EntryNotFound, InvalidParams
from pi_lsp.session import SessionManager

Reason = Literal["append", "navigate", "compaction", "external", "migrate"]
MAX_PAGE = 10_000
DEFAULT_PAGE = 1_000


@dataclass(slots=True)
class Change:
    """What ``pi/sessionChanged`` reports."""

    reason: Reason
    appended_ids: list[str] = field(default_factory=list)


Outcome = tuple[Any, Change | None]


def _record(manager: SessionManager, entry_id: str) -> Any:
    record = manager.get_record(entry_id)
    if record is None:
        raise EntryNotFound(f"entry {entry_id} is not in the session", {"id": entry_id})
    return record


def append_entry(manager: SessionManager, entry: dict[str, Any]) -> Outcome:
    entry_id = manager.append_entry(entry)
    record = _record(manager, entry_id)
    return {"id": entry_id, "entry": wire.entry_fragment(record)}, Change("append", [entry_id])


def get_entry(manager: SessionManager, entry_id: str) -> Outcome:
    return {"entry": wire.entry_fragment(_record(manager, entry_id))}, None


def get_entries(manager: SessionManager, offset: int, limit: int) -> Outcome:
    records = manager.index.records
    page = records[offset : offset + min(limit, MAX_PAGE)]
    return {"entries": wire.entries_fragment(page), "total": len(records)}, None


def get_branch(
    manager: SessionManager,
    from_id: str | Unset | None,
    limit: int | None = None,
    before_id: str | None = None,
) -> Outcome:
    """The branch root first; with ``limit``/``beforeId`` one page of it ending before ``beforeId``."""
    if isinstance(from_id, str):
        _record(manager, from_id)
    if limit is None and before_id is None:
        return {"entries": wire.entries_fragment(manager.branch_records(from_id))}, None
    if before_id is not None:
        parent_id = _record(manager, before_id).parent_id
        end = None if parent_id == before_id else parent_id
    else:
        end = manager.leaf_id if isinstance(from_id, Unset) else from_id
    records, has_more = manager.index.path_tail(end, MAX_PAGE if limit is None else min(limit, MAX_PAGE))
    return {"entries": wire.entries_fragment(records), "hasMore": has_more}, None


def get_tree(
    manager: SessionManager, flat: bool, parent_id: str | Unset | None = UNSET, fold: bool = False
) -> Outcome:
    """The whole tree (folded into linear segments with ``fold``), or with ``parentId`` one level."""
    if isinstance(parent_id, Unset):
        if fold:
            return wire.folded_tree(manager.index, manager.leaf_id), None
        return wire.tree_result(manager, manager.leaf_id, flat), None
    if parent_id is not None:
        _record(manager, parent_id)
    return wire.children_result(manager.index, manager.leaf_id, parent_id), None


def set_leaf(manager: SessionManager, entry_id: str | None) -> Outcome:
    if entry_id is not None:
        _record(manager, entry_id)
    before = manager.leaf_id
    manager.set_leaf(entry_id)
    change = Change("navigate") if manager.leaf_id != before else None
    return {"leafId": manager.leaf_id}, change


def navigate(manager: SessionManager, target_id: str, label: str | None) -> Outcome:
    """``pi/navigate`` without a summary (``service/branch_summary.py`` writes those)."""
    plan = nav.plan_navigation(manager, target_id)
    result = nav.navigate(manager, plan, label)
    change = None if plan.noop else Change("navigate", result.appended_ids)
    return result.to_wire(), change


def set_label(manager: SessionManager, target_id: str, label: str | None) -> Outcome:
    _record(manager, target_id)
    label_id = manager.append_label_change(target_id, label)
    return {"id": label_id}, Change("append", [label_id])


def set_session_name(manager: SessionManager, name: str) -> Outcome:
    entry_id = manager.append_session_info(name)
    return {"id": entry_id}, Change("append", [entry_id])


def build_context(manager: SessionManager, leaf_id: str | Unset | None) -> Outcome:
    if isinstance(leaf_id, str):
        _record(manager, leaf_id)
    view = manager.context_view(leaf_id)
    return wire.context_result(view), None


def page_bounds(offset: int | None, limit: int | None) -> tuple[int, int]:
    """Validated ``offset``/``limit`` for ``pi/getEntries`` (limit clamped to the maximum)."""
    offset = 0 if offset is None else offset
    limit = DEFAULT_PAGE if limit is None else limit
    if offset < 0:
        raise InvalidParams("offset must be a non-negative integer")
    if limit < 0:
        raise InvalidParams("limit must be a non-negative integer")
    return offset, min(limit, MAX_PAGE)


__all__ = ["UNSET", "Change", "Outcome"]
