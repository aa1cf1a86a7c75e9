"""The model client's own HTTP/1.1 (``llm/http1.py``) against raw loopback servers: every body
framing, bytes arriving one at a time, kept-alive connections and when they are not reused, cut
bodies, timeouts, malformed answers, TLS, and the clients that keep httpx2's transport."""

from __future__ import annotations

import asyncio
import gzip
import http.server
import ssl
import threading
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import httpx2
import pytest

from pi_lsp.llm.anthropic_client import create_async_client
from pi_lsp.llm.http1 import DirectHTTP1, body_parts, use_direct_http1
from tests.llm.loopback import server_tls, serving

Answer = Callable[["Server", asyncio.StreamWriter, int, bytes, bytes], Awaitable[bool]]
"""Writes the response to a request (the server, the writer, the request's number, head and body);
False closes the connection afterwards."""


class Server:
    """Reads each request (its head, and a body by length or chunked), then runs ``answer``."""

    def __init__(self, answer: Answer) -> None:
        self.answer = answer
        self.connections = 0
        self.requests: list[tuple[bytes, bytes]] = []

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            while True:
                try:
                    head = await reader.readuntil(b"\r\n\r\n")
                except asyncio.IncompleteReadError:
                    return
                body = await _request_body(reader, head.lower())
                self.requests.append((head, body))
                if not await self.answer(self, writer, len(self.requests), head, body):
                    return
        except (ConnectionError, asyncio.IncompleteReadError):
            return
        finally:
            writer.close()


async def _request_body(reader: asyncio.StreamReader, head: bytes) -> bytes:
    if b"transfer-encoding: chunked" in head:
        body = b""
        while size := int((await reader.readline()).strip(), 16):
            body += await reader.readexactly(size)
            await reader.readexactly(2)
        await reader.readexactly(2)
        return body
    for line in head.split(b"\r\n"):
        if line.startswith(b"content-length:"):
            return await reader.readexactly(int(line.split(b":")[1]))
    return b""


def replying(*pieces: bytes, keep: bool = True, pause: float = 0.0) -> Answer:
    """An answer that writes ``pieces`` (each drained, ``pause`` apart) to every request."""

    async def answer(_server: Server, writer: asyncio.StreamWriter, *_request: object) -> bool:
        for piece in pieces:
            writer.write(piece)
            await writer.drain()
            if pause:
                await asyncio.sleep(pause)
        return keep

    return answer


def one_byte_at_a_time(response: bytes) -> list[bytes]:
    return [response[i : i + 1] for i in range(len(response))]


CHUNKED = (
    b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
    b"6;name=value\r\nevent:\r\n"  # a chunk extension
    b'15\r\n data: {"a": "\xe2\x80\xa8"}\n\n\r\n'  # U+2028 inside: bytes, not lines, at this layer
    b"A\r\n0123456789\r\n"
    b"0\r\nX-Trailer: yes\r\n\r\n"
)
CHUNKED_BODY = b'event: data: {"a": "\xe2\x80\xa8"}\n\n0123456789'


async def fetch(client: httpx2.AsyncClient, url: str, **kwargs: object) -> tuple[httpx2.Response, bytes]:
    response = await client.request("POST", url, content=b"{}", **kwargs)  # type: ignore[arg-type]
    return response, response.content


def direct(timeout: float = 5.0, **kwargs: object) -> httpx2.AsyncClient:
    return httpx2.AsyncClient(transport=DirectHTTP1(ssl.create_default_context(), **kwargs), timeout=timeout)  # type: ignore[arg-type]


@pytest.mark.parametrize("split", [False, True], ids=["whole", "byte-by-byte"])
async def test_a_chunked_body_with_extensions_and_trailers_is_read_and_its_connection_kept(
    split: bool,
) -> None:
    server = Server(replying(*(one_byte_at_a_time(CHUNKED) if split else [CHUNKED])))
    async with serving(server.handle) as port, direct() as client:
        for _ in range(3):
            response, body = await fetch(client, f"http://127.0.0.1:{port}/v1/messages")
            assert (response.status_code, body) == (200, CHUNKED_BODY)
            assert response.headers["content-type"] == "text/event-stream"
    assert server.connections == 1, "one kept-alive connection for the three requests"
    assert [body for _head, body in server.requests] == [b"{}"] * 3


@pytest.mark.parametrize("coded", [False, True], ids=["plain", "gzip"])
async def test_body_parts_reads_this_transports_body_itself_unless_it_is_coded(coded: bool) -> None:
    """``body_parts`` (what a streamed reply is read with) gives the parts straight from the
    transport, or httpx's decoded bytes for a coded body; either way the connection is kept."""
    body = gzip.compress(CHUNKED_BODY) if coded else CHUNKED_BODY
    coding = b"Content-Encoding: gzip\r\n" if coded else b""
    chunks = b"".join(
        b"%x\r\n%b\r\n" % (len(body[i : i + 7]), body[i : i + 7]) for i in range(0, len(body), 7)
    )
    response = b"HTTP/1.1 200 OK\r\n" + coding + b"Transfer-Encoding: chunked\r\n\r\n" + chunks + b"0\r\n\r\n"
    server = Server(replying(response))
    async with serving(server.handle) as port, direct() as client:
        for _ in range(2):
            request = client.build_request("POST", f"http://127.0.0.1:{port}/", content=b"{}")
            streamed = await client.send(request, stream=True)
            parts = [part async for part in body_parts(streamed)]
            await streamed.aclose()
            assert b"".join(parts) == CHUNKED_BODY
            if not coded:
                assert parts == [CHUNKED_BODY[i : i + 7] for i in range(0, len(CHUNKED_BODY), 7)]
    assert server.connections == 1


async def test_a_streamed_body_arrives_part_by_part_before_its_end() -> None:
    release = asyncio.Event()

    async def answer(_server: Server, writer: asyncio.StreamWriter, *_request: object) -> bool:
        writer.write(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nfirst\r\n")
        await writer.drain()
        await release.wait()
        writer.write(b"6\r\nsecond\r\n0\r\n\r\n")
        await writer.drain()
        return True

    async with (
        serving(Server(answer).handle) as port,
        direct() as client,
        client.stream("POST", f"http://127.0.0.1:{port}/", content=b"x") as response,
    ):
        parts = response.aiter_bytes()
        assert await anext(parts) == b"first"  # before the server sends the rest
        release.set()
        assert [part async for part in parts] == [b"second"]


@pytest.mark.parametrize(
    ("response", "body", "kept"),
    [
        (b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello", b"hello", True),
        (b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n", b"", True),
        (b"HTTP/1.1 204 No Content\r\n\r\n", b"", True),
        (b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", b"ok", True),
        (b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok", b"ok", False),
        (b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok", b"ok", False),
        (b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\nConnection: keep-alive\r\n\r\nok", b"ok", True),
        (
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 99\r\n\r\n"
            b"2\r\nok\r\n0\r\n\r\n",
            b"ok",
            True,
        ),
        (b"HTTP/1.1 200 OK\nContent-Length: 2\n\nok", b"ok", True),  # bare line ends, as h11 reads them
        (b"HTTP/1.1 200 OK\nTransfer-Encoding: chunked\n\n2\nok\n3;x=1\nabc\n0\n\n", b"okabc", True),
        (
            b"HTTP/1.1 200 OK\r\nX-Long: a\r\n  b\r\nContent-Length: 2\r\n\r\nok",
            b"ok",
            True,
        ),  # a folded header
    ],
    ids=[
        "length",
        "empty",
        "204",
        "100-continue",
        "close",
        "http-1.0",
        "1.0-keep-alive",
        "chunked-wins",
        "bare-lf",
        "bare-lf-chunked",
        "folded",
    ],
)
async def test_each_framing_gives_its_body_and_keeps_the_connection_when_it_may(
    response: bytes, body: bytes, kept: bool
) -> None:
    server = Server(replying(response))
    async with serving(server.handle) as port, direct() as client:
        for _ in range(2):
            _response, content = await fetch(client, f"http://127.0.0.1:{port}/")
            assert content == body
    assert server.connections == (1 if kept else 2)


async def test_a_body_that_ends_with_the_connection_is_read_to_its_end_and_not_reused() -> None:
    server = Server(replying(b"HTTP/1.1 200 OK\r\n\r\n", b"until ", b"the end", keep=False, pause=0.01))
    async with serving(server.handle) as port, direct() as client:
        for _ in range(2):
            _response, content = await fetch(client, f"http://127.0.0.1:{port}/")
            assert content == b"until the end"
    assert server.connections == 2


async def test_a_head_request_has_no_body_whatever_its_length_says() -> None:
    server = Server(replying(b"HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\n"))
    async with serving(server.handle) as port, direct() as client:
        for _ in range(2):
            response = await client.head(f"http://127.0.0.1:{port}/")
            assert (response.status_code, response.content) == (200, b"")
    assert server.connections == 1


async def test_an_idle_connection_the_server_closed_is_not_used_again() -> None:
    server = Server(replying(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", keep=False))
    async with serving(server.handle) as port, direct() as client:
        await fetch(client, f"http://127.0.0.1:{port}/")
        await asyncio.sleep(0.05)  # the close reaches the idle connection
        _response, content = await fetch(client, f"http://127.0.0.1:{port}/")
        assert content == b"ok"
    assert server.connections == 2


async def test_an_idle_connection_past_its_expiry_is_closed_and_a_new_one_opened() -> None:
    server = Server(replying(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"))
    async with serving(server.handle) as port, direct(keepalive_expiry=0.01) as client:
        await fetch(client, f"http://127.0.0.1:{port}/")
        await asyncio.sleep(0.05)
        await fetch(client, f"http://127.0.0.1:{port}/")
    assert server.connections == 2


async def test_a_response_closed_before_its_end_closes_its_connection() -> None:
    server = Server(
        replying(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nfirst\r\n", pause=0.01)
    )
    async with serving(server.handle) as port, direct() as client:
        for _ in range(2):
            async with client.stream("POST", f"http://127.0.0.1:{port}/", content=b"x") as response:
                assert await anext(response.aiter_bytes()) == b"first"
    assert server.connections == 2


async def test_a_request_body_of_unknown_length_is_sent_chunked() -> None:
    server = Server(replying(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"))

    async def parts() -> AsyncIterator[bytes]:
        for part in (b"one ", b"", b"two"):
            yield part

    async with serving(server.handle) as port, direct() as client:
        response = await client.post(f"http://127.0.0.1:{port}/", content=parts())
        assert response.status_code == 200
    head, body = server.requests[0]
    assert b"transfer-encoding: chunked" in head.lower()
    assert body == b"one two"


@pytest.mark.parametrize(
    ("pieces", "error"),
    [
        ([b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n9\r\nabc"], "incomplete chunked read"),
        ([b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc"], "7 bytes of the body missing"),
        (
            [b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n"],
            "closed the connection in a chunk size",
        ),
        ([b""], "Server disconnected without sending a response"),
        ([b"SMTP ready\r\n\r\n"], "no HTTP/1.1 status line"),
        ([b"HTTP/1.1 200 OK\r\nno colon here\r\n\r\n"], "malformed header"),
        ([b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nok"], "bad Content-Length"),
        ([b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0x2\r\nok\r\n0\r\n\r\n"], "bad chunk size"),
        ([b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1_0\r\n"], "bad chunk size"),
        (
            [b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nokay\r\n0\r\n\r\n"],
            "longer than its size",
        ),
    ],
    ids=[
        "cut-chunk",
        "cut-length",
        "no-last-chunk",
        "no-response",
        "not-http",
        "header",
        "two-lengths",
        "hex-prefix",
        "underscore",
        "long-chunk",
    ],
)
async def test_a_cut_or_malformed_answer_is_a_protocol_error(pieces: list[bytes], error: str) -> None:
    server = Server(replying(*pieces, keep=False))
    async with serving(server.handle) as port, direct() as client:
        with pytest.raises(httpx2.RemoteProtocolError, match=error):
            await fetch(client, f"http://127.0.0.1:{port}/")


async def test_an_oversized_head_is_refused() -> None:
    server = Server(replying(b"HTTP/1.1 200 OK\r\nX-Big: " + b"a" * 300_000 + b"\r\n\r\n"))
    async with serving(server.handle) as port, direct() as client:
        with pytest.raises(httpx2.RemoteProtocolError, match="over"):
            await fetch(client, f"http://127.0.0.1:{port}/")


async def test_silence_is_a_read_timeout_and_a_refused_port_a_connect_error() -> None:
    async def silent(_server: Server, writer: asyncio.StreamWriter, *_request: object) -> bool:
        await asyncio.sleep(5)
        return False

    async with serving(Server(silent).handle) as port, direct(timeout=0.2) as client:
        with pytest.raises(httpx2.ReadTimeout):
            await fetch(client, f"http://127.0.0.1:{port}/")
    async with direct() as client:
        with pytest.raises(httpx2.ConnectError):
            await fetch(client, f"http://127.0.0.1:{port}/")  # the server is gone


async def test_https_verifies_the_certificate_and_keeps_the_connection(
    certificate: tuple[Path, Path],
) -> None:
    cert, key = certificate
    server_side = server_tls(cert, key)
    server = Server(replying(CHUNKED))
    async with serving(server.handle, tls=server_side) as port:
        transport = DirectHTTP1(ssl.create_default_context(cafile=str(cert)))
        async with httpx2.AsyncClient(transport=transport, timeout=5) as client:
            for _ in range(2):
                response, body = await fetch(client, f"https://localhost:{port}/v1/messages")
                assert body == CHUNKED_BODY
                assert response.extensions["network_stream"].get_extra_info("ssl_object") is not None
        assert server.connections == 1
        async with direct() as client:  # the system's trust store does not know this certificate
            with pytest.raises(httpx2.ConnectError):
                await fetch(client, f"https://localhost:{port}/")


def test_the_sdk_client_takes_it_unless_told_to_keep_httpx(monkeypatch: pytest.MonkeyPatch) -> None:
    url = "http://127.0.0.1:9"
    assert isinstance(create_async_client("sk-test", url)._client._transport, DirectHTTP1)
    monkeypatch.setenv("PI_LSP_HTTP", "httpx")
    assert isinstance(create_async_client("sk-test", url)._client._transport, httpx2.AsyncHTTPTransport)


def test_clients_it_cannot_stand_for_keep_their_transport() -> None:
    assert not use_direct_http1(object())
    for kind in (dict(http2=True), dict(uds="/tmp/socket"), dict(retries=2)):
        client = httpx2.AsyncClient(transport=httpx2.AsyncHTTPTransport(**kind))  # type: ignore[arg-type]
        assert not use_direct_http1(client)
        assert isinstance(client._transport, httpx2.AsyncHTTPTransport)


def test_a_client_used_again_under_another_event_loop_opens_a_new_connection() -> None:
    """A kept connection belongs to the loop that opened it (a CLI command may run a client under
    two ``asyncio.run`` calls): the next loop opens its own instead of writing to a dead one."""
    connections: list[object] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keeps the connection open between requests

        def setup(self) -> None:
            connections.append(self)
            super().setup()

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers["Content-Length"]))
            self.send_response(200)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"ok")

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    client = direct()
    url = f"http://127.0.0.1:{server.server_address[1]}/"
    try:
        for _ in range(2):  # without the check the second hung, writing to the first loop's socket
            assert asyncio.run(asyncio.wait_for(fetch(client, url), 10))[1] == b"ok"
    finally:
        server.shutdown()
        server.server_close()
    assert len(connections) == 2
