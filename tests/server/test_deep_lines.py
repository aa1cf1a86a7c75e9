"""A session line nested deeper than orjson's limit (pi reads it) works in every request that reads it.

Before, one such line made ``pi/openSession`` fail with -32603 (RecursionError), hid the whole
project from ``pi/listSessions`` and stopped external-change tracking of the open session.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pi_lsp.client.rpc_client import RpcClient
from pi_lsp.session.jsonl import loads_line
from tests.server.support import start_raw
from tests.session.deep_sessions import deep_session

DEPTH = 100_000


async def _request(client: RpcClient, method: str, params: dict[str, Any]) -> Any:
    """The result, read with the tolerant reader (the answer itself nests as deep as the entry)."""
    message = loads_line(await client.request_raw(method, params, timeout=60))
    assert "error" not in message, message["error"]
    return message["result"]


async def test_deep_line_open_list_context_entries_and_external_appends(tmp_path: Path) -> None:
    sessions = tmp_path / "sessions"
    sessions.mkdir()
    path = deep_session(sessions / "deep.jsonl", DEPTH)
    client = await start_raw(tmp_path, PI_CODING_AGENT_SESSION_DIR=str(sessions))
    try:
        state = await _request(client, "pi/openSession", {"path": str(path)})
        assert state["entryCount"] == 3 and state["leafId"] == "d3" and state["diagnostics"] == []
        listed = await _request(client, "pi/listSessions", {"cwd": "/proj"})
        infos = listed["sessions"]
        assert [info["id"] for info in infos] == ["deep-1"] and infos[0]["messageCount"] == 2
        context = await _request(client, "pi/buildContext", {})
        assert [message["role"] for message in context["messages"]] == ["user", "user"]
        entries = await _request(client, "pi/getEntries", {})
        lines = path.read_bytes().splitlines()
        assert [entry["id"] for entry in entries["entries"]] == ["d1", "d2", "d3"]
        assert (await client.request_raw("pi/getEntry", {"id": "d1"})).find(lines[1]) > 0  # bytes as stored

        # another writer appends a second deep line: it is picked up and announced
        deep_again = lines[1].replace(b'"id":"d1","parentId":null', b'"id":"d4","parentId":"d3"')
        with path.open("ab") as handle:
            handle.write(deep_again + b"\n")
        change = await client.next_notification("pi/sessionChanged", timeout=10)
        assert change["reason"] == "external" and change["appendedIds"] == ["d4"] and change["leafId"] == "d4"
    finally:
        await client.close()
