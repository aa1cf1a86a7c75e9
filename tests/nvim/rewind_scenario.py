"""The model's side of the rewind scenario the pseudo-terminal tests share."""

from __future__ import annotations

from tests.llm.fake_anthropic import Reply, Text, ToolUse, assistant_stream


def _write(call_id: str, path: str, content: str) -> ToolUse:
    return ToolUse(call_id, "write", {"path": path, "content": content})


def two_branch_replies() -> list[Reply]:
    """The model's side of the rewind scenario (the scripts make the branches): a run writing
    file.txt = A, then, on another branch, one writing file.txt = B and a new new.txt."""
    both = [_write("toolu_B", "file.txt", "B\n"), _write("toolu_N", "new.txt", "new\n")]
    return [
        Reply(events=assistant_stream(_write("toolu_A", "file.txt", "A\n"), message_id="m_a")),
        Reply(events=assistant_stream(Text("Done A."), message_id="m_a2")),
        Reply(events=assistant_stream(*both, message_id="m_b")),
        Reply(events=assistant_stream(Text("Done B."), message_id="m_b2")),
    ]
