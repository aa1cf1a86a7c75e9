"""TCP and WebSocket transports: several editors share the sessions, each with its own connection.

Every connection goes through the same steps: its first message must be ``initialize`` with the
server's token (:mod:`pi_lsp.server.admission`), else it gets an error answer and is closed; then
it gets its own language server, whose output goes through a :class:`BoundedOutbox`. A framing
error, an overflowing outbox or ``exit`` closes that connection only, cancelling its pending
requests; the other connections keep being served.
"""

from __future__ import annotations

import asyncio
import contextlib
import http
import importlib
import logging
import socket
import struct
import sys
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from pi_lsp.framing import MAX_BODY_BYTES, FrameError, frame, read_frame_async
from pi_lsp.outbox import BoundedOutbox
from pi_lsp.server.admission import (
    MAX_FIRST_MESSAGE_BYTES,
    AdmissionError,
    admit_first_message,
    check_bind,
    check_handshake,
    is_loopback_host,
    refusal,
)
from pi_lsp.server.daemon import ALREADY_RUNNING, Lifetime, StateFile, StateFileBusy
from pi_lsp.server.transport import dispatch, import_server

if TYPE_CHECKING:
    from pi_lsp.service.build import PiService

log = logging.getLogger(__name__)

_WRITE_CHUNK = 1 << 20
_REFUSAL_TIMEOUT = 5.0
_FLUSH_ON_CLOSE = 2.0
_FIRST_MESSAGE_TIMEOUT = 30


@dataclass(frozen=True)
class NetworkOptions:
    """What the user allowed on the command line, and the token connections must present."""

    token: str
    allow_remote: bool = False
    allowed_origins: tuple[str, ...] = ()
    state_file: Path | None = None  # a shared server: where editors find it (daemon.StateFile)
    idle_exit: float | None = None  # exit after this many seconds without connections or runs
    reattach_grace: float = 0.0  # a run outlives its connection this long (RunService)


class _Link(Protocol):
    """One connection's byte stream, whatever the transport."""

    name: str

    async def receive(self, limit: int) -> bytes | None: ...
    async def send(self, body: bytes) -> None: ...
    async def close(self, *, abort: bool) -> None: ...


def split_address(address: str) -> tuple[str, int]:
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit():
        raise ValueError(f"expected HOST:PORT, got {address!r}")
    return host.strip("[]"), int(port)


def _format_address(name: Any) -> str:
    if not isinstance(name, tuple):
        return str(name)
    host = f"[{name[0]}]" if ":" in name[0] else name[0]
    return f"{host}:{name[1]}"


def _announce(scheme: str, sockets: Any, token: str) -> None:
    """The one place the token is shown: stderr at start, for the user to give their editors."""
    addresses = ", ".join(f"{scheme}://{_format_address(sock.getsockname())}" for sock in sockets)
    print(f"pi-lsp listening on {addresses} token={token}", file=sys.stderr, flush=True)


async def _serve_link(service: PiService, link: _Link, token: str) -> None:
    """Admit one connection by its first message, then serve it until it ends."""
    from pi_lsp.server.app import create_language_server

    try:
        first = await asyncio.wait_for(link.receive(MAX_FIRST_MESSAGE_BYTES), _FIRST_MESSAGE_TIMEOUT)
    except TimeoutError:
        log.warning("%s refused: no initialize within %d s", link.name, _FIRST_MESSAGE_TIMEOUT)
        await link.close(abort=True)
        return
    except FrameError as error:
        log.warning("%s refused: %s", link.name, error)
        await link.close(abort=False)
        return
    if first is None:
        await link.close(abort=False)
        return
    verdict = admit_first_message(first, token)
    if verdict.body is None:
        log.warning("%s refused: %s", link.name, verdict.error)
        with contextlib.suppress(Exception):
            await asyncio.wait_for(link.send(refusal(verdict.error_id, verdict.error)), _REFUSAL_TIMEOUT)
        await link.close(abort=False)
        return

    server, client = create_language_server(service)
    closed = asyncio.Event()
    outbox = BoundedOutbox(link.send, closed.set, name=link.name)
    server.protocol.set_writer(outbox, False)
    server.protocol.on_exit = closed.set
    body: bytes | None = verdict.body
    try:
        while body is not None and not closed.is_set():
            dispatch(server.protocol.receive, body)
            body = await _next_body(link, closed)
    except FrameError as error:
        log.warning("%s sent a malformed frame, closing it: %s", link.name, error)
    finally:
        client.leaving = True
        for future in list(server.protocol._request_futures.values()):
            future.cancel()
        if not outbox.overflowed:
            await outbox.flush(_FLUSH_ON_CLOSE)
        outbox.close()
        await link.close(abort=outbox.overflowed)
        await service.disconnect(client)


async def _next_body(link: _Link, closed: asyncio.Event) -> bytes | None:
    """The next message, or None when the connection ended (by the client or by us)."""
    reading = asyncio.ensure_future(link.receive(MAX_BODY_BYTES))
    stopping = asyncio.ensure_future(closed.wait())
    done, _ = await asyncio.wait({reading, stopping}, return_when=asyncio.FIRST_COMPLETED)
    stopping.cancel()
    if reading not in done:
        reading.cancel()
        return None
    return reading.result()


def _run(main: Callable[[StateFile | None], Coroutine[Any, Any, int]], options: NetworkOptions) -> int:
    """Take the state file's lock (before binding: a second shared server exits at once), then serve."""
    state = StateFile(options.state_file) if options.state_file is not None else None
    if state is not None:
        try:
            state.acquire()
        except StateFileBusy as error:
            print(f"pi-lsp: {error}", file=sys.stderr, flush=True)
            return ALREADY_RUNNING
    import_server()
    try:
        return asyncio.run(main(state))
    except KeyboardInterrupt:
        return 0
    finally:
        if state is not None:
            state.release()


async def _serve_until_stopped(
    service: PiService,
    server: Any,
    lifetime: Lifetime,
    state: StateFile | None,
    where: tuple[str, str],
    token: str,
) -> int:
    """Publish the state file, then serve until idle or signalled; runs in progress are saved."""
    lifetime.stop_on_signals()
    if state is not None:
        state.publish(*where, token)
    idle = asyncio.ensure_future(lifetime.watch_idle())
    try:
        await lifetime.stop.wait()
    finally:
        idle.cancel()
        server.close()  # no new connections; open ones end with the process
        await service.close()
    return 0


def _start(address: str, options: NetworkOptions) -> tuple[str, int] | None:
    """The host and port to bind, or None (after saying why on stderr) when refused."""
    host, port = split_address(address)
    try:
        check_bind(host, options.allow_remote)
    except AdmissionError as error:
        print(f"pi-lsp: error: {error}", file=sys.stderr)
        return None
    return host, port


def _reset(transport: asyncio.BaseTransport) -> None:
    """Close with a reset, dropping what the kernel still holds for a client that does not read
    (a plain close would keep it, waiting for the client to take it)."""
    sock = transport.get_extra_info("socket")
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    transport.abort()  # type: ignore[attr-defined]


# ---------------------------------------------------------------------- TCP


class _TcpLink:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        self.name = f"client {_format_address(writer.get_extra_info('peername'))}"

    async def receive(self, limit: int) -> bytes | None:
        try:
            return await read_frame_async(self.reader, limit)
        except (ConnectionError, OSError):
            return None

    async def send(self, body: bytes) -> None:
        self.writer.write(frame(body))
        view = memoryview(body)
        for start in range(0, len(view), _WRITE_CHUNK):  # the socket takes it piece by piece
            self.writer.write(view[start : start + _WRITE_CHUNK])
            await self.writer.drain()

    async def close(self, *, abort: bool) -> None:
        if abort:
            _reset(self.writer.transport)
            return
        with contextlib.suppress(Exception):
            # Say we are done, then drop what the client still sends for a moment: closing with
            # unread input would reset the connection and could destroy our last answer.
            await asyncio.wait_for(self.writer.drain(), _FLUSH_ON_CLOSE)
            self.writer.write_eof()
            await asyncio.wait_for(self._discard_input(), _FLUSH_ON_CLOSE)
        self.writer.close()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.writer.wait_closed(), _FLUSH_ON_CLOSE)

    async def _discard_input(self) -> None:
        while await self.reader.read(1 << 16):
            pass


def serve_tcp(address: str, options: NetworkOptions) -> int:
    bind = _start(address, options)
    if bind is None:
        return 2
    return _run(lambda state: _tcp_main(*bind, options, state), options)


async def _tcp_main(host: str, port: int, options: NetworkOptions, state: StateFile | None) -> int:
    from pi_lsp.service.build import build_service

    service = build_service(reattach_grace=options.reattach_grace)
    lifetime = Lifetime(options.idle_exit, service.running)

    async def on_connect(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        link = _TcpLink(reader, writer)
        log.info("%s connected", link.name)
        with lifetime.connection():
            await _serve_link(service, link, options.token)

    tcp = await asyncio.start_server(on_connect, host, port)
    _announce("tcp", tcp.sockets, options.token)
    address = _format_address(tcp.sockets[0].getsockname())
    return await _serve_until_stopped(service, tcp, lifetime, state, ("tcp", address), options.token)


# ---------------------------------------------------------------------- WebSocket


class _WebSocketLink:
    """Each WebSocket message is one body, without headers."""

    def __init__(self, socket: Any, connection_closed: type[Exception]) -> None:
        self.socket = socket
        self.connection_closed = connection_closed
        self.name = f"client {_format_address(socket.remote_address)}"

    async def receive(self, limit: int) -> bytes | None:
        self.socket.protocol.max_message_size = limit  # larger messages close the connection (1009)
        try:
            data = await self.socket.recv()
        except self.connection_closed:
            return None
        return data.encode("utf-8") if isinstance(data, str) else bytes(data)

    async def send(self, body: bytes) -> None:
        try:
            await self.socket.send(body, text=True)
        except self.connection_closed as error:
            raise ConnectionError(str(error)) from None

    async def close(self, *, abort: bool) -> None:
        if abort:
            _reset(self.socket.transport)
            return
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.socket.close(), _FLUSH_ON_CLOSE)


def serve_ws(address: str, options: NetworkOptions) -> int:
    """WebSocket transport; needs the optional ``websockets`` package (pygls' ``ws`` extra)."""
    try:
        websockets_server = importlib.import_module("websockets.asyncio.server")
        websockets_exceptions = importlib.import_module("websockets.exceptions")
    except ImportError:
        print("pi-lsp: --ws needs the 'websockets' package (pip install websockets)", file=sys.stderr)
        return 2
    bind = _start(address, options)
    if bind is None:
        return 2
    closed = websockets_exceptions.ConnectionClosed
    return _run(lambda state: _ws_main(*bind, options, websockets_server.serve, closed, state), options)


async def _ws_main(
    host: str,
    port: int,
    options: NetworkOptions,
    serve: Any,
    connection_closed: type[Exception],
    state: StateFile | None,
) -> int:
    from pi_lsp.service.build import build_service

    service = build_service(reattach_grace=options.reattach_grace)
    lifetime = Lifetime(options.idle_exit, service.running)
    loopback = is_loopback_host(host)

    def screen(connection: Any, request: Any) -> Any:
        """Refuse a handshake from a web page not allowed, or through a foreign host name."""
        refused = check_handshake(request.headers, loopback=loopback, allowed_origins=options.allowed_origins)
        if refused is None:
            return None
        log.warning("WebSocket handshake refused: %s", refused.reason)
        return connection.respond(http.HTTPStatus(refused.status), refused.reason + "\n")

    async def on_connect(socket: Any) -> None:
        with lifetime.connection():
            await _serve_link(service, _WebSocketLink(socket, connection_closed), options.token)

    ws = await serve(on_connect, host, port, process_request=screen, max_size=MAX_FIRST_MESSAGE_BYTES)
    _announce("ws", ws.sockets, options.token)
    address = _format_address(next(iter(ws.sockets)).getsockname())
    return await _serve_until_stopped(service, ws, lifetime, state, ("ws", address), options.token)
