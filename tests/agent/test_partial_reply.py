"""The streamed reply's copy for late joiners (``agent/partial_reply.py``): what a snapshot holds at
each point of a stream, with texts joined from their pieces."""

from __future__ import annotations

from pi_lsp.agent.partial_reply import PartialReply


def test_a_snapshot_holds_each_block_as_streamed_so_far() -> None:
    reply = PartialReply({"role": "assistant", "model": "m", "content": []})
    events = [
        {"type": "thinking_start", "contentIndex": 0},
        {"type": "thinking_delta", "contentIndex": 0, "delta": "let me "},
        {"type": "thinking_delta", "contentIndex": 0, "delta": "see"},
        {"type": "thinking_end", "contentIndex": 0, "content": "let me see"},
        {"type": "text_start", "contentIndex": 1},
        {"type": "text_delta", "contentIndex": 1, "delta": "Hello"},
    ]
    for event in events:
        reply.apply(event)
    first = reply.snapshot()
    assert first == {
        "role": "assistant",
        "model": "m",
        "content": [{"type": "thinking", "thinking": "let me see"}, {"type": "text", "text": "Hello"}],
    }
    first["content"][1]["text"] = "changed by a reader"  # a snapshot is a copy
    for event in [
        {"type": "text_delta", "contentIndex": 1, "delta": ", world"},
        {"type": "toolcall_start", "contentIndex": 2},
        {"type": "toolcall_delta", "contentIndex": 2, "delta": '{"pa'},
        {"type": "toolcall_delta", "contentIndex": 2, "delta": 'th": "a'},
    ]:
        reply.apply(event)
    assert reply.snapshot()["content"][1:] == [
        {"type": "text", "text": "Hello, world"},
        {"type": "toolCall", "partialJson": '{"path": "a'},
    ]
    call = {"type": "toolCall", "id": "c1", "name": "read", "arguments": {"path": "a"}}
    reply.apply({"type": "toolcall_end", "contentIndex": 2, "toolCall": call})
    assert reply.snapshot()["content"][2] == call  # the finished call replaces its pieces


def test_odd_events_change_what_they_name_and_nothing_else() -> None:
    reply = PartialReply({"role": "assistant", "content": []})
    reply.apply({"type": "text_delta", "contentIndex": 1, "delta": "no start"})  # blocks before it made empty
    reply.apply({"type": "text_delta", "delta": "no index"})
    reply.apply({"type": "text_delta", "contentIndex": -1, "delta": "negative"})
    reply.apply({"type": "toolcall_end", "contentIndex": 0, "toolCall": "not an object"})
    assert reply.snapshot()["content"] == [{}, {"text": "no start"}]
    reply.apply({"type": "text_start", "contentIndex": 1})  # a start clears what came before it
    assert reply.snapshot()["content"] == [{}, {"type": "text", "text": ""}]
