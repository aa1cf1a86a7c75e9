"""The transcript the summariser reads: pi's structure, our code."""

from __future__ import annotations

from typing import Any

from pi_lsp.llm.serialize import (
    TOOL_RESULT_LIMIT,
    bash_execution_text,
    clip,
    convert_to_llm,
    serialize_conversation,
    transcript,
)


def test_roles_render_in_pi_layout() -> None:
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": [{"type": "text", "text": "Fix "}, {"type": "image", "data": "x"},
                                     {"type": "text", "text": "the bug"}]},
        {"role": "assistant", "content": [
            {"type": "toolCall", "id": "1", "name": "read", "arguments": {"path": "a.ts", "limit": 1.0}},
            {"type": "text", "text": "Looking"},
            {"type": "thinking", "thinking": "plan A"},
            {"type": "thinking", "thinking": "plan B"},
            {"type": "toolCall", "id": "2", "name": "bash", "arguments": {"command": "ls \"x\""}},
            {"type": "text", "text": "now"},
        ]},
        {"role": "toolResult", "toolName": "read", "isError": True,
         "content": [{"type": "text", "text": "body"}]},
        {"role": "user", "content": ""},
        {"role": "toolResult", "content": [{"type": "image", "data": "x"}]},
    ]  # fmt: skip
    assert serialize_conversation(messages) == (
        "[User]: Fix the bug\n\n"
        "[Assistant thinking]: plan A\nplan B\n\n"
        "[Assistant]: Looking\nnow\n\n"
        '[Assistant tool calls]: read(path="a.ts", limit=1); bash(command="ls \\"x\\"")\n\n'
        "[Tool result]: body"
    )


def test_tool_results_are_clipped_at_2000_js_characters() -> None:
    long = "a" * 2500
    out = serialize_conversation([{"role": "toolResult", "content": [{"type": "text", "text": long}]}])
    assert out == "[Tool result]: " + "a" * 2000 + "\n\n[... 500 more characters truncated]"
    assert clip("😀" * 1001) == "😀" * 1000 + "\n\n[... 2 more characters truncated]"  # UTF-16 units
    assert clip("x" * TOOL_RESULT_LIMIT) == "x" * TOOL_RESULT_LIMIT
    user_text = "u" * 5000
    assert serialize_conversation([{"role": "user", "content": user_text}]) == f"[User]: {user_text}"


def test_convert_to_llm_maps_extra_roles() -> None:
    bash = {"role": "bashExecution", "command": "make", "output": "", "exitCode": 2, "timestamp": 5}
    hidden = {**bash, "excludeFromContext": True}
    custom = {"role": "custom", "customType": "n", "content": "note", "timestamp": 6}
    branch = {"role": "branchSummary", "summary": "B", "fromId": "x", "timestamp": 7}
    compaction = {"role": "compactionSummary", "summary": "C", "tokensBefore": 1, "timestamp": 8}
    converted = convert_to_llm([bash, hidden, custom, branch, compaction, {"role": "other"}])
    assert [m["role"] for m in converted] == ["user"] * 4
    assert converted[0]["content"][0]["text"] == "Ran `make`\n(no output)\n\nCommand exited with code 2"
    assert converted[1]["content"] == [{"type": "text", "text": "note"}]
    assert converted[2]["content"][0]["text"].endswith("<summary>\nB</summary>")
    assert converted[3]["content"][0]["text"].endswith("<summary>\nC\n</summary>")
    assert converted[0]["timestamp"] == 5


def test_bash_execution_text_variants() -> None:
    assert (
        bash_execution_text({"command": "ls", "output": "a\nb", "exitCode": 0}) == "Ran `ls`\n```\na\nb\n```"
    )
    cancelled = {"command": "x", "output": "o", "exitCode": 1, "cancelled": True, "truncated": True,
                 "fullOutputPath": "/tmp/f"}  # fmt: skip
    assert bash_execution_text(cancelled) == (
        "Ran `x`\n```\no\n```\n\n(command cancelled)\n\n[Output truncated. Full output: /tmp/f]"
    )


def test_transcript_combines_both_steps() -> None:
    messages = [{"role": "bashExecution", "command": "ls", "output": "f", "exitCode": None}]
    assert transcript(messages) == "[User]: Ran `ls`\n```\nf\n```"
