"""Transports: stdio (one editor), TCP and WebSocket (several editors sharing the sessions).

This module imports nothing heavy at load time. Over stdio the first message is read while pygls
and lsprotocol import in a background thread (~0.4 s, most of it lsprotocol's type module); an
``initialize`` request is answered at once with the fixed capabilities and then replayed into pygls
with its duplicate response suppressed. Editors therefore see the server ready in well under
300 ms; requests that follow wait for the import to finish.

Framing is LSP's (``Content-Length`` headers) for stdio and TCP; each WebSocket message is one body.
"""

from __future__ import annotations

import importlib
import logging
import os
import sys
import threading
from collections.abc import Awaitable, Callable
from typing import IO, TYPE_CHECKING, Any, Protocol

import orjson

if TYPE_CHECKING:
    import asyncio

    from pi_lsp.server.app import PiLanguageServer
    from pi_lsp.service.sessions import PiService

log = logging.getLogger(__name__)


class _LineReader(Protocol):
    def readline(self) -> bytes: ...
    def read(self, size: int) -> bytes: ...


def read_frame(stream: _LineReader) -> bytes | None:
    """One message body from a blocking stream; None at end of input."""
    length: int | None = None
    while True:
        line = stream.readline()
        if not line:
            return None
        text = line.strip()
        if not text:
            if length is None:
                continue  # stray blank line, or a header block without Content-Length
            body = stream.read(length)
            return body if len(body) == length else None
        name, _, value = text.partition(b":")
        if name.strip().lower() == b"content-length":
            try:
                length = int(value.strip())
            except ValueError:
                length = None


async def read_frame_async(reader: asyncio.StreamReader) -> bytes | None:
    import asyncio

    length: int | None = None
    while True:
        line = await reader.readline()
        if not line:
            return None
        text = line.strip()
        if not text:
            if length is None:
                continue
            try:
                return await reader.readexactly(length)
            except asyncio.IncompleteReadError:
                return None
        name, _, value = text.partition(b":")
        if name.strip().lower() == b"content-length":
            try:
                length = int(value.strip())
            except ValueError:
                length = None


def _import_server() -> None:
    """The heavy imports, done off the main thread while the first message is awaited."""
    import pi_lsp.server.app  # noqa: F401  (pulls in pygls, lsprotocol and the services)


def _early_initialize(body: bytes) -> Any:
    """If ``body`` is a well-formed ``initialize`` request, its id and our response; else None."""
    try:
        message = orjson.loads(body)
    except orjson.JSONDecodeError:
        return None
    if (
        not isinstance(message, dict)
        or message.get("method") != "initialize"
        or message.get("jsonrpc") != "2.0"
    ):
        return None
    msg_id = message.get("id")
    params = message.get("params")
    if isinstance(msg_id, bool) or not isinstance(msg_id, str | int):
        return None
    if (
        not isinstance(params, dict)
        or not isinstance(params.get("capabilities"), dict)
        or "processId" not in params
    ):
        return None
    from pi_lsp.server.capabilities import initialize_result

    response = orjson.dumps({"jsonrpc": "2.0", "id": msg_id, "result": initialize_result()})
    return msg_id, b"Content-Length: %d\r\n\r\n%b" % (len(response), response)


class FdReader:
    """Buffered reads straight from a file descriptor.

    ``sys.stdin.buffer`` is avoided on purpose: a daemon thread blocked inside a BufferedReader
    holds its lock, and interpreter shutdown then aborts with "could not acquire lock".
    """

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.buffer = bytearray()
        self.eof = False

    def _fill(self) -> bool:
        if self.eof:
            return False
        chunk = os.read(self.fd, 1 << 16)
        if not chunk:
            self.eof = True
            return False
        self.buffer += chunk
        return True

    def readline(self) -> bytes:
        while (end := self.buffer.find(b"\n")) < 0:
            if not self._fill():
                line = bytes(self.buffer)
                self.buffer.clear()
                return line
        line = bytes(self.buffer[: end + 1])
        del self.buffer[: end + 1]
        return line

    def read(self, size: int) -> bytes:
        while len(self.buffer) < size and self._fill():
            pass
        data = bytes(self.buffer[:size])
        del self.buffer[:size]
        return data


class _StdoutWriter:
    def __init__(self, stream: IO[bytes]) -> None:
        self.stream = stream

    def write(self, data: bytes) -> None:
        self.stream.write(data)
        self.stream.flush()

    def close(self) -> None:
        self.stream.close()


def serve_stdio() -> int:
    """Serve one editor over stdin/stdout until ``exit`` or end of input; returns the exit code."""
    import asyncio

    stdin = FdReader(sys.stdin.fileno())
    stdout = sys.stdout.buffer
    sys.stdout = sys.stderr  # nothing but protocol messages may reach the real stdout
    importer = threading.Thread(target=_import_server, name="pi-lsp import", daemon=True)
    importer.start()
    first = read_frame(stdin)
    early = _early_initialize(first) if first is not None else None
    if early is not None:
        stdout.write(early[1])
        stdout.flush()
    importer.join()
    try:
        return asyncio.run(_stdio_main(stdin, _StdoutWriter(stdout), first, early[0] if early else None))
    except KeyboardInterrupt:
        return 0
    except SystemExit as exit_:
        return exit_.code if isinstance(exit_.code, int) else 0


async def _stdio_main(stdin: FdReader, writer: _StdoutWriter, first: bytes | None, answered: Any) -> int:
    import asyncio

    from pi_lsp.server.app import create_language_server
    from pi_lsp.service.sessions import PiService

    service = PiService()
    server, _client = create_language_server(service)
    protocol = server.protocol
    protocol.set_writer(writer)
    if answered is not None:
        protocol.suppressed_responses.add(answered)
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[bytes | None] = asyncio.Queue()

    def pump() -> None:  # a daemon thread, so a client that never closes stdin cannot block exit
        while True:
            try:
                body = read_frame(stdin)
            except (OSError, ValueError):
                body = None
            loop.call_soon_threadsafe(queue.put_nowait, body)
            if body is None:
                return

    if first is not None:
        _dispatch(protocol.receive, first)
        threading.Thread(target=pump, name="pi-lsp stdin", daemon=True).start()
        while (body := await queue.get()) is not None:
            _dispatch(protocol.receive, body)
    await service.close()
    return 0 if protocol._shutdown else 1


def _dispatch(receive: Callable[[bytes], None], body: bytes) -> None:
    try:
        receive(body)
    except SystemExit:
        raise
    except Exception:
        log.exception("could not handle a message")


def _split_address(address: str) -> tuple[str, int]:
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit():
        raise ValueError(f"expected HOST:PORT, got {address!r}")
    return host.strip("[]"), int(port)


async def _connection(
    service: PiService,
    setup: Callable[[PiLanguageServer], None],
    next_body: Callable[[], Awaitable[bytes | None]],
) -> None:
    """Run one TCP/WebSocket connection until it closes or sends ``exit``."""
    import asyncio

    from pi_lsp.server.app import create_language_server

    server, client = create_language_server(service)
    closed = asyncio.Event()
    server.protocol.on_exit = closed.set
    setup(server)
    try:
        while not closed.is_set():
            reading = asyncio.ensure_future(next_body())
            stopping = asyncio.ensure_future(closed.wait())
            done, _ = await asyncio.wait({reading, stopping}, return_when=asyncio.FIRST_COMPLETED)
            if reading not in done:
                reading.cancel()
                break
            stopping.cancel()
            body = reading.result()
            if body is None:
                break
            _dispatch(server.protocol.receive, body)
    finally:
        await service.disconnect(client)


def serve_tcp(address: str) -> int:
    import asyncio

    host, port = _split_address(address)
    _import_server()
    return asyncio.run(_tcp_main(host, port))


async def _tcp_main(host: str, port: int) -> int:
    import asyncio

    from pi_lsp.service.sessions import PiService

    service = PiService()

    async def on_connect(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        log.info("client connected from %s", writer.get_extra_info("peername"))
        try:
            await _connection(
                service, lambda server: server.protocol.set_writer(writer), lambda: read_frame_async(reader)
            )
        finally:
            writer.close()

    tcp = await asyncio.start_server(on_connect, host, port)
    addresses = ", ".join(_format_address(sock.getsockname()) for sock in tcp.sockets)
    print(f"pi-lsp listening on tcp://{addresses}", file=sys.stderr, flush=True)
    async with tcp:
        await tcp.serve_forever()
    return 0


def _format_address(name: Any) -> str:
    return f"{name[0]}:{name[1]}" if isinstance(name, tuple) else str(name)


class _WebSocketWriter:
    def __init__(self, socket: Any) -> None:
        self.socket = socket

    def write(self, data: bytes) -> Awaitable[None]:
        result: Awaitable[None] = self.socket.send(data.decode("utf-8"))
        return result

    def close(self) -> Awaitable[None]:
        result: Awaitable[None] = self.socket.close()
        return result


def serve_ws(address: str) -> int:
    """WebSocket transport; needs the optional ``websockets`` package (pygls' ``ws`` extra)."""
    import asyncio

    host, port = _split_address(address)
    try:
        websockets_server = importlib.import_module("websockets.asyncio.server")
        websockets_exceptions = importlib.import_module("websockets.exceptions")
    except ImportError:
        print("pi-lsp: --ws needs the 'websockets' package (pip install websockets)", file=sys.stderr)
        return 2
    _import_server()
    return asyncio.run(_ws_main(host, port, websockets_server.serve, websockets_exceptions.ConnectionClosed))


async def _ws_main(host: str, port: int, serve: Any, connection_closed: type[Exception]) -> int:

    from pi_lsp.service.sessions import PiService

    service = PiService()

    async def on_connect(socket: Any) -> None:
        async def next_body() -> bytes | None:
            try:
                data = await socket.recv()
            except connection_closed:
                return None
            return data.encode("utf-8") if isinstance(data, str) else bytes(data)

        await _connection(
            service, lambda server: server.protocol.set_writer(_WebSocketWriter(socket), False), next_body
        )

    async with serve(on_connect, host, port) as ws:
        addresses = ", ".join(_format_address(sock.getsockname()) for sock in ws.sockets)
        print(f"pi-lsp listening on ws://{addresses}", file=sys.stderr, flush=True)
        await ws.serve_forever()
    return 0
