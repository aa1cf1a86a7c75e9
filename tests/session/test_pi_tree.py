"""pi's session tree (behaviours 46–76): custom entries, appends, branches, the leaf, forks.

The numbers are session spec §6's (pi's own session-manager tests); the rules for where pi's
versions or ours differ are in ``test_pi_build_context.py``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pi_lsp.session import (
    EntryNotFoundError,
    SessionManager,
)
from tests.session.helpers import (
    assistant_msg,
    file_lines,
    read_objects,
    texts,
    user_msg,
)

# ---------------------------------------------------------------------------------------------
# save-entry.test.ts


def test_46_custom_entries_in_tree_traversal() -> None:
    manager = SessionManager.in_memory()
    msg_id = manager.append_message(user_msg("hello"))
    custom_id = manager.append_custom_entry("my_data", {"foo": "bar"})
    msg2_id = manager.append_message(assistant_msg("hi"))
    entries = manager.get_entries()
    assert len(entries) == 3
    custom = next(e for e in entries if e["type"] == "custom")
    assert custom["customType"] == "my_data"
    assert custom["data"] == {"foo": "bar"}
    assert custom["id"] == custom_id
    assert custom["parentId"] == msg_id
    assert list(custom) == ["type", "customType", "data", "id", "parentId", "timestamp"]
    assert [e["id"] for e in manager.get_branch()] == [msg_id, custom_id, msg2_id]
    assert len(manager.build_session_context()["messages"]) == 2


def test_46b_custom_entry_without_data_omits_key() -> None:
    manager = SessionManager.in_memory()
    manager.append_custom_entry("flag")
    assert "data" not in manager.get_entries()[0]


# ---------------------------------------------------------------------------------------------
# tree-traversal.test.ts


def test_47_append_message_parent_chain() -> None:
    manager = SessionManager.in_memory()
    id1 = manager.append_message(user_msg("first"))
    id2 = manager.append_message(assistant_msg("second"))
    id3 = manager.append_message(user_msg("third"))
    entries = manager.get_entries()
    assert [(e["id"], e["parentId"], e["type"]) for e in entries] == [
        (id1, None, "message"),
        (id2, id1, "message"),
        (id3, id2, "message"),
    ]
    assert list(entries[0]) == ["type", "id", "parentId", "timestamp", "message"]


def test_48_thinking_level_change_in_tree() -> None:
    manager = SessionManager.in_memory()
    msg_id = manager.append_message(user_msg("hello"))
    thinking_id = manager.append_thinking_level_change("high")
    msg2_id = manager.append_message(assistant_msg("response"))
    thinking = manager.get_entry(thinking_id)
    assert thinking is not None
    assert thinking["type"] == "thinking_level_change"
    assert thinking["thinkingLevel"] == "high"
    assert thinking["parentId"] == msg_id
    assert manager.get_entry(msg2_id)["parentId"] == thinking_id  # type: ignore[index]


def test_49_model_change_in_tree() -> None:
    manager = SessionManager.in_memory()
    msg_id = manager.append_message(user_msg("hello"))
    model_id = manager.append_model_change("openai", "gpt-4")
    msg2_id = manager.append_message(assistant_msg("response"))
    entry = manager.get_entry(model_id)
    assert entry is not None
    assert (entry["type"], entry["provider"], entry["modelId"], entry["parentId"]) == (
        "model_change",
        "openai",
        "gpt-4",
        msg_id,
    )
    assert manager.get_entry(msg2_id)["parentId"] == model_id  # type: ignore[index]


def test_50_compaction_in_tree() -> None:
    manager = SessionManager.in_memory()
    id1 = manager.append_message(user_msg("1"))
    id2 = manager.append_message(assistant_msg("2"))
    compaction_id = manager.append_compaction("summary", id1, 1000)
    id3 = manager.append_message(user_msg("3"))
    entry = manager.get_entry(compaction_id)
    assert entry is not None
    assert (entry["summary"], entry["firstKeptEntryId"], entry["tokensBefore"], entry["parentId"]) == (
        "summary",
        id1,
        1000,
        id2,
    )
    assert "details" not in entry and "fromHook" not in entry
    assert manager.get_entry(id3)["parentId"] == compaction_id  # type: ignore[index]
    detailed = manager.append_compaction("s2", id3, 5, {"readFiles": [], "modifiedFiles": []}, False)
    assert list(manager.get_entry(detailed) or {}) == [
        "type",
        "id",
        "parentId",
        "timestamp",
        "summary",
        "firstKeptEntryId",
        "tokensBefore",
        "details",
        "fromHook",
    ]


def test_51_custom_entry_in_tree() -> None:
    manager = SessionManager.in_memory()
    msg_id = manager.append_message(user_msg("hello"))
    custom_id = manager.append_custom_entry("my_hook", {"key": "value"})
    msg2_id = manager.append_message(assistant_msg("response"))
    custom = manager.get_entry(custom_id)
    assert custom is not None and custom["parentId"] == msg_id
    assert manager.get_entry(msg2_id)["parentId"] == custom_id  # type: ignore[index]


def test_52_leaf_advances_after_each_append() -> None:
    manager = SessionManager.in_memory()
    assert manager.leaf_id is None
    id1 = manager.append_message(user_msg("1"))
    assert manager.leaf_id == id1
    id2 = manager.append_message(assistant_msg("2"))
    assert manager.leaf_id == id2
    id3 = manager.append_thinking_level_change("high")
    assert manager.leaf_id == id3


def test_53_get_branch_empty_session() -> None:
    assert SessionManager.in_memory().get_branch() == []


def test_54_get_branch_single_entry() -> None:
    manager = SessionManager.in_memory()
    id1 = manager.append_message(user_msg("1"))
    assert [e["id"] for e in manager.get_branch()] == [id1]


def test_55_get_branch_full_path() -> None:
    manager = SessionManager.in_memory()
    id1 = manager.append_message(user_msg("1"))
    id2 = manager.append_message(assistant_msg("2"))
    id3 = manager.append_thinking_level_change("high")
    id4 = manager.append_message(user_msg("3"))
    assert [e["id"] for e in manager.get_branch()] == [id1, id2, id3, id4]


def test_56_get_branch_from_specified_entry() -> None:
    manager = SessionManager.in_memory()
    id1 = manager.append_message(user_msg("1"))
    id2 = manager.append_message(assistant_msg("2"))
    manager.append_message(user_msg("3"))
    manager.append_message(assistant_msg("4"))
    assert [e["id"] for e in manager.get_branch(id2)] == [id1, id2]
    assert manager.get_branch("unknown") == []
    assert manager.get_branch(None) == []


def test_57_get_tree_empty() -> None:
    assert SessionManager.in_memory().get_tree() == []


def test_58_get_tree_linear() -> None:
    manager = SessionManager.in_memory()
    ids = [
        manager.append_message(user_msg("1")),
        manager.append_message(assistant_msg("2")),
        manager.append_message(user_msg("3")),
        manager.append_message(assistant_msg("4")),
    ]
    tree = manager.get_tree()
    assert len(tree) == 1
    node = tree[0]
    for entry_id in ids[:-1]:
        assert node.record.id == entry_id and len(node.children) == 1
        node = node.children[0]
    assert node.record.id == ids[-1] and node.children == []


def test_59_get_tree_after_branch() -> None:
    manager = SessionManager.in_memory()
    id1 = manager.append_message(user_msg("1"))
    id2 = manager.append_message(assistant_msg("2"))
    id3 = manager.append_message(user_msg("3"))
    manager.branch(id2)
    id4 = manager.append_message(user_msg("4-branch"))
    tree = manager.get_tree()
    assert tree[0].record.id == id1
    node2 = tree[0].children[0]
    assert node2.record.id == id2
    assert [c.record.id for c in node2.children] == [id3, id4]


def test_60_multiple_branches_at_same_point() -> None:
    manager = SessionManager.in_memory()
    manager.append_message(user_msg("root"))
    id2 = manager.append_message(assistant_msg("response"))
    branch_ids = []
    for name in ("A", "B", "C"):
        manager.branch(id2)
        branch_ids.append(manager.append_message(user_msg(f"branch-{name}")))
    node2 = manager.get_tree()[0].children[0]
    assert [c.record.id for c in node2.children] == branch_ids


def test_61_deep_branching() -> None:
    manager = SessionManager.in_memory()
    manager.append_message(user_msg("1"))
    id2 = manager.append_message(assistant_msg("2"))
    id3 = manager.append_message(user_msg("3"))
    id4 = manager.append_message(assistant_msg("4"))
    manager.branch(id2)
    id5 = manager.append_message(user_msg("5"))
    id6 = manager.append_message(assistant_msg("6"))
    manager.branch(id5)
    id7 = manager.append_message(assistant_msg("7"))
    node2 = manager.get_tree()[0].children[0]
    assert {c.record.id for c in node2.children} == {id3, id5}
    node3 = next(c for c in node2.children if c.record.id == id3)
    node5 = next(c for c in node2.children if c.record.id == id5)
    assert [c.record.id for c in node3.children] == [id4]
    assert {c.record.id for c in node5.children} == {id6, id7}


def test_62_branch_moves_leaf() -> None:
    manager = SessionManager.in_memory()
    id1 = manager.append_message(user_msg("1"))
    manager.append_message(assistant_msg("2"))
    manager.branch(id1)
    assert manager.leaf_id == id1


def test_63_branch_unknown_throws() -> None:
    with pytest.raises(EntryNotFoundError, match=r"^Entry nonexistent not found$"):
        SessionManager.in_memory().branch("nonexistent")


def test_64_appends_after_branch_are_children_of_branch_point() -> None:
    manager = SessionManager.in_memory()
    id1 = manager.append_message(user_msg("1"))
    manager.append_message(assistant_msg("2"))
    manager.branch(id1)
    new_id = manager.append_message(assistant_msg("branched"))
    assert manager.get_entry(new_id)["parentId"] == id1  # type: ignore[index]


def test_64b_reset_leaf_starts_new_root() -> None:
    manager = SessionManager.in_memory()
    manager.append_message(user_msg("1"))
    manager.reset_leaf()
    assert manager.leaf_id is None
    assert manager.get_leaf_entry() is None
    assert manager.build_session_context()["messages"] == []
    new_root = manager.append_message(user_msg("fresh"))
    assert manager.get_entry(new_root)["parentId"] is None  # type: ignore[index]
    assert len(manager.get_tree()) == 2
    # a label appended at a null leaf becomes a new root too (pi semantics, spec §8.9)
    manager.reset_leaf()
    label = manager.append_label_change(new_root, "x")
    assert manager.get_entry(label)["parentId"] is None  # type: ignore[index]


def test_65_branch_with_summary() -> None:
    manager = SessionManager.in_memory()
    id1 = manager.append_message(user_msg("1"))
    manager.append_message(assistant_msg("2"))
    manager.append_message(user_msg("3"))
    summary_id = manager.branch_with_summary(id1, "Summary of abandoned work")
    assert manager.leaf_id == summary_id
    entry = manager.get_entry(summary_id)
    assert entry is not None
    assert entry["type"] == "branch_summary"
    assert entry["parentId"] == id1
    assert entry["fromId"] == id1
    assert entry["summary"] == "Summary of abandoned work"
    assert list(entry) == ["type", "id", "parentId", "timestamp", "fromId", "summary"]
    root_summary = manager.branch_with_summary(None, "from root", {"readFiles": []}, True)
    entry = manager.get_entry(root_summary)
    assert entry is not None
    assert (entry["parentId"], entry["fromId"], entry["details"], entry["fromHook"]) == (
        None,
        "root",
        {"readFiles": []},
        True,
    )


def test_66_branch_with_summary_unknown_throws() -> None:
    manager = SessionManager.in_memory()
    manager.append_message(user_msg("1"))
    with pytest.raises(EntryNotFoundError, match=r"^Entry nonexistent not found$"):
        manager.branch_with_summary("nonexistent", "summary")


def test_67_leaf_entry_empty_session() -> None:
    assert SessionManager.in_memory().get_leaf_entry() is None


def test_68_leaf_entry_current() -> None:
    manager = SessionManager.in_memory()
    manager.append_message(user_msg("1"))
    id2 = manager.append_message(assistant_msg("2"))
    leaf = manager.get_leaf_entry()
    assert leaf is not None and leaf["id"] == id2


def test_69_get_entry_unknown() -> None:
    assert SessionManager.in_memory().get_entry("nonexistent") is None


def test_70_get_entry_by_id() -> None:
    manager = SessionManager.in_memory()
    id1 = manager.append_message(user_msg("first"))
    entry = manager.get_entry(id1)
    assert entry is not None
    assert entry["type"] == "message"
    assert entry["message"]["role"] == "user"
    assert entry["message"]["content"] == "first"


def test_71_context_from_current_branch_only() -> None:
    manager = SessionManager.in_memory()
    manager.append_message(user_msg("msg1"))
    id2 = manager.append_message(assistant_msg("msg2"))
    manager.append_message(user_msg("msg3"))
    manager.branch(id2)
    manager.append_message(assistant_msg("msg4-branch"))
    assert texts(manager.build_session_context()["messages"]) == ["msg1", "msg2", "msg4-branch"]


def test_72_create_branched_session_unknown_throws() -> None:
    with pytest.raises(EntryNotFoundError, match=r"^Entry nonexistent not found$"):
        SessionManager.in_memory().create_branched_session("nonexistent")


def test_73_create_branched_session_in_memory() -> None:
    manager = SessionManager.in_memory()
    id1 = manager.append_message(user_msg("1"))
    id2 = manager.append_message(assistant_msg("2"))
    manager.append_message(user_msg("3"))
    old_id = manager.session_id
    assert manager.create_branched_session(id2) is None
    assert manager.session_id != old_id
    assert "parentSession" not in manager.get_header()
    assert [e["id"] for e in manager.get_entries()] == [id1, id2]
    assert manager.session_file is None


def test_74_create_branched_session_extracts_path() -> None:
    manager = SessionManager.in_memory()
    id1 = manager.append_message(user_msg("1"))
    id2 = manager.append_message(assistant_msg("2"))
    manager.append_message(user_msg("3"))
    manager.branch(id2)
    id4 = manager.append_message(user_msg("4"))
    id5 = manager.append_message(assistant_msg("5"))
    manager.create_branched_session(id5)
    assert [e["id"] for e in manager.get_entries()] == [id1, id2, id4, id5]


def test_75_no_duplicates_when_forking_from_first_user_message(session_dir: Path) -> None:
    manager = SessionManager.create("/proj", session_dir)
    id1 = manager.append_message(user_msg("first question"))
    manager.append_message(assistant_msg("first answer"))
    manager.append_message(user_msg("second question"))
    manager.append_message(assistant_msg("second answer"))
    source = manager.session_file
    new_file = manager.create_branched_session(id1)
    assert new_file is not None and new_file != source
    assert manager.get_header()["parentSession"] == source
    assert not Path(new_file).exists()
    manager.append_custom_entry("preset-state", {"name": "plan"})
    assert not Path(new_file).exists()
    manager.append_message(assistant_msg("new answer"))
    objects = read_objects(Path(new_file))
    assert [o["type"] for o in objects].count("session") == 1
    ids = [o["id"] for o in objects if o["type"] != "session"]
    assert len(ids) == len(set(ids)) == 3
    assert objects[0]["id"] == manager.session_id


def test_76_branched_session_written_immediately_with_assistant(session_dir: Path) -> None:
    manager = SessionManager.create("/proj", session_dir)
    manager.append_message(user_msg("q1"))
    id2 = manager.append_message(assistant_msg("a1"))
    manager.append_message(user_msg("q2"))
    manager.append_message(assistant_msg("a2"))
    new_file = manager.create_branched_session(id2)
    assert new_file is not None and Path(new_file).exists()
    objects = read_objects(Path(new_file))
    assert [o["type"] for o in objects] == ["session", "message", "message"]
    assert Path(new_file).name.endswith(f"_{manager.session_id}.jsonl")
    # appending continues the new file, one line per entry
    manager.append_message(user_msg("q3"))
    assert len(file_lines(Path(new_file))) == 4
