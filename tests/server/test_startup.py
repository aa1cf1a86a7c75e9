"""Start-up over stdio: the first session requests are answered before pygls/lsprotocol are loaded,
and serving them imports neither the Anthropic SDK nor the agent.

The real server runs under an import hook (``GATED``) that holds any import of ``lsprotocol`` until
the test opens a gate, and records which of the watched modules were imported. No timing is
involved: a server that needed lsprotocol for its first ``pi/`` answers would not answer at all
until the gate opens.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import orjson
import pytest

from pi_lsp.client.rpc_client import RpcClient, RpcError, decode_response
from tests.server.support import FIXTURE, GATED, server_env, wait_until


def _imported(log: Path) -> list[str]:
    return log.read_text().split() if log.exists() else []


async def test_first_session_requests_are_answered_before_pygls_loads(tmp_path: Path) -> None:
    gate, log = tmp_path / "gate", tmp_path / "imported.txt"
    session = tmp_path / "session.jsonl"
    session.write_bytes(FIXTURE.read_bytes())
    command = [sys.executable, "-c", GATED, str(gate), str(log)]
    client = await RpcClient.start(command, env=server_env(tmp_path / "agent"), quiet=True)
    try:
        await client.request(
            "initialize", {"processId": None, "rootUri": tmp_path.as_uri(), "capabilities": {}}, timeout=60
        )
        client.notify("initialized", {})
        listed = await client.request("pi/listSessions", {"cwd": str(tmp_path)}, timeout=60)
        opened = await client.request("pi/openSession", {"path": str(session)}, timeout=60)
        tree = await client.request("pi/getTree", {"format": "flat"}, timeout=60)
        assert isinstance(listed["sessions"], list)
        assert opened["entryCount"] == len(tree["nodes"]) > 0
        assert not gate.exists()  # all of that was answered while lsprotocol was held
        assert "anthropic" not in _imported(log)
        assert "regex" not in _imported(log)  # only a `re:` search needs it (15 ms of every start)
        # The summarisers (the client, compaction), the agent and checkpoints load when first used.
        for later in ("pi_lsp.llm.summarizer", "pi_lsp.agent.runner", "pi_lsp.checkpoints"):
            assert later not in _imported(log), f"{later} was imported for the first session requests"
        # Nor what an editor's start does not use: the command-line parser (`pi-lsp --stdio` is read
        # without it), temp files (random, hashlib), `secrets` (hmac), `decimal`, the reader of lines
        # nested too deep for orjson.
        for unused in ("argparse", "tempfile", "secrets", "decimal", "pi_lsp.session.deep_json"):
            assert unused not in _imported(log), f"{unused} was imported for the first session requests"

        gate.touch()  # now pygls loads and takes over: LSP requests work as before
        hover = await client.request(
            "textDocument/hover",
            {"textDocument": {"uri": (tmp_path / "x.py").as_uri()}, "position": {"line": 0, "character": 0}},
            timeout=60,
        )
        assert hover is None
        state = await client.request("pi/getSessionState", {}, timeout=60)
        assert state["sessionId"] == opened["sessionId"]
        # once pygls has the connection, what the first usage figure needs loads without a request
        await wait_until(lambda: {"pi_lsp.service.compaction", "tiktoken"} <= set(_imported(log)), 30)
    finally:
        gate.touch()
        code = await client.close(timeout=60)
    assert code == 0
    imported = _imported(log)
    assert "lsprotocol" in imported  # the hook saw the import it held
    # The collector is paused through start-up (its passes over the objects start-up makes, all of
    # which live on, are ~5 % of the first answer) and on again once pygls has the connection.
    assert "gc:start-up:off" in imported and "gc:served:on" in imported
    # pygls' takeover is prepared in the import thread, not on the event loop (where it kept every
    # request waiting ~0.2 s): the prompt service's modules are imported there too.
    assert "prompt-service:thread" in imported and "prompt-service:loop" not in imported
    # The tools package itself loads its tools on first use (a run's bookkeeping imports one small
    # module of it); the tools, and the prompt package they bring, are what must not load here.
    for heavy in (
        "anthropic",
        "pi_lsp.service.runs",
        "pi_lsp.agent.tools.registry",
        "pi_lsp.agent.tools.bash",
        "pi_lsp.prompt.skills",
        "pi_lsp.llm.stream",
    ):
        assert heavy not in imported, f"{heavy} was imported for session requests"


async def test_an_lsp_message_is_never_overtaken_by_later_requests(tmp_path: Path) -> None:
    """A message the start-up phase cannot answer holds every later one until pygls has it: here a
    configuration change the next ``pi/listSessions`` depends on (answered early, it would list the
    default folder, which is empty)."""
    gate, log = tmp_path / "gate", tmp_path / "imported.txt"
    configured = tmp_path / "configured"
    configured.mkdir()
    (configured / "session.jsonl").write_bytes(FIXTURE.read_bytes())
    command = [sys.executable, "-c", GATED, str(gate), str(log)]
    client = await RpcClient.start(command, env=server_env(tmp_path / "agent"), quiet=True)
    try:
        await client.request("initialize", {"processId": None, "capabilities": {}}, timeout=60)
        client.notify("initialized", {})
        settings = {"pi": {"sessionDir": str(configured)}}
        client.notify("workspace/didChangeConfiguration", {"settings": settings})
        _, listed = client.request_future("pi/listSessions", {"cwd": str(tmp_path)})
        gate.touch()
        sessions = decode_response(await asyncio.wait_for(listed, 60))["sessions"]
        assert [Path(info["path"]).name for info in sessions] == ["session.jsonl"]
    finally:
        gate.touch()
        code = await client.close(timeout=60)
    assert code == 0


async def test_a_request_answered_at_start_up_can_be_cancelled(tmp_path: Path) -> None:
    """``$/cancelRequest`` of a request the start-up phase is serving: -32800 at once, even behind a
    held message, instead of the 2 s a backtracking ``re:`` search takes to be refused."""
    gate, log = tmp_path / "gate", tmp_path / "imported.txt"
    sessions = tmp_path / "sessions"
    sessions.mkdir()
    header = {"type": "session", "version": 3, "id": "bt-1", "timestamp": "2026-01-01T00:00:00.000Z"}
    header["cwd"] = "/p"
    entry = {
        "type": "message",
        "id": "m1",
        "parentId": None,
        "timestamp": "2026-01-01T00:00:00.000Z",
        "message": {"role": "user", "content": "a" * 60, "timestamp": 1},
    }
    (sessions / "bt.jsonl").write_bytes(orjson.dumps(header) + b"\n" + orjson.dumps(entry) + b"\n")
    command = [sys.executable, "-c", GATED, str(gate), str(log)]
    env = server_env(tmp_path / "agent", PI_CODING_AGENT_SESSION_DIR=str(sessions))
    client = await RpcClient.start(command, env=env, quiet=True)
    try:
        await client.request("initialize", {"processId": None, "capabilities": {}}, timeout=60)
        search = {"cwd": "/p", "query": "re:(a|aa)+z"}  # exponential for a backtracking engine
        first_id, first = client.request_future("pi/listSessions", search)
        client.notify("$/cancelRequest", {"id": first_id})
        with pytest.raises(RpcError) as cancelled:
            decode_response(await asyncio.wait_for(first, 60))
        assert cancelled.value.code == -32800
        # behind a message held for pygls (this hover), a cancel still reaches the search it names
        second_id, second = client.request_future("pi/listSessions", search)
        _, hover = client.request_future(
            "textDocument/hover",
            {"textDocument": {"uri": (tmp_path / "x.py").as_uri()}, "position": {"line": 0, "character": 0}},
        )
        client.notify("$/cancelRequest", {"id": second_id})
        with pytest.raises(RpcError) as behind:
            decode_response(await asyncio.wait_for(second, 60))
        assert behind.value.code == -32800
        assert not gate.exists() and not hover.done()  # all of that before pygls
        gate.touch()
        assert decode_response(await asyncio.wait_for(hover, 60)) is None
    finally:
        gate.touch()
        code = await client.close(timeout=60)
    assert code == 0


class _Sink:
    def write(self, data: bytes) -> None:
        pass

    def close(self) -> None:
        pass


async def test_pygls_takes_over_with_the_converter_made_ahead(tmp_path: Path) -> None:
    """At takeover pygls gets the converter the import thread made ready for the held
    ``initialize``; the replay of that ``initialize`` (applied by the start-up phase, and not
    unstructured again) still picks up a workspace settings edit made meanwhile."""
    from pi_lsp.server.app import create_language_server, ready_converter
    from pi_lsp.server.initialize import apply_initialize
    from pi_lsp.service.build import build_service
    from pi_lsp.service.registry import Client

    params = {"processId": None, "rootUri": tmp_path.as_uri(), "capabilities": {"general": {}}}
    message = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params}
    service = build_service()
    try:
        client = Client()
        service.connect(client)
        await apply_initialize(client, params)  # what the start-up phase does
        assert client.settings.queue_modes[0] == "one-at-a-time"
        (tmp_path / ".pi").mkdir()
        (tmp_path / ".pi" / "settings.json").write_text('{"steeringMode": "all"}')
        converter = ready_converter(message)
        server, _ = create_language_server(service, client, converter)
        assert server.protocol._converter is converter
        server.protocol.set_writer(_Sink())
        server.protocol.receive(orjson.dumps(message))  # the replay
        for _ in range(500):
            if client.settings.queue_modes[0] == "all":
                break
            await asyncio.sleep(0.01)
        assert client.settings.queue_modes[0] == "all"
    finally:
        await service.close()
