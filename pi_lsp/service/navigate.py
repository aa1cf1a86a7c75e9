"""pi's ``navigateTree`` without the LLM: where the leaf goes, what returns to the editor, and
which entries a branch summary would cover.

Rules (pi 0.73.1, unchanged since 0.58.3): navigating to the current leaf does nothing; a user
message (or ``custom_message``) target moves the leaf to its parent and hands its text back to the
editor, so the user can edit and resend it; any other target becomes the leaf. A label is then put
on the target (the label entry becomes the leaf, as every label does in pi). The summary, when
asked for, is a ``branch_summary`` child of the new leaf covering the abandoned entries from the
old leaf up to the deepest common ancestor.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pi_lsp.session import SessionManager
from pi_lsp.session.errors import EntryNotFoundError
from pi_lsp.session.records import EntryRecord


@dataclass(slots=True)
class NavigationPlan:
    """What navigating to ``target_id`` would do, computed without changing anything."""

    target_id: str
    old_leaf_id: str | None
    new_leaf_id: str | None
    editor_text: str | None
    noop: bool
    entries_to_summarize: list[EntryRecord] = field(default_factory=list)
    common_ancestor_id: str | None = None


@dataclass(slots=True)
class NavigationResult:
    leaf_id: str | None
    editor_text: str | None = None
    summary_entry_id: str | None = None
    appended_ids: list[str] = field(default_factory=list)

    def to_wire(self) -> dict[str, Any]:
        data: dict[str, Any] = {"leafId": self.leaf_id}
        if self.editor_text is not None:
            data["editorText"] = self.editor_text
        if self.summary_entry_id is not None:
            data["summaryEntryId"] = self.summary_entry_id
        return data


def editor_text(content: Any) -> str:
    """Text a user message gives back to the editor: pi joins text blocks with no separator."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            block["text"]
            for block in content
            if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str)
        )
    return ""


def plan_navigation(manager: SessionManager, target_id: str) -> NavigationPlan:
    """pi's steps 1–3 and 6 of ``navigateTree``; raises EntryNotFoundError for unknown targets."""
    old_leaf = manager.leaf_id
    record = manager.get_record(target_id)
    if record is None:
        raise EntryNotFoundError(target_id)
    if target_id == old_leaf:
        return NavigationPlan(target_id, old_leaf, old_leaf, None, noop=True)
    new_leaf: str | None = target_id
    text: str | None = None
    if record.type == "message" and record.role == "user":
        new_leaf = record.parent_id
        message = record.message() or {}
        text = editor_text(message.get("content"))
    elif record.type == "custom_message":
        new_leaf = record.parent_id
        text = editor_text(record.entry().get("content"))
    if new_leaf is not None and manager.get_record(new_leaf) is None:
        new_leaf = None  # an orphan's parent is not in the session: like pi, land before the root
    entries, ancestor = _abandoned(manager, old_leaf, target_id)
    return NavigationPlan(target_id, old_leaf, new_leaf, text, False, entries, ancestor)


def _abandoned(
    manager: SessionManager, old_leaf: str | None, target_id: str
) -> tuple[list[EntryRecord], str | None]:
    """Entries from the old leaf up to (excluding) the deepest common ancestor, oldest first."""
    if old_leaf is None:
        return [], None
    target_path = {record.id for record in manager.branch_records(target_id) if record.id is not None}
    collected: list[EntryRecord] = []
    ancestor: str | None = None
    for record in reversed(manager.branch_records(old_leaf)):
        if record.id in target_path:
            ancestor = record.id
            break
        collected.append(record)
    collected.reverse()
    return collected, ancestor


def navigate(manager: SessionManager, plan: NavigationPlan, label: str | None = None) -> NavigationResult:
    """Carry out a plan without a summary: move the leaf, then label the target if asked."""
    if plan.noop:
        return NavigationResult(manager.leaf_id)
    manager.set_leaf(plan.new_leaf_id)
    result = NavigationResult(manager.leaf_id, plan.editor_text)
    if label:
        result.appended_ids.append(manager.append_label_change(plan.target_id, label))
        result.leaf_id = manager.leaf_id
    return result


def navigate_with_summary(
    manager: SessionManager, plan: NavigationPlan, summary: str, details: Any, label: str | None = None
) -> NavigationResult:
    """Carry out a plan with a summary already written (the compaction wiring calls this)."""
    summary_id = manager.branch_with_summary(plan.new_leaf_id, summary, details, from_hook=False)
    result = NavigationResult(manager.leaf_id, plan.editor_text, summary_id, [summary_id])
    if label:
        result.appended_ids.append(manager.append_label_change(summary_id, label))
        result.leaf_id = manager.leaf_id
    return result
