"""File-operation tracking and the file-list suffix, as pi's compaction utilities do them."""

from __future__ import annotations

from typing import Any

from pi_lsp.compaction.file_ops import (
    FileOps,
    compute_file_lists,
    extract_file_ops,
    format_file_operations,
    seed_from_details,
)


def call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"type": "toolCall", "id": "c", "name": name, "arguments": arguments}


def test_only_read_write_edit_with_string_paths_are_tracked() -> None:
    messages = [
        {"role": "assistant", "content": [
            call("read", path="a.ts"), call("write", path="b.ts"), call("edit", path="c.ts"),
            call("bash", command="cat d.ts", path="d.ts"), call("read", path=""), call("read", path=7),
            call("grep", path="e.ts"), {"type": "text", "text": "read f.ts"}, "junk",
        ]},
        {"role": "user", "content": [call("read", path="user.ts")]},
        {"role": "toolResult", "content": [call("edit", path="tool.ts")]},
    ]  # fmt: skip
    ops = extract_file_ops(messages)
    assert ops.as_pi() == {"read": ["a.ts"], "written": ["b.ts"], "edited": ["c.ts"]}


def test_seed_from_details_only_for_pi_made_entries() -> None:
    ops = FileOps()
    seed_from_details(ops, {"fromHook": True, "details": {"readFiles": ["x"], "modifiedFiles": ["y"]}})
    assert ops.as_pi() == {"read": [], "written": [], "edited": []}
    seed_from_details(
        ops, {"fromHook": False, "details": {"readFiles": ["r"], "modifiedFiles": "not a list"}}
    )
    seed_from_details(ops, {"details": {"modifiedFiles": ["m"]}})
    assert ops.as_pi() == {"read": ["r"], "written": [], "edited": ["m"]}


def test_compute_file_lists_sorts_by_utf16_and_removes_modified_from_read() -> None:
    ops = FileOps()
    for path in ["z.ts", "b.ts", "a/\uffff", "a/😀.txt", "B.ts"]:
        ops.read[path] = None
    ops.written["b.ts"] = None
    ops.edited["y.ts"] = None
    lists = compute_file_lists(ops)
    # UTF-16 order puts the surrogate pair of 😀 (D83D…) before U+FFFF, unlike code-point order.
    assert lists["readFiles"] == ["B.ts", "a/😀.txt", "a/\uffff", "z.ts"]
    assert lists["modifiedFiles"] == ["b.ts", "y.ts"]


def test_format_file_operations() -> None:
    assert format_file_operations([], []) == ""
    assert format_file_operations(["a"], []) == "\n\n<read-files>\na\n</read-files>"
    assert format_file_operations([], ["m", "n"]) == "\n\n<modified-files>\nm\nn\n</modified-files>"
    both = format_file_operations(["a"], ["m"])
    assert both == "\n\n<read-files>\na\n</read-files>\n\n<modified-files>\nm\n</modified-files>"
