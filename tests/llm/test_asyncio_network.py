"""The model client's sockets on plain asyncio (``llm/asyncio_network.py``): the SDK's pools take the
backend, a streamed reply is read through it, and its edges (timeouts, resets, closes, a large body,
TLS) raise httpcore's own errors, as anyio's backend did."""

from __future__ import annotations

import asyncio
import socket
import ssl
from pathlib import Path

import httpcore2
import pytest

from pi_lsp.llm.anthropic_client import create_async_client
from pi_lsp.llm.asyncio_network import AsyncioNetwork, AsyncioStream, use_asyncio_network
from pi_lsp.llm.http1 import DirectHTTP1
from tests.llm.fake_anthropic import FakeAnthropic, Reply, text_stream
from tests.llm.loopback import server_tls, serving


def _pools(client: object) -> list[object]:
    """The client's httpcore pools: its proxies' mounts (its own transport is ``http1.py``'s)."""
    http = client._client  # type: ignore[attr-defined]
    transports = [http._transport, *http._mounts.values()]
    return [transport._pool for transport in transports if hasattr(transport, "_pool")]


async def test_the_sdk_client_streams_a_reply_through_the_asyncio_backend(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    reads = 0
    real_read = AsyncioStream.read

    async def counted(self: AsyncioStream, max_bytes: int, timeout: float | None = None) -> bytes:
        nonlocal reads
        reads += 1
        return await real_read(self, max_bytes, timeout)

    monkeypatch.setattr(AsyncioStream, "read", counted)
    async with FakeAnthropic(
        [Reply(events=text_stream("Hello from the loopback.", "Second block."))]
    ) as fake:
        client = create_async_client("sk-test", fake.url, max_retries=0)
        assert isinstance(client._client._transport, DirectHTTP1)  # its connections are this backend's
        texts: list[str] = []
        async with client.messages.stream(
            model="claude-test", max_tokens=100, messages=[{"role": "user", "content": "hi"}]
        ) as stream:
            async for text in stream.text_stream:
                texts.append(text)
        assert "".join(texts) == "Hello from the loopback.Second block."
        assert reads > 0
        await client.close()


def test_a_proxy_from_the_environment_keeps_its_pool_and_gets_the_backend_too(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("HTTPS_PROXY", "http://127.0.0.1:9")
    client = create_async_client("sk-test", "https://api.example.test")
    pools = _pools(client)
    assert pools, "the environment's proxy is mounted (the SDK's own client, not one of ours)"
    assert isinstance(client._client._transport, DirectHTTP1)  # what no proxy reaches
    assert any(isinstance(pool, httpcore2.AsyncHTTPProxy) for pool in pools)
    assert all(isinstance(pool._network_backend, AsyncioNetwork) for pool in pools)  # type: ignore[attr-defined]


def test_an_unknown_client_layout_is_left_alone() -> None:
    assert use_asyncio_network(object()) == 0


async def test_a_read_that_waits_past_its_timeout_is_a_read_timeout() -> None:
    async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read()  # says nothing until the client goes

    async with serving(silent) as port:
        stream = await AsyncioNetwork().connect_tcp("127.0.0.1", port, timeout=5)
        with pytest.raises(httpcore2.ReadTimeout):
            await stream.read(1024, timeout=0.2)
        # The connection is still usable after a timeout: a later read waits again.
        with pytest.raises(httpcore2.ReadTimeout):
            await stream.read(1024, timeout=0.05)
        await stream.aclose()


async def test_each_wait_has_its_own_timeout_from_when_it_starts() -> None:
    """The waits of one connection share a timer (``_Buffered.arrival``): a deadline moves with
    each wait, a longer one after a shorter one is not cut short, a shorter one after a longer one
    is not kept waiting."""
    more = asyncio.Event()

    async def trickle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        for _ in range(6):  # 0.6 s in all, longer than one wait's timeout
            writer.write(b"x")
            await writer.drain()
            await asyncio.sleep(0.1)
        await more.wait()
        writer.write(b"y")
        await writer.drain()
        await reader.read()

    async with serving(trickle) as port:
        stream = await AsyncioNetwork().connect_tcp("127.0.0.1", port, timeout=5)
        received = b""
        while len(received) < 6:
            received += await stream.read(1024, timeout=0.3)
        assert received == b"xxxxxx"
        with pytest.raises(httpcore2.ReadTimeout):
            await asyncio.wait_for(stream.read(1024, timeout=0.05), 2)
        asyncio.get_running_loop().call_later(0.2, more.set)  # after the short wait's deadline
        assert await stream.read(1024, timeout=5) == b"y"
        with pytest.raises(httpcore2.ReadTimeout):  # the 5 s wait's timer is pending; this one is 0.1 s
            await asyncio.wait_for(stream.read(1024, timeout=0.1), 2)
        await stream.aclose()


async def test_a_refused_connection_is_a_connect_error() -> None:
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(httpcore2.ConnectError):
        await AsyncioNetwork().connect_tcp("127.0.0.1", port, timeout=5)


async def test_a_clean_close_reads_as_the_end_and_a_reset_as_a_read_error() -> None:
    async def answer_then_close(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(b"bye")
        await writer.drain()
        writer.close()

    async def reset(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        sock = writer.get_extra_info("socket")
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
        await reader.read(3)
        writer.transport.abort()

    async with serving(answer_then_close) as port:
        stream = await AsyncioNetwork().connect_tcp("127.0.0.1", port, timeout=5)
        assert await stream.read(1024, timeout=5) == b"bye"
        assert await stream.read(1024, timeout=5) == b""
        assert stream.get_extra_info("is_readable") is True  # an idle connection the server closed
        with pytest.raises(httpcore2.WriteError):
            await stream.write(b"more", timeout=5)
        await stream.aclose()

    async with serving(reset) as port:
        stream = await AsyncioNetwork().connect_tcp("127.0.0.1", port, timeout=5)
        assert stream.get_extra_info("is_readable") is False
        await stream.write(b"hi!", timeout=5)
        with pytest.raises(httpcore2.ReadError):
            while await stream.read(1024, timeout=5):
                pass
        await stream.aclose()


async def test_a_body_larger_than_the_buffer_arrives_whole_in_order() -> None:
    body = bytes(range(256)) * (12 * 1024)  # 3 MB: reading pauses above 1 MB and resumes

    async def send_all(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(body)
        await writer.drain()
        writer.close()

    async with serving(send_all) as port:
        stream = await AsyncioNetwork().connect_tcp("127.0.0.1", port, timeout=5)
        await asyncio.sleep(0.2)  # let it pile up
        received = bytearray()
        while chunk := await stream.read(65536, timeout=5):
            assert len(chunk) <= 65536
            received += chunk
        assert bytes(received) == body
        await stream.aclose()


async def test_tls_is_started_on_the_connection_and_a_wrong_certificate_refused(
    certificate: tuple[Path, Path],
) -> None:
    cert, key = certificate
    server_side = server_tls(cert, key)

    async def echo(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            writer.write((await reader.readexactly(5)).upper())
            await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError, ssl.SSLError):
            pass
        finally:
            writer.close()

    async with serving(echo, tls=server_side) as port:
        trusting = ssl.create_default_context(cafile=str(cert))
        plain = await AsyncioNetwork().connect_tcp("127.0.0.1", port, timeout=5)
        secure = await plain.start_tls(trusting, server_hostname="localhost", timeout=5)
        assert secure.get_extra_info("ssl_object") is not None
        await secure.write(b"hello", timeout=5)
        assert await secure.read(1024, timeout=5) == b"HELLO"
        await secure.aclose()

        plain = await AsyncioNetwork().connect_tcp("127.0.0.1", port, timeout=5)
        with pytest.raises(httpcore2.ConnectError):
            await plain.start_tls(ssl.create_default_context(), server_hostname="localhost", timeout=5)
