"""The SDK's sockets on plain asyncio: an httpcore network backend for the model client.

The SDK's HTTP stack (httpx2 over httpcore2) reads its sockets through anyio by default. Each read
of a streamed reply then opens a cancel scope for the read timeout, checkpoints, and resumes and
pauses the transport's reader: most of the server's CPU per streamed delta. This backend keeps
what arrives in an asyncio protocol's buffer and hands it over without suspending when it is
already there; the reads that wait share one timer for their timeouts.

The model client's own HTTP/1.1 (:mod:`.http1`) connects and reads through this backend; the
pools that stay httpcore's (a proxy's) take it too (``use_asyncio_network`` swaps it in pools the
SDK already built), with their proxy, TLS and HTTP handling unchanged. Errors are httpcore's own
exceptions; :mod:`.http1` maps them to httpx's, so the SDK classifies them as before.
"""

from __future__ import annotations

import asyncio
import logging
import ssl
from collections import deque
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from httpcore2 import (
    AsyncConnectionPool,
    ConnectError,
    ConnectTimeout,
    ReadError,
    ReadTimeout,
    WriteError,
    WriteTimeout,
)
from httpcore2._backends.base import AsyncNetworkBackend, AsyncNetworkStream
from httpcore2._types import SOCKET_OPTION

log = logging.getLogger(__name__)

#: Bytes kept unread before the socket stops being read (a reply is read as it arrives).
_PAUSE_ABOVE = 1 << 20


class _Buffered(asyncio.Protocol):
    """A connection's incoming bytes, kept until read, and its writing's flow control."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.chunks: deque[bytes] = deque()
        self.size = 0
        self.ended = False
        self.error: BaseException | None = None
        self._reading_paused = False
        self._waiter: asyncio.Future[None] | None = None
        self._deadline: float | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._writable: asyncio.Future[None] | None = None

    # -- asyncio callbacks
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        self.chunks.append(data)
        self.size += len(data)
        if self.size > _PAUSE_ABOVE and not self._reading_paused and self.transport is not None:
            self._reading_paused = True
            self.transport.pause_reading()
        self._wake()

    def eof_received(self) -> bool | None:
        self.ended = True
        self._wake()
        return None  # close the transport

    def connection_lost(self, exc: Exception | None) -> None:
        self.ended = True
        self.error = exc
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._wake()
        if self._writable is not None and not self._writable.done():
            self._writable.set_result(None)

    def pause_writing(self) -> None:
        if self._writable is None or self._writable.done():
            self._writable = asyncio.get_running_loop().create_future()

    def resume_writing(self) -> None:
        if self._writable is not None and not self._writable.done():
            self._writable.set_result(None)

    # -- for the stream
    def _wake(self) -> None:
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)

    def take(self, max_bytes: int) -> bytes:
        """Up to ``max_bytes`` of what arrived (one chunk as it came, when it fits)."""
        first = self.chunks.popleft()
        if len(first) > max_bytes:
            self.chunks.appendleft(first[max_bytes:])
            first = first[:max_bytes]
        elif self.chunks and len(first) + len(self.chunks[0]) <= max_bytes:
            parts = [first]
            total = len(first)
            while self.chunks and total + len(self.chunks[0]) <= max_bytes:
                part = self.chunks.popleft()
                parts.append(part)
                total += len(part)
            first = b"".join(parts)
        self.size -= len(first)
        if self._reading_paused and self.size <= _PAUSE_ABOVE // 2 and self.transport is not None:
            self._reading_paused = False
            self.transport.resume_reading()
        return first

    async def arrival(self, timeout: float | None) -> None:
        """Wait until something arrives or the connection ends; TimeoutError after ``timeout``.

        One timer serves the waits that follow each other (a streamed reply waits once per
        delta): it is set for the first deadline, and when it fires before the current one it
        is set again for that, instead of a new timer made and cancelled for every wait."""
        loop = asyncio.get_running_loop()
        waiter = self._waiter = loop.create_future()
        if timeout is None:
            self._deadline = None
        else:
            deadline = self._deadline = loop.time() + timeout
            timer = self._timer
            if timer is None or timer.when() > deadline:
                if timer is not None:
                    timer.cancel()
                self._timer = loop.call_at(deadline, self._deadline_reached)
        try:
            await waiter
        finally:
            self._waiter = None

    def _deadline_reached(self) -> None:
        self._timer = None
        waiter, deadline = self._waiter, self._deadline
        if waiter is None or waiter.done() or deadline is None:
            return  # no wait, or one without a timeout: the next wait with one sets a timer again
        loop = waiter.get_loop()
        if loop.time() >= deadline:
            waiter.set_exception(TimeoutError())
        else:
            self._timer = loop.call_at(deadline, self._deadline_reached)

    async def drained(self, timeout: float | None) -> None:
        """Wait while the transport's write buffer is over its limit."""
        writable = self._writable
        if writable is None or writable.done():
            return
        try:
            await asyncio.wait_for(asyncio.shield(writable), timeout)
        except TimeoutError:
            raise WriteTimeout("timed out writing to the model's server") from None


class AsyncioStream(AsyncNetworkStream):
    """One connection (plain or TLS) as httpcore reads and writes it."""

    def __init__(self, protocol: _Buffered) -> None:
        self._protocol = protocol

    @property
    def _transport(self) -> asyncio.Transport:
        transport = self._protocol.transport
        if transport is None:  # pragma: no cover - set by connection_made before the stream exists
            raise ReadError("the connection is not open")
        return transport

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        protocol = self._protocol
        if not protocol.chunks and not protocol.ended:
            try:
                await protocol.arrival(timeout)
            except TimeoutError:
                raise ReadTimeout("timed out reading from the model's server") from None
        if protocol.chunks:
            return protocol.take(max_bytes)
        if protocol.error is not None:
            raise ReadError(str(protocol.error) or type(protocol.error).__name__) from protocol.error
        return b""

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        if not buffer:
            return
        transport = self._transport
        if transport.is_closing() or self._protocol.ended:
            raise WriteError("the connection to the model's server is closed")
        try:
            transport.write(buffer)
        except (OSError, RuntimeError) as exc:
            raise WriteError(str(exc)) from exc
        await self._protocol.drained(timeout)

    async def aclose(self) -> None:
        transport = self._protocol.transport
        if transport is not None:
            transport.close()

    async def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> AsyncNetworkStream:
        loop = asyncio.get_running_loop()
        try:
            secure = await loop.start_tls(
                self._transport,
                self._protocol,
                ssl_context,
                server_hostname=server_hostname,
                ssl_handshake_timeout=timeout,
            )
        except TimeoutError:
            await self.aclose()
            raise ConnectTimeout("timed out in the TLS handshake with the model's server") from None
        except (OSError, ssl.SSLError, ConnectionError) as exc:
            await self.aclose()
            raise ConnectError(str(exc)) from exc
        if secure is None:  # pragma: no cover - the transport closed during the handshake
            raise ConnectError("the connection closed during the TLS handshake")
        assert isinstance(secure, asyncio.Transport)
        self._protocol.transport = secure
        return self

    def get_extra_info(self, info: str) -> Any:
        transport = self._protocol.transport
        if info == "is_readable":
            # An idle kept-alive connection that has data or an end waiting was closed by the server
            # (the protocol reads eagerly, so the socket itself is never left readable).
            return self._protocol.ended or bool(self._protocol.chunks)
        if transport is None:
            return None
        if info == "ssl_object":
            return transport.get_extra_info("ssl_object")
        if info == "client_addr":
            return transport.get_extra_info("sockname")
        if info == "server_addr":
            return transport.get_extra_info("peername")
        if info == "socket":
            return transport.get_extra_info("socket")
        return None


class AsyncioNetwork(AsyncNetworkBackend):
    """Connections on the running asyncio loop (see the module's docstring)."""

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[SOCKET_OPTION] | None = None,
    ) -> AsyncNetworkStream:
        loop = asyncio.get_running_loop()
        local = (local_address, 0) if local_address else None
        return await _connected(
            lambda: loop.create_connection(_Buffered, host, port, local_addr=local),
            f"{host}:{port}",
            timeout,
            socket_options,
        )

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[SOCKET_OPTION] | None = None,
    ) -> AsyncNetworkStream:
        loop = asyncio.get_running_loop()
        return await _connected(
            lambda: loop.create_unix_connection(_Buffered, path), path, timeout, socket_options
        )

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


async def _connected(
    connect: Callable[[], Awaitable[tuple[asyncio.BaseTransport, _Buffered]]],
    where: str,
    timeout: float | None,
    socket_options: Iterable[SOCKET_OPTION] | None,
) -> AsyncioStream:
    """A new connection as a stream, its socket options set; httpcore's errors when it fails."""
    try:
        async with asyncio.timeout(timeout):
            _transport, protocol = await connect()
    except TimeoutError:
        raise ConnectTimeout(f"timed out connecting to {where}") from None
    except OSError as exc:
        raise ConnectError(str(exc)) from exc
    stream = AsyncioStream(protocol)
    sock = stream.get_extra_info("socket")
    for option in socket_options or ():
        sock.setsockopt(*option)
    return stream


def use_asyncio_network(http_client: object) -> int:
    """Give every connection pool of an httpx2 client (its transport and its proxies' mounts) this
    backend; returns how many pools took it. Called before the client's first request, while its
    pools hold no connection. A layout this does not know is left as it is (anyio, slower)."""
    transports = [getattr(http_client, "_transport", None), *getattr(http_client, "_mounts", {}).values()]
    swapped = 0
    for transport in transports:
        pool = getattr(transport, "_pool", None)
        if isinstance(pool, AsyncConnectionPool) and hasattr(pool, "_network_backend"):
            pool._network_backend = AsyncioNetwork()
            swapped += 1
    if swapped == 0:
        log.debug("the SDK's HTTP client has no pool this backend knows; it keeps anyio's")
    return swapped
