"""TCP and WebSocket: several editors share the sessions, each with its own active session."""

from __future__ import annotations

import asyncio
import importlib.util
from pathlib import Path

import orjson
import pytest

from pi_lsp.client.rpc_client import RpcClient, RpcError
from tests.server.network_support import run_server, start_network_server
from tests.server.support import user


async def test_tcp_clients_share_sessions_but_not_the_active_one(tmp_path: Path) -> None:
    server = await start_network_server(tmp_path, "--tcp")
    host, port, token = server.host, server.port, server.token
    first = await RpcClient.connect(host, port, token)
    second = await RpcClient.connect(host, port, token)
    try:
        await first.initialize(str(tmp_path))
        await second.initialize(str(tmp_path))
        state = await first.request("pi/newSession", {})
        with pytest.raises(RpcError) as info:
            await second.request("pi/getSessionState", {})
        assert info.value.code == -32001  # the second editor has no active session yet
        assert (await second.request("pi/getSessionState", {"session": state["sessionId"]}))[
            "entryCount"
        ] == 0
        appended = await second.request("pi/appendEntry", {"entry": user("hello from two")})  # now active
        for client in (first, second):
            change = await client.next_notification("pi/sessionChanged")
            assert change["appendedIds"] == [appended["id"]] and change["reason"] == "append"
        # exit closes one connection; the server keeps serving the other
        await first.request("shutdown", None, omit_params=True)
        first.notify("exit")
        assert (await second.request("pi/getSessionState", {}))["entryCount"] == 1
        third = await RpcClient.connect(host, port, token)
        await third.initialize(str(tmp_path))
        assert (await third.request("pi/listSessions", {}))["sessions"] == []  # nothing flushed yet
        await third.close()
    finally:
        await second.close()
        await first.close()
        await server.stop()


@pytest.mark.skipif(importlib.util.find_spec("websockets") is None, reason="websockets is not installed")
async def test_websocket_transport(tmp_path: Path) -> None:
    from websockets.asyncio.client import connect

    server = await start_network_server(tmp_path, "--ws")
    try:
        async with connect(f"ws://{server.host}:{server.port}") as socket:

            async def call(msg_id: int, method: str, params: object) -> dict[str, object]:
                await socket.send(
                    orjson.dumps(
                        {"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params}
                    ).decode()
                )
                while True:
                    message = orjson.loads(await asyncio.wait_for(socket.recv(), 10))
                    if message.get("id") == msg_id:
                        return message  # type: ignore[no-any-return]

            init = await call(
                1,
                "initialize",
                {
                    "processId": None,
                    "capabilities": {},
                    "rootUri": tmp_path.as_uri(),
                    "initializationOptions": {"pi": {"token": server.token}},
                },
            )
            assert init["result"]["serverInfo"]["name"] == "pi-lsp"  # type: ignore[index]
            state = await call(2, "pi/newSession", {})
            assert state["result"]["entryCount"] == 0  # type: ignore[index]
            missing = await call(3, "pi/getEntry", None)
            assert missing["error"]["code"] == -32602  # type: ignore[index]
    finally:
        await server.stop()


def test_ws_without_websockets_or_bad_address_fails_cleanly(tmp_path: Path) -> None:
    result = run_server(tmp_path, "--tcp", "nonsense")
    assert result.returncode != 0 and "HOST:PORT" in result.stderr
