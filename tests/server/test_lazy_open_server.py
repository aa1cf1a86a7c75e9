"""Over JSON-RPC, a session opened with most lines kept as lines (``session/rows.py``) answers what
reading every line into a record answers (``read_lines`` without ``lazy``): its state and
diagnostics, pages of its branch, its context, and, once every record is made, its tree.

The file spans several read blocks and holds, among pi's message lines, a torn write merged with
the next append (a malformed line), a CRLF line, an id used twice, a name, a label and a model
change.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from pi_lsp.client.rpc_client import RpcClient
from pi_lsp.service import wire
from pi_lsp.session.index import SessionIndex
from pi_lsp.session.loader import read_lines
from pi_lsp.session.view import build_view
from tests.server.support import start_raw

HEADER = b'{"type":"session","version":3,"id":"lazy-1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/proj"}'
FILLER = "lorem ipsum " * 60


def _message(entry_id: str, parent: str | None, number: int) -> bytes:
    role = "assistant" if number % 2 else "user"
    message: dict[str, Any] = {"role": role, "content": [{"type": "text", "text": f"{number} {FILLER}"}]}
    if role == "assistant":
        message.update(provider="anthropic", model=f"model-{number % 3}", stopReason="stop")
    stamp = f"2026-01-01T00:{number // 60 % 60:02d}:{number % 60:02d}.000Z"
    return orjson.dumps(
        {"type": "message", "id": entry_id, "parentId": parent, "timestamp": stamp, "message": message}
    )


def _session(path: Path, count: int) -> Path:
    lines = [HEADER]
    parent: str | None = None
    for number in range(count):
        entry_id = f"e{number}"
        line = _message(entry_id, parent, number)
        if number == 700:  # pi's torn write, then its next append on the same line
            line = line[:90] + _message("torn", parent, number)
            entry_id = parent or ""
        elif number == 1500:
            line += b"\r"
        elif number == 2000:  # an id used again: the later entry wins, as in pi
            line = _message("e10", parent, number)
            entry_id = "e10"
        lines.append(line)
        parent = entry_id
        if number == 1200:
            lines.append(
                orjson.dumps({"type": "session_info", "id": "n1", "parentId": parent, "name": "lazy"})
            )
            lines.append(
                orjson.dumps({"type": "label", "id": "l1", "parentId": "n1", "targetId": "e3", "label": "L"})
            )
            extra = {"type": "model_change", "id": "m1", "parentId": "l1", "provider": "p", "modelId": "m"}
            lines.append(orjson.dumps(extra))
            parent = "m1"
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


async def _result(client: RpcClient, method: str, params: dict[str, Any]) -> Any:
    message = orjson.loads(await client.request_raw(method, params, timeout=60))
    assert "error" not in message, message["error"]
    return message["result"]


async def test_a_lazily_opened_session_answers_as_one_read_whole(tmp_path: Path) -> None:
    path = _session(tmp_path / "lazy.jsonl", 3000)
    assert path.stat().st_size > 2 * (1 << 20)  # several read blocks
    before = path.read_bytes()
    read = read_lines(path)
    index = SessionIndex()
    index.extend(read.records)
    leaf = index.records[-1].id
    client = await start_raw(tmp_path)
    try:
        state = await _result(client, "pi/openSession", {"path": str(path)})
        assert (state["entryCount"], state["leafId"], state["name"]) == (len(index.records), leaf, "lazy")
        assert state["diagnostics"] == read.diagnostics and any(
            "line 702" in d["message"] for d in read.diagnostics
        )
        page = await _result(client, "pi/getBranch", {"limit": 50})
        tail, more = index.path_tail(leaf, 50)
        assert page["hasMore"] is more
        assert [orjson.dumps(entry) for entry in page["entries"]] == [record.raw for record in tail]
        older = await _result(client, "pi/getBranch", {"limit": 50, "beforeId": tail[0].id})
        assert [entry["id"] for entry in older["entries"]] == [
            r.id for r in index.path_tail(tail[0].parent_id, 50)[0]
        ]
        entry = await _result(client, "pi/getEntry", {"id": "e10"})
        assert orjson.dumps(entry["entry"]) == index.by_id["e10"].raw
        context = await _result(client, "pi/buildContext", {})
        expected = build_view(index.path_to(leaf))
        array = expected.message_array()
        assert array is not None
        assert orjson.dumps(context["messages"]) == array.joined()
        assert context["model"] == expected.model
        tree = await _result(client, "pi/getTree", {"format": "flat"})
        assert tree == orjson.loads(orjson.dumps(wire.tree_result(index.tree(), leaf, flat=True)))
    finally:
        await client.close()
    assert path.read_bytes() == before
