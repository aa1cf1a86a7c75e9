"""pi's labels (behaviours 36–43): set, clear, in tree nodes, across a branched session.

The numbers are session spec §6's (pi's own session-manager tests); the rules for where pi's
versions or ours differ are in ``test_pi_build_context.py``.
"""

from __future__ import annotations

import pytest

from pi_lsp.session import (
    EntryNotFoundError,
    SessionManager,
)
from tests.session.helpers import (
    assistant_msg,
    user_msg,
)

# ---------------------------------------------------------------------------------------------
# labels.test.ts (in memory)


def test_36_sets_and_gets_labels() -> None:
    manager = SessionManager.in_memory()
    msg_id = manager.append_message(user_msg("hello"))
    assert manager.get_label(msg_id) is None
    label_id = manager.append_label_change(msg_id, "checkpoint")
    assert manager.get_label(msg_id) == "checkpoint"
    label_entries = [e for e in manager.get_entries() if e["type"] == "label"]
    assert len(label_entries) == 1
    assert label_entries[0]["id"] == label_id
    assert label_entries[0]["targetId"] == msg_id
    assert label_entries[0]["label"] == "checkpoint"


def test_37_clears_labels_with_undefined() -> None:
    manager = SessionManager.in_memory()
    msg_id = manager.append_message(user_msg("hello"))
    manager.append_label_change(msg_id, "checkpoint")
    manager.append_label_change(msg_id, None)
    assert manager.get_label(msg_id) is None
    assert "label" not in manager.get_entries()[-1]
    manager.append_label_change(msg_id, "again")
    manager.append_label_change(msg_id, "")
    assert manager.get_label(msg_id) is None


def test_38_last_label_wins() -> None:
    manager = SessionManager.in_memory()
    msg_id = manager.append_message(user_msg("hello"))
    for label in ("first", "second", "third"):
        manager.append_label_change(msg_id, label)
    assert manager.get_label(msg_id) == "third"


def test_39_labels_in_tree_nodes() -> None:
    manager = SessionManager.in_memory()
    msg1 = manager.append_message(user_msg("hello"))
    msg2 = manager.append_message(assistant_msg("hi"))
    manager.append_label_change(msg1, "start")
    manager.append_label_change(msg2, "response")
    tree = manager.get_tree()
    assert tree[0].record.id == msg1 and tree[0].label == "start"
    assert tree[0].children[0].record.id == msg2 and tree[0].children[0].label == "response"


def test_39b_tree_node_carries_label_timestamp() -> None:
    """Delta §1: tree nodes expose the timestamp of the label entry that set the label."""
    manager = SessionManager.in_memory()
    msg1 = manager.append_message(user_msg("hello"))
    label_id = manager.append_label_change(msg1, "start")
    label_entry = manager.get_entry(label_id)
    assert label_entry is not None
    assert manager.get_tree()[0].label_timestamp == label_entry["timestamp"]


def test_40_labels_preserved_in_create_branched_session() -> None:
    manager = SessionManager.in_memory()
    msg1 = manager.append_message(user_msg("hello"))
    msg2 = manager.append_message(assistant_msg("hi"))
    label1 = manager.append_label_change(msg1, "important")
    label2 = manager.append_label_change(msg2, "also-important")
    stamps = {manager.get_entry(label1)["timestamp"], manager.get_entry(label2)["timestamp"]}  # type: ignore[index]
    manager.append_message(user_msg("followup"))
    assert manager.create_branched_session(msg2) is None
    assert manager.get_label(msg1) == "important"
    assert manager.get_label(msg2) == "also-important"
    labels = [e for e in manager.get_entries() if e["type"] == "label"]
    assert len(labels) == 2
    # delta: new ids, timestamps copied from the original label entries, chained after the path
    assert {e["timestamp"] for e in labels} == stamps
    assert {e["id"] for e in labels}.isdisjoint({label1, label2})
    assert labels[0]["parentId"] == msg2 and labels[1]["parentId"] == labels[0]["id"]
    assert manager.leaf_id == labels[1]["id"]


def test_41_labels_off_path_not_preserved() -> None:
    manager = SessionManager.in_memory()
    msg1 = manager.append_message(user_msg("hello"))
    msg2 = manager.append_message(assistant_msg("hi"))
    msg3 = manager.append_message(user_msg("followup"))
    manager.append_label_change(msg1, "first")
    manager.append_label_change(msg2, "second")
    manager.append_label_change(msg3, "third")
    manager.create_branched_session(msg2)
    assert manager.get_label(msg1) == "first"
    assert manager.get_label(msg2) == "second"
    assert manager.get_label(msg3) is None
    assert len([e for e in manager.get_entries() if e["type"] == "label"]) == 2


def test_42_labels_not_in_context() -> None:
    manager = SessionManager.in_memory()
    msg_id = manager.append_message(user_msg("hello"))
    manager.append_label_change(msg_id, "checkpoint")
    assert len(manager.build_session_context()["messages"]) == 1


def test_43_label_on_missing_entry_throws() -> None:
    manager = SessionManager.in_memory()
    with pytest.raises(EntryNotFoundError, match=r"^Entry non-existent not found$"):
        manager.append_label_change("non-existent", "label")
