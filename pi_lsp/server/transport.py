"""The stdio transport (one editor, the one that started the server); sockets are in ``network``.

This module imports nothing heavy at load time. Start-up over stdio, so that an editor sees the
server ready and gets its first sessions before pygls and lsprotocol are loaded (~0.4 s):

1. the first message is read; an ``initialize`` request is answered at once with the fixed
   capabilities (it is replayed into pygls later with its duplicate response suppressed);
2. the services are built (the agent, LLM client, compaction and prompt services load on first
   use, see ``service/build.py``) and the session requests that follow are answered by
   :mod:`pi_lsp.server.early`;
3. pygls is imported in a thread once nothing is waiting (or as soon as a message needs it), then
   takes the connection: ``initialize`` and every message held meanwhile are fed to it in order.

The cyclic garbage collector is paused from the start until pygls has the connection: every
object start-up makes (modules, classes, functions, the first session) lives on, and the passes
the collector would make over them meanwhile are ~7 ms of the first answer. What is alive then is
frozen (:mod:`pi_lsp.gcpause`), so later passes skip it too.

Framing is LSP's (:mod:`pi_lsp.framing`); a stream framed wrongly ends the server with a
clear error on stderr.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
from collections.abc import Callable, Sequence
from typing import IO, TYPE_CHECKING, Any

import orjson

from pi_lsp.framing import FrameError, read_frame
from pi_lsp.full_writes import write_all, write_all_pieces
from pi_lsp.gcpause import pause_collector

if TYPE_CHECKING:
    import asyncio

    from pi_lsp.service.build import PiService
    from pi_lsp.service.registry import Client

log = logging.getLogger(__name__)


def import_server() -> None:
    """The heavy imports, done off the event loop's thread while early requests are answered."""
    import pi_lsp.server.app  # noqa: F401  (pulls in pygls and lsprotocol)


def prepare_takeover(initialize: Any) -> Any:
    """What pygls' takeover of a stdio connection costs, done in the import thread so that the
    event loop goes on answering meanwhile (it was ~0.2 s of the loop at takeover): the imports
    (pygls, lsprotocol, and the prompt service's modules, ~80 ms: its features are registered at
    takeover; msgspec, for the check of what a first context or page sends) and the connection's
    converter, made ready for ``initialize`` (the message itself, replayed into pygls next;
    :func:`pi_lsp.server.app.ready_converter`). Returns the converter."""
    import pi_lsp.service.prompt  # noqa: F401
    from pi_lsp.server.app import ready_converter
    from pi_lsp.session.json_check import value_reader

    converter = ready_converter(initialize)
    value_reader()  # msgspec, for the check of the first context or page sent
    return converter


def preload_usage(tokenizer: str) -> None:
    """What the first context usage figure loads, loaded once pygls has the connection, in a thread
    (an editor shows usage with its first session: the gauge, the statusline): the compaction
    service's modules (15–36 ms), which a first ``pi/buildContext`` or ``pi/getSessionStats`` paid
    itself, and the tokenizer's tables (tiktoken's: ~77 ms, ~45 MB; the workspace's system prompt
    usually loaded them already, and the process shares one)."""
    import pi_lsp.service.compaction  # noqa: F401
    from pi_lsp.compaction.tokenizers import shared_tokenizer

    shared_tokenizer(tokenizer)


def _early_initialize(body: bytes) -> Any:
    """If ``body`` is a well-formed ``initialize`` request, its id, params and our response; else None."""
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
    return msg_id, params, b"Content-Length: %d\r\n\r\n%b" % (len(response), response)


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
    """Blocking writes of whole messages to the protocol's output.

    Straight to the descriptor with :func:`~pi_lsp.full_writes.write_all`: ``sys.stdout.buffer`` is
    a raw ``FileIO`` under ``PYTHONUNBUFFERED``, whose ``write`` may take part of a big answer.
    """

    def __init__(self, stream: IO[bytes]) -> None:
        self.stream = stream
        self.fd = stream.fileno()
        widen_pipe(self.fd)

    def write(self, data: bytes) -> None:
        write_all(self.fd, data)

    def write_pieces(self, pieces: Sequence[bytes | memoryview]) -> None:
        write_all_pieces(self.fd, pieces)

    def close(self) -> None:
        self.stream.close()


PIPE_BYTES = 1 << 20
"""The output pipe's size asked for (Linux's default is 64 KB; 1 MB is what an unprivileged process
may ask for by default). A 30 MB context then crosses in 30 fills instead of 460, each one a wake-up
of both ends: 25–37 ms instead of 41–47 to a reader that keeps up, on a 2-CPU VM."""


def widen_pipe(fd: int) -> None:
    """Ask for a :data:`PIPE_BYTES` buffer where ``fd`` is a pipe; where it cannot be had (another
    system, a lower ``/proc/sys/fs/pipe-max-size``, the user's pipe quota spent) the pipe stays as
    it is, which only costs speed."""
    import fcntl
    import stat

    set_size = getattr(fcntl, "F_SETPIPE_SZ", None)
    try:
        if set_size is not None and stat.S_ISFIFO(os.fstat(fd).st_mode):
            fcntl.fcntl(fd, set_size, PIPE_BYTES)
    except OSError:
        pass


def serve_stdio() -> int:
    """Serve one editor over stdin/stdout until ``exit`` or end of input; returns the exit code."""
    resume_collector = pause_collector()
    import asyncio

    stdin = FdReader(sys.stdin.fileno())
    sys.stdout.flush()
    stdout = _StdoutWriter(sys.stdout.buffer)
    sys.stdout = sys.stderr  # nothing but protocol messages may reach the real stdout
    first = _next_frame(stdin)
    early = _early_initialize(first) if first is not None else None
    if early is not None:
        stdout.write(early[2])
    try:
        return asyncio.run(_stdio_main(stdin, stdout, first, early, resume_collector))
    except KeyboardInterrupt:
        return 0
    except SystemExit as exit_:
        return exit_.code if isinstance(exit_.code, int) else 0


async def _stdio_main(
    stdin: FdReader,
    writer: _StdoutWriter,
    first: bytes | None,
    early: Any,
    resume_collector: Callable[[], None],
) -> int:
    import asyncio

    from pi_lsp.service.build import build_service

    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[bytes | None] = asyncio.Queue()

    def pump() -> None:  # a daemon thread, so a client that never closes stdin cannot block exit
        while True:
            body = _next_frame(stdin)
            loop.call_soon_threadsafe(queue.put_nowait, body)
            if body is None:
                return

    if first is not None:
        threading.Thread(target=pump, name="pi-lsp stdin", daemon=True).start()
    service = build_service()
    client: Client | None = None
    held: list[bytes | None] = []
    if early is not None:  # answered: serve the first session requests while pygls loads
        client, held, converter = await _serve_early(service, early, writer, queue)
    else:
        converter = await loop.run_in_executor(None, prepare_takeover, None)

    from pi_lsp.server.app import create_language_server

    server, connected = create_language_server(service, client, converter)
    resume_collector()  # start-up is over: pygls has the connection from here
    preloading = loop.run_in_executor(None, preload_usage, connected.settings.tokenizer)
    preloading.add_done_callback(_log_failure)
    protocol = server.protocol
    protocol.set_writer(writer)
    if early is not None:
        protocol.suppressed_responses.add(early[0])
    try:
        if first is not None:
            dispatch(protocol.receive, first)
            for body in held:
                if body is None:
                    break
                dispatch(protocol.receive, body)
            else:
                while (body := await queue.get()) is not None:
                    dispatch(protocol.receive, body)
    except SystemExit:  # `exit`: the requests asyncio now cancels are not waited for (a stuck write)
        service.host.closing = True
        raise
    await service.close()
    return 0 if protocol._shutdown else 1


async def _serve_early(
    service: PiService, early: Any, writer: _StdoutWriter, queue: asyncio.Queue[bytes | None]
) -> tuple[Client, list[bytes | None], Any]:
    """Answer early requests until pygls is imported (``early``: the answered ``initialize``'s id,
    params and response); the client, the messages held for pygls and the connection's converter."""
    import asyncio

    from pi_lsp.server.context import Context
    from pi_lsp.server.early import EarlyPhase
    from pi_lsp.server.initialize import apply_initialize
    from pi_lsp.service.registry import Client

    loop = asyncio.get_running_loop()
    client = Client()
    service.connect(client)
    phase = EarlyPhase(Context(service, client), writer)
    client.notify = phase.notify
    params = early[1]
    await apply_initialize(client, params)
    initialize = {"jsonrpc": "2.0", "id": early[0], "method": "initialize", "params": params}
    imported: asyncio.Future[Any] | None = None
    while imported is None or not imported.done():
        if imported is None and (phase.blocked or (phase.idle and queue.empty())):
            imported = loop.run_in_executor(
                None, prepare_takeover, initialize
            )  # nothing waits: the GIL is free
        get = asyncio.ensure_future(queue.get())
        waits: set[asyncio.Future[Any]] = {get, *phase.pending}
        if imported is not None:
            waits.add(imported)
        await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        if get.done():
            phase.offer(get.result())
        else:
            get.cancel()
    return client, phase.held, imported.result()


def _log_failure(done: asyncio.Future[Any]) -> None:
    if not done.cancelled() and (error := done.exception()) is not None:
        log.warning("could not load what the first usage figure needs ahead of it: %s", error)


def _next_frame(stdin: FdReader) -> bytes | None:
    """The next body; None at end of input or when the editor's framing is broken (said on stderr)."""
    try:
        return read_frame(stdin)
    except FrameError as error:
        log.error("stdin is not LSP framing, stopping: %s", error)
    except OSError as error:
        log.error("could not read stdin: %s", error)
    return None


def dispatch(receive: Callable[[bytes], None], body: bytes) -> None:
    try:
        receive(body)
    except SystemExit:
        raise
    except Exception:
        log.exception("could not handle a message")
