"""Message lines are indexed from their heads at open and parsed when a context or a page needs them.

A line whose head (type, id, parentId, timestamp, role) reads as pi writes it keeps its place in
the tree even when its message turns out not to be JSON: the context leaves that message out and
the entry is sent as its head fields, so every answer stays valid JSON and the file is untouched.
A valid line with keys after ``message`` keeps them (entries are lossless).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from pi_lsp.client.rpc_client import RpcClient
from tests.server.support import start_raw

HEADER = b'{"type":"session","version":3,"id":"head-1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/proj"}'


def _line(entry_id: str, parent: str | None, message: bytes, tail: bytes = b"") -> bytes:
    head = {"type": "message", "id": entry_id, "parentId": parent, "timestamp": "2026-01-01T00:00:01.000Z"}
    return orjson.dumps(head)[:-1] + b',"message":' + message + tail + b"}"


def _session(path: Path) -> Path:
    assistant = {
        "role": "assistant",
        "content": [{"type": "text", "text": "ok"}],
        "provider": "anthropic",
        "model": "claude-test",
        "stopReason": "stop",
    }
    lines = [
        HEADER,
        _line("a1", None, b'{"role":"user","content":"first"}'),
        _line("a2", "a1", orjson.dumps(assistant)),
        _line("b1", "a2", b'{"role":"user","content":[1,}'),  # the message is not JSON
        _line("c1", "b1", b'{"role":"user","content":"last"}', b',"note":{"kept":true}'),
    ]
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


async def _result(client: RpcClient, method: str, params: dict[str, Any]) -> Any:
    message = orjson.loads(await client.request_raw(method, params, timeout=30))  # valid JSON
    assert "error" not in message, message["error"]
    return message["result"]


async def test_a_message_is_parsed_when_needed_and_a_broken_one_keeps_its_place(tmp_path: Path) -> None:
    path = _session(tmp_path / "head.jsonl")
    before = path.read_bytes()
    client = await start_raw(tmp_path)
    try:
        state = await _result(client, "pi/openSession", {"path": str(path)})
        assert state["entryCount"] == 4 and state["leafId"] == "c1"
        context = await _result(client, "pi/buildContext", {})
        ok = [{"type": "text", "text": "ok"}]
        assert [message["content"] for message in context["messages"]] == ["first", ok, "last"]
        assert context["model"] == {"provider": "anthropic", "modelId": "claude-test"}
        broken = await _result(client, "pi/getEntry", {"id": "b1"})
        assert broken["entry"] == {
            "type": "message",
            "id": "b1",
            "parentId": "a2",
            "timestamp": "2026-01-01T00:00:01.000Z",
        }
        kept = await _result(client, "pi/getEntry", {"id": "c1"})
        assert kept["entry"]["note"] == {"kept": True} and kept["entry"]["message"]["content"] == "last"
        branch = await _result(client, "pi/getBranch", {"limit": 100})
        assert [entry["id"] for entry in branch["entries"]] == ["a1", "a2", "b1", "c1"]
    finally:
        await client.close()
    assert path.read_bytes() == before
