"""Byte-level protocol behaviour: requests without params, malformed messages, cancellation,
startup time and secrets, with the tiny JSON-RPC client so every byte sent is under control."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest

from pi_lsp.client.rpc_client import RpcClient, RpcError, decode_response
from pi_lsp.protocol import METHOD_NAMES, NOTIFICATION_NAMES, PROTOCOL_VERSION
from tests.server.support import SERVER, server_env, start_raw, user, write_linear_session

ALL_METHODS = list(METHOD_NAMES)
NO_PARAMS_OK = {"pi/newSession", "pi/continueRecent", "pi/listSessions"}


async def test_requests_without_params_are_always_answered(tmp_path: Path) -> None:
    client = await start_raw(tmp_path)
    try:
        for number, method in enumerate(ALL_METHODS):
            for variant, extra in (("omitted", b""), ("null", b', "params": null')):
                msg_id = f"{variant}-{number}"
                future = client.expect(msg_id)
                client.send_bytes(
                    b'{"jsonrpc": "2.0", "id": "%b", "method": "%b"%b}'
                    % (msg_id.encode(), method.encode(), extra)
                )
                body = await asyncio.wait_for(future, 10)
                message = orjson.loads(body)
                assert "result" in message or "error" in message, method
                if method not in NO_PARAMS_OK and "error" in message:
                    assert message["error"]["code"] in (-32602, -32001, -32601), (method, message)
        # params that are not an object
        for params in ([1, 2], "text", 3):
            with pytest.raises(RpcError) as info:
                await client.request("pi/getTree", params)
            assert info.value.code == -32602 and info.value.message == "params must be an object"
        await client.request("pi/newSession", {})
        assert (await client.request("pi/getSessionState", {}))["entryCount"] == 0
    finally:
        await client.close()


async def test_malformed_messages(tmp_path: Path) -> None:
    client = await start_raw(tmp_path)
    try:
        cases: list[tuple[bytes, int]] = [
            (b"{not json", -32700),
            (b"[1, 2]", -32600),
            (b'"just a string"', -32600),
            (b'{"jsonrpc": "2.0", "id": {"x": 1}, "method": "pi/getTree"}', -32600),
            (b'{"jsonrpc": "2.0", "id": true, "method": "pi/getTree"}', -32600),
        ]
        for body, code in cases:
            future = client.expect(None)
            client.send_bytes(body)
            with pytest.raises(RpcError) as info:
                decode_response(await asyncio.wait_for(future, 10))
            assert info.value.code == code, body
        for body, msg_id, code in [
            (b'{"id": 7, "method": "pi/getTree"}', 7, -32600),  # no jsonrpc member
            (b'{"jsonrpc": "2.0", "id": 8, "method": 5}', 8, -32600),
            (b'{"jsonrpc": "2.0", "id": 9}', 9, -32600),
            (b'{"jsonrpc": "2.0", "id": 10, "method": "pi/unknownMethod", "params": {}}', 10, -32601),
            (
                b'{"jsonrpc": "2.0", "id": 11, "method": "workspace/executeCommand", "params": {"x": 1}}',
                11,
                -32602,
            ),
            (b'{"jsonrpc": "2.0", "id": "s", "method": "initialized", "params": {}}', "s", -32600),
        ]:
            future = client.expect(msg_id)
            client.send_bytes(body)
            with pytest.raises(RpcError) as info:
                decode_response(await asyncio.wait_for(future, 10))
            assert info.value.code == code, body
        # notifications are never answered, whatever they carry
        client.send_bytes(b'{"jsonrpc": "2.0", "method": "pi/whatever", "params": [1]}')
        client.send_bytes(b'{"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": {"bad": 1}}}')
        # params whose objects contain "jsonrpc" keys are just data
        entry = {
            "type": "custom",
            "customType": "x",
            "data": {"jsonrpc": "2.0", "id": 1, "method": "m", "from": 1},
        }
        await client.request("pi/newSession", {})
        result = await client.request("pi/appendEntry", {"entry": entry})
        assert result["entry"]["data"] == entry["data"]
        assert (await client.request("pi/getSessionState", {}))["entryCount"] == 1
    finally:
        await client.close()


async def test_requests_after_shutdown_are_refused_and_exit_code(tmp_path: Path) -> None:
    client = await start_raw(tmp_path)
    assert await client.request("shutdown", None, omit_params=True) is None
    with pytest.raises(RpcError) as info:
        await client.request("pi/listSessions", {})
    assert info.value.code == -32600
    client.notify("exit")
    assert await asyncio.wait_for(client.process.wait(), 10) == 0


async def test_two_shutdowns_in_flight_are_both_answered(tmp_path: Path) -> None:
    """Neovim 0.7 sends shutdown twice when it quits; pygls' own shutdown crashed on that."""
    client = await start_raw(tmp_path)
    _, first = client.request_future("shutdown", None, omit_params=True)
    _, second = client.request_future("shutdown", None, omit_params=True)
    for answer in await asyncio.wait_for(asyncio.gather(first, second), 10):
        assert decode_response(answer) is None
    client.notify("exit")
    assert await asyncio.wait_for(client.process.wait(), 10) == 0


@pytest.mark.parametrize("pause", [0.0, 0.01])
async def test_editor_gone_during_two_shutdowns_logs_no_traceback(tmp_path: Path, pause: float) -> None:
    """Neovim gives the server 500 ms to shut down, then goes: the end of input arrives while both
    shutdowns are still running, and the server ends without a traceback in its log."""
    log_file = tmp_path / "server.log"
    command = [*SERVER, "--log-file", str(log_file), "--log-level", "info"]
    client = await RpcClient.start(command, env=server_env(tmp_path / "agent"), quiet=True)
    await client.initialize(str(tmp_path))
    await client.request("pi/newSession", {"sessionDir": str(tmp_path / "sessions")})
    client.request_future("shutdown", None, omit_params=True)
    client.request_future("shutdown", None, omit_params=True)
    await asyncio.sleep(pause)
    client.writer.close()
    await asyncio.wait_for(client.process.wait(), 10)
    text = log_file.read_text()
    assert "Traceback" not in text and "ERROR" not in text, text[-3000:]


@contextlib.contextmanager
def one_write(client: RpcClient) -> Iterator[None]:
    """The messages sent inside go out as one write (the server reads them in one go)."""
    frames: list[bytes] = []
    client.send_bytes = lambda body: frames.append(b"Content-Length: %d\r\n\r\n%b" % (len(body), body))  # type: ignore[method-assign]
    try:
        yield
    finally:
        del client.send_bytes
        client.writer.write(b"".join(frames))


async def test_cancel_request_writes_nothing(tmp_path: Path) -> None:
    file = write_linear_session(tmp_path / "big.jsonl", 30_000)
    client = await start_raw(tmp_path)
    try:
        # pygls' cancel is what is tested: a request the start-up phase holds (getServerStatus is
        # not one it answers) is answered once pygls has the connection; the getTrees below would
        # otherwise be answered by the start-up phase and may end before pygls receives the append.
        await client.request("pi/getServerStatus", {})
        state = await client.request("pi/openSession", {"path": str(file)})
        size = file.stat().st_size
        with one_write(client):  # all five arrive together: the append waits behind the trees
            slow = [client.request_future("pi/getTree", {})[1] for _ in range(3)]  # the session is busy
            msg_id, append = client.request_future("pi/appendEntry", {"entry": user("never written")})
            client.notify("$/cancelRequest", {"id": msg_id})
        with pytest.raises(RpcError) as info:
            decode_response(await asyncio.wait_for(append, 60))
        assert info.value.code == -32800
        await asyncio.gather(*slow)
        after = await client.request("pi/getSessionState", {})
        assert after["entryCount"] == state["entryCount"] and after["leafId"] == state["leafId"]
        assert file.stat().st_size == size
        # a cancel for a request that already finished changes nothing
        msg_id, done = client.request_future("pi/getEntry", {"id": state["leafId"]})
        await done
        client.notify("$/cancelRequest", {"id": msg_id})
        assert (await client.request("pi/getSessionState", {}))["entryCount"] == state["entryCount"]
    finally:
        await client.close()


async def test_initialize_is_answered_quickly_and_describes_the_protocol(tmp_path: Path) -> None:
    started = time.perf_counter()
    client = await RpcClient.start(SERVER, env=server_env(tmp_path / "agent"), quiet=True)
    try:
        result = await client.request("initialize", {"processId": None, "capabilities": {}})
        elapsed = time.perf_counter() - started
        assert elapsed < 2.0  # typically ~0.15 s; generous for slow CI machines
        pi = result["capabilities"]["experimental"]["pi"]
        assert pi["methods"] == list(METHOD_NAMES) and pi["reservedMethods"] == []
        assert pi["protocolVersion"] == PROTOCOL_VERSION == 3 and pi["notifications"] == list(
            NOTIFICATION_NAMES
        )
        assert pi["getTreeOptions"] == ["parentId", "fold"]
        assert pi["getBranchOptions"] == ["limit", "beforeId"]
        assert result["serverInfo"]["name"] == "pi-lsp"
        client.notify("initialized", {})
        assert (await client.request("pi/listSessions", {}))["sessions"] == []
    finally:
        await client.close()


async def test_bad_initialize_gets_an_error(tmp_path: Path) -> None:
    client = await RpcClient.start(SERVER, env=server_env(tmp_path / "agent"), quiet=True)
    try:
        with pytest.raises(RpcError) as info:
            await client.request("initialize", None, omit_params=True)
        assert info.value.code == -32602
    finally:
        await client.close()


async def test_api_key_never_reaches_logs_or_errors(tmp_path: Path) -> None:
    secret = "sk-ant-api03-" + "s3cr3t" * 8
    log_file = tmp_path / "server.log"
    client = await RpcClient.start(
        [*SERVER, "--log-level", "debug", "--log-file", str(log_file)],
        env=server_env(tmp_path / "agent", ANTHROPIC_API_KEY=secret),
        quiet=True,
    )
    try:
        await client.initialize(str(tmp_path), {"pi": {"model": secret}})
        errors = []
        for method, params in [
            ("pi/forkSession", {"sourcePath": str(tmp_path / secret)}),
            ("pi/getEntry", {"session": secret, "id": secret}),
            ("pi/openSession", {"path": str(tmp_path)}),
        ]:
            try:
                await client.request(method, params)
            except RpcError as error:
                errors.append(f"{error.message} {error.data}")
        client.send_bytes(
            b'{"jsonrpc": "2.0", "id": 99, "method": "workspace/executeCommand", "params": {"k": "'
            + secret.encode()
            + b'"}}'
        )
        await asyncio.wait_for(client.expect(99), 10)
    finally:
        await client.close()
    assert errors and all(secret not in text for text in errors)
    log = log_file.read_text()
    assert log and secret not in log


async def test_a_request_id_beyond_64_bits_is_answered_with_it(tmp_path: Path) -> None:
    """JSON-RPC ids are any JSON number; orjson refuses integers beyond 64 bits, so they are written
    as their digits, also around stored lines and a context written from its pieces (which the
    standard library's fallback could not write: the answer was an internal error)."""
    path = write_linear_session(tmp_path / "s.jsonl", 3)
    client = await start_raw(tmp_path)
    try:
        await client.request("pi/openSession", {"path": str(path)})
        answers = {}
        for number, method in enumerate(("pi/buildContext", "pi/getEntries", "pi/getSessionState")):
            msg_id = (1 << 70) + number
            future = client.expect(msg_id)
            client.send_bytes(
                b'{"jsonrpc":"2.0","id":%d,"method":"%b","params":{}}' % (msg_id, method.encode())
            )
            message = json.loads(await asyncio.wait_for(future, 10))
            assert message["id"] == msg_id and "result" in message, message
            answers[method] = message["result"]
        assert [m["role"] for m in answers["pi/buildContext"]["messages"]] == ["user", "assistant", "user"]
        assert len(answers["pi/getEntries"]["entries"]) == 3
    finally:
        await client.close()
