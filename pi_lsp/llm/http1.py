"""HTTP/1.1 for the model client, spoken directly on the asyncio connections of :mod:`.asyncio_network`.

A streamed reply arrives as one small chunk per delta. Through httpx2's own transport each chunk
went up through httpcore's connection stream and pool stream, h11's event machine and httpx's
stream wrappers, with a context manager per layer: about a third of the server's CPU per delta.
This transport reads the reply's head and its body's framing (chunked, a length, or until close)
from the bytes as they arrive, and keeps idle connections for the next request as httpcore did.

Everything above the transport stays the SDK's and httpx's: headers, retries of statuses and
connection errors, timeouts (taken per request from httpx's ``timeout`` extension), status errors,
content decoding. Errors are httpx2's own exceptions, so the SDK and :mod:`.stream` classify them
as before. What this transport does not speak stays with httpx2's transport: a proxy (its mount
keeps its pool), HTTP/2, a Unix socket, a local address, connect retries (``use_direct_http1``).
``PI_LSP_HTTP=httpx`` keeps httpx2's transport for everything.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import ssl
import time
from collections.abc import AsyncGenerator, AsyncIterator, Iterable, Iterator
from typing import Any, Final

import httpcore2
import httpx2

from pi_lsp.llm.asyncio_network import AsyncioNetwork

log = logging.getLogger(__name__)

_MAX_HEAD: Final = 256 * 1024  # a response head's bytes (status line and headers)
_MAX_LINE: Final = 64 * 1024  # a chunk-size line or a trailer line
_READ: Final = 1 << 20
_NO_BODY_STATUSES: Final = frozenset({204, 304})
_HEX_DIGITS: Final = b"0123456789abcdefABCDEF"

#: httpcore's errors (raised by the network backend) as the httpx2 errors the SDK classifies.
_MAPPED: Final[dict[type[Exception], type[httpx2.TransportError]]] = {
    httpcore2.ConnectTimeout: httpx2.ConnectTimeout,
    httpcore2.ReadTimeout: httpx2.ReadTimeout,
    httpcore2.WriteTimeout: httpx2.WriteTimeout,
    httpcore2.ConnectError: httpx2.ConnectError,
    httpcore2.ReadError: httpx2.ReadError,
    httpcore2.WriteError: httpx2.WriteError,
}

Origin = tuple[str, str, int]
_BODY: Final = "pi_lsp.http1.body"  # the response's extension holding its body (``body_parts``)


@contextlib.contextmanager
def _httpx_errors() -> Iterator[None]:
    try:
        yield
    except httpcore2.TimeoutException as exc:
        raise _MAPPED.get(type(exc), httpx2.TimeoutException)(str(exc)) from exc
    except httpcore2.NetworkError as exc:
        raise _MAPPED.get(type(exc), httpx2.NetworkError)(str(exc)) from exc


class _Connection:
    """One kept-alive connection: its stream and the bytes read from it but not yet used."""

    def __init__(self, stream: Any, origin: Origin) -> None:
        self.stream = stream
        self.origin = origin
        self.loop = asyncio.get_running_loop()  # its sockets are that loop's
        self.data = b""
        self.pos = 0
        self.idle_since = 0.0

    async def more(self, timeout: float | None) -> bool:
        """Read what arrives next onto the unused bytes; False at the connection's end."""
        got: bytes = await self.stream.read(_READ, timeout)
        if not got:
            return False
        self.data = self.data[self.pos :] + got if self.pos < len(self.data) else got
        self.pos = 0
        return True

    async def line(self, timeout: float | None, limit: int, what: str) -> bytes:
        """The next line without its end (``\\r\\n``, or a bare ``\\n`` as h11 also accepts)."""
        while True:
            end = self.data.find(b"\n", self.pos)
            if end >= 0:
                line = self.data[self.pos : end]
                self.pos = end + 1
                return line[:-1] if line.endswith(b"\r") else line
            if len(self.data) - self.pos > limit:
                raise httpx2.RemoteProtocolError(f"the model's server sent {what} over {limit} bytes")
            if not await self.more(timeout):
                raise httpx2.RemoteProtocolError(f"the model's server closed the connection in {what}")

    def unused(self, most: int) -> bytes:
        """Up to ``most`` of the bytes read and not yet used."""
        piece = self.data[self.pos : self.pos + most]
        self.pos += len(piece)
        return piece

    def idle_and_open(self) -> bool:
        """Whether an idle connection can take a request: nothing arrived on it, it is open, and
        it belongs to the running event loop (a client used again under another ``asyncio.run``)."""
        return (
            self.pos >= len(self.data)
            and not self.stream.get_extra_info("is_readable")
            and self.loop is asyncio.get_running_loop()
        )

    async def aclose(self) -> None:
        if self.loop is not asyncio.get_running_loop():
            return  # another loop's (an earlier ``asyncio.run``): only that loop may touch it
        with contextlib.suppress(Exception):
            await self.stream.aclose()


class _Head:
    """A response's status line and headers, and how its body is framed."""

    def __init__(
        self, version: bytes, status: int, reason: bytes, headers: list[tuple[bytes, bytes]]
    ) -> None:
        self.version = version
        self.status = status
        self.reason = reason
        self.headers = headers

    def values(self, name: bytes) -> list[bytes]:
        return [value for key, value in self.headers if key.lower() == name]

    def tokens(self, name: bytes) -> list[bytes]:
        return _tokens(self.values(name))

    def keeps_alive(self) -> bool:
        connection = self.tokens(b"connection")
        if self.version == b"HTTP/1.0":
            return b"keep-alive" in connection
        return b"close" not in connection


def _tokens(values: Iterable[bytes]) -> list[bytes]:
    """The comma-separated tokens of a header's values, lowercased (``Connection``, ``Transfer-Encoding``)."""
    return [token.strip().lower() for value in values for token in value.split(b",")]


def _parse_status(line: bytes) -> tuple[bytes, int, bytes]:
    version, _, rest = line.partition(b" ")
    code, _, reason = rest.partition(b" ")
    if version not in (b"HTTP/1.1", b"HTTP/1.0") or len(code) != 3 or not code.isdigit():
        raise httpx2.RemoteProtocolError(f"the model's server sent no HTTP/1.1 status line: {line[:80]!r}")
    return version, int(code), reason.strip()


async def _read_head(connection: _Connection, timeout: float | None) -> _Head:
    """The next final response's head (informational 1xx responses are read past)."""
    while True:
        if connection.pos >= len(connection.data) and not await connection.more(timeout):
            raise httpx2.RemoteProtocolError("Server disconnected without sending a response.")
        version, status, reason = _parse_status(await connection.line(timeout, _MAX_HEAD, "a status line"))
        headers: list[tuple[bytes, bytes]] = []
        size = 0
        while line := await connection.line(timeout, _MAX_HEAD, "a header"):
            size += len(line)
            if size > _MAX_HEAD:
                raise httpx2.RemoteProtocolError(f"the model's server sent headers over {_MAX_HEAD} bytes")
            if line[:1] in (b" ", b"\t") and headers:  # an obsolete folded continuation
                name, value = headers[-1]
                headers[-1] = (name, value + b" " + line.strip())
                continue
            name, colon, value = line.partition(b":")
            if not colon or not name or name != name.strip():
                raise httpx2.RemoteProtocolError(f"the model's server sent a malformed header: {line[:80]!r}")
            headers.append((name, value.strip(b" \t")))
        if 100 <= status < 200 and status != 101:
            continue
        return _Head(version, status, reason, headers)


_CR = ord("\r")


def _chunk_size(line: bytes) -> int:
    digits = line.split(b";", 1)[0].strip()
    if not digits or len(digits) > 16 or digits.strip(_HEX_DIGITS):
        raise httpx2.RemoteProtocolError(f"the model's server sent a bad chunk size: {line[:80]!r}")
    return int(digits, 16)


async def _chunked(connection: _Connection, timeout: float | None) -> AsyncGenerator[bytes, None]:
    """A chunked body's data as it arrives (a chunk's part when only part has arrived)."""
    while True:
        data, pos = connection.data, connection.pos
        line_end = data.find(b"\n", pos)
        if line_end < 0 and len(data) - pos <= _MAX_LINE:  # wait here: a delta arrives whole
            if not await connection.more(timeout):
                raise httpx2.RemoteProtocolError("the model's server closed the connection in a chunk size")
            continue
        if line_end > pos and data[line_end - 1] == _CR:  # a whole chunk read: no line reads
            start = line_end + 1
            stop = start + _chunk_size(data[pos : line_end - 1])
            if stop > start and data[stop : stop + 2] == b"\r\n":
                connection.pos = stop + 2
                yield data[start:stop]
                continue
        left = _chunk_size(await connection.line(timeout, _MAX_LINE, "a chunk size"))
        if left == 0:
            while await connection.line(timeout, _MAX_LINE, "a trailer"):
                pass
            return
        while left:
            if connection.pos >= len(connection.data) and not await connection.more(timeout):
                raise _cut("incomplete chunked read")
            piece = connection.unused(left)
            left -= len(piece)
            yield piece
        if await connection.line(timeout, _MAX_LINE, "a chunk's end"):
            raise httpx2.RemoteProtocolError("the model's server sent a chunk longer than its size")


async def _sized(connection: _Connection, left: int, timeout: float | None) -> AsyncGenerator[bytes, None]:
    while left:
        if connection.pos >= len(connection.data) and not await connection.more(timeout):
            raise _cut(f"{left} bytes of the body missing")
        piece = connection.unused(left)
        left -= len(piece)
        yield piece


async def _until_close(connection: _Connection, timeout: float | None) -> AsyncGenerator[bytes, None]:
    while connection.pos < len(connection.data) or await connection.more(timeout):
        yield connection.unused(len(connection.data))


def _cut(detail: str) -> httpx2.RemoteProtocolError:
    return httpx2.RemoteProtocolError(
        f"peer closed connection without sending complete message body ({detail})"
    )


class _Body(httpx2.AsyncByteStream):
    """A response's body; its connection goes back to the pool when it was read to its end."""

    def __init__(
        self,
        transport: DirectHTTP1,
        connection: _Connection,
        parts: AsyncGenerator[bytes, None],
        reusable: bool,
    ) -> None:
        self._transport = transport
        self._connection: _Connection | None = connection
        self._parts = parts
        self._reusable = reusable
        self._ended = False

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for part in self.parts():
            yield part

    async def parts(self) -> AsyncIterator[bytes]:
        with _httpx_errors():
            async for part in self._parts:
                yield part
        self._ended = True

    async def aclose(self) -> None:
        connection, self._connection = self._connection, None
        if connection is None:
            return
        with contextlib.suppress(Exception):
            await self._parts.aclose()
        if self._ended and self._reusable:
            await self._transport.release(connection)
        else:
            await connection.aclose()


class DirectHTTP1(httpx2.AsyncBaseTransport):
    """An httpx2 transport speaking HTTP/1.1 itself, over plain or TLS asyncio connections."""

    def __init__(
        self,
        ssl_context: ssl.SSLContext,
        *,
        socket_options: Iterable[Any] | None = None,
        keepalive_expiry: float | None = 5.0,
        max_keepalive: int = 20,
    ) -> None:
        self._ssl_context = ssl_context
        self._socket_options = list(socket_options or ())
        self._keepalive_expiry = keepalive_expiry
        self._max_keepalive = max_keepalive
        self._network = AsyncioNetwork()
        self._idle: list[_Connection] = []

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        timeouts: dict[str, float | None] = request.extensions.get("timeout", {})
        url = request.url
        scheme = url.scheme
        port = url.port or (443 if scheme == "https" else 80)
        origin = (scheme, url.host, port)
        connection = await self._connection(origin, request, timeouts.get("connect"))
        try:
            with _httpx_errors():
                await self._send(connection, request, timeouts.get("write"))
                head = await _read_head(connection, timeouts.get("read"))
        except BaseException:
            await connection.aclose()
            raise
        parts, framed = self._body(connection, request.method, head, timeouts.get("read"))
        asks_close = b"close" in _tokens(v for k, v in request.headers.raw if k.lower() == b"connection")
        reusable = framed and head.keeps_alive() and not asks_close
        body = _Body(self, connection, parts, reusable)
        return httpx2.Response(
            head.status,
            headers=head.headers,
            stream=body,
            extensions={
                "http_version": head.version,
                "reason_phrase": head.reason,
                "network_stream": connection.stream,
                _BODY: body,
            },
        )

    async def _connection(
        self, origin: Origin, request: httpx2.Request, timeout: float | None
    ) -> _Connection:
        """An idle connection to ``origin`` still open and fresh, else a new one."""
        now = time.monotonic()
        for connection in reversed(self._idle):
            if connection.origin != origin:
                continue
            self._idle.remove(connection)
            expired = (
                self._keepalive_expiry is not None and now - connection.idle_since > self._keepalive_expiry
            )
            if not expired and connection.idle_and_open():
                return connection
            await connection.aclose()
        scheme, host, port = origin
        if scheme not in ("http", "https"):
            raise httpx2.UnsupportedProtocol(f"the model client speaks http and https, not {scheme!r}")
        with _httpx_errors():
            stream = await self._network.connect_tcp(host, port, timeout, socket_options=self._socket_options)
            if scheme == "https":
                server_name = request.extensions.get("sni_hostname") or host
                try:
                    stream = await stream.start_tls(
                        self._ssl_context, server_hostname=server_name, timeout=timeout
                    )
                except BaseException:  # cancelled in the handshake too: the socket is not left open
                    await stream.aclose()
                    raise
        return _Connection(stream, origin)

    @staticmethod
    async def _send(connection: _Connection, request: httpx2.Request, timeout: float | None) -> None:
        """The request line, headers and body, in one write when the body is already in memory."""
        head = [request.method.encode("ascii"), b" ", request.url.raw_path, b" HTTP/1.1\r\n"]
        for name, value in request.headers.raw:
            head += [name, b": ", value, b"\r\n"]
        head.append(b"\r\n")
        chunked = "chunked" in request.headers.get("transfer-encoding", "").lower()
        stream = request.stream
        assert isinstance(stream, httpx2.AsyncByteStream)
        if isinstance(stream, httpx2.ByteStream) and not chunked:  # bytes already in memory
            await connection.stream.write(b"".join([*head, *[part async for part in stream]]), timeout)
            return
        await connection.stream.write(b"".join(head), timeout)
        async for part in stream:
            if part:
                await connection.stream.write(
                    b"%x\r\n%b\r\n" % (len(part), part) if chunked else part, timeout
                )
        if chunked:
            await connection.stream.write(b"0\r\n\r\n", timeout)

    @staticmethod
    def _body(
        connection: _Connection, method: str, head: _Head, timeout: float | None
    ) -> tuple[AsyncGenerator[bytes, None], bool]:
        """The body's parts, and whether its end is framed (so the connection can be used again)."""
        if method == "HEAD" or head.status in _NO_BODY_STATUSES or head.status == 101:
            return _sized(connection, 0, timeout), head.status != 101
        codings = head.tokens(b"transfer-encoding")
        if codings:
            if codings[-1] == b"chunked":
                return _chunked(connection, timeout), True
            return _until_close(connection, timeout), False
        lengths = {value.strip() for value in head.values(b"content-length")}
        if lengths:
            length = lengths.pop()
            if lengths or not length.isdigit():
                raise httpx2.RemoteProtocolError("the model's server sent a bad Content-Length")
            return _sized(connection, int(length), timeout), True
        return _until_close(connection, timeout), False

    async def release(self, connection: _Connection) -> None:
        """Keep a connection whose response was read whole, for the next request to its origin."""
        if not connection.idle_and_open():
            await connection.aclose()
            return
        connection.idle_since = time.monotonic()
        self._idle.append(connection)
        while len(self._idle) > self._max_keepalive:
            await self._idle.pop(0).aclose()

    async def aclose(self) -> None:
        idle, self._idle = self._idle, []
        for connection in idle:
            await connection.aclose()


def body_parts(response: httpx2.Response) -> AsyncIterator[bytes]:
    """A streamed response's body as it arrives: straight from this transport's reader when it
    came through it uncoded (one async layer per part, not five), else httpx's ``aiter_bytes``
    (decoded). ``response.aclose()`` ends either."""
    body = response.extensions.get(_BODY)
    coding = response.headers.get("content-encoding", "identity").strip().lower()
    if isinstance(body, _Body) and coding in ("", "identity") and not response.is_stream_consumed:
        response.is_stream_consumed = True
        return body.parts()
    return response.aiter_bytes()


def use_direct_http1(http_client: object) -> bool:
    """Give an httpx2 client this transport in place of its own, for the origins it reaches without a
    proxy, when its pool is one this transport can stand for (see the module's docstring). Called
    before the client's first request. True when it was swapped."""
    if os.environ.get("PI_LSP_HTTP", "").strip().lower() == "httpx":
        return False
    transport = getattr(http_client, "_transport", None)
    pool = getattr(transport, "_pool", None)
    if (
        not isinstance(transport, httpx2.AsyncHTTPTransport)
        or type(pool) is not httpcore2.AsyncConnectionPool
    ):
        log.debug("the SDK's HTTP client has a transport this one does not stand for; it keeps it")
        return False
    settings = vars(pool)
    if (
        settings.get("_http2")
        or not settings.get("_http1", True)
        or settings.get("_uds")
        or settings.get("_local_address")
        or settings.get("_retries")
        or not isinstance(settings.get("_ssl_context"), ssl.SSLContext)
    ):
        return False
    http_client._transport = DirectHTTP1(  # type: ignore[attr-defined]
        settings["_ssl_context"],
        socket_options=settings.get("_socket_options"),
        keepalive_expiry=settings.get("_keepalive_expiry", 5.0),
        max_keepalive=settings.get("_max_keepalive_connections", 20),
    )
    return True
