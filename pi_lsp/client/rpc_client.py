"""A tiny asyncio JSON-RPC client that starts the server as a subprocess and talks LSP framing.

Used by ``pi-lsp demo``, the benchmark and the tests that need byte-level control (no ``params``
member, malformed JSON). It depends only on orjson, so it measures the server and not a client
library; big responses can be received as raw bytes (``raw=True``) without parsing them.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import os
import sys
from collections.abc import Mapping
from typing import Any

import orjson

from pi_lsp.framing import Body, FrameError, read_frame_async
from pi_lsp.session.jsonl import loads_line


class RpcError(Exception):
    """An error response: ``code``, ``message`` and ``data`` as the server sent them."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.data = data


def server_command() -> list[str]:
    """The command that starts this installation's server over stdio."""
    return [sys.executable, "-m", "pi_lsp"]


class RpcClient:
    """One connection to a server (its subprocess over stdio, or a TCP socket)."""

    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        process: asyncio.subprocess.Process | None = None,
        token: str | None = None,
    ) -> None:
        self.reader = reader
        self.token = token
        self.writer = writer
        self._process = process
        self.notifications: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self._ids = itertools.count(1)
        self._pending: dict[Any, asyncio.Future[Body]] = {}
        self._read_task = asyncio.ensure_future(self._read_loop())

    @classmethod
    async def start(
        cls,
        command: list[str] | None = None,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        *,
        quiet: bool = False,
        own_session: bool = False,
    ) -> RpcClient:
        """Start the server; ``quiet`` discards its stderr (the log) instead of sharing ours.

        ``own_session`` starts it in a session (and process group) of its own, so signals the
        terminal sends our group (Ctrl-C, Ctrl-\\, a hang-up) reach only us: ``pi-lsp chat``."""
        process = await asyncio.create_subprocess_exec(
            *(command or server_command()),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL if quiet else None,
            env=dict(env) if env is not None else None,
            cwd=cwd,
            limit=1 << 24,
            start_new_session=own_session,
        )
        assert process.stdout is not None and process.stdin is not None
        return cls(process.stdout, process.stdin, process)

    @classmethod
    async def connect(cls, host: str, port: int, token: str | None = None) -> RpcClient:
        """A client of a server started with ``--tcp HOST:PORT``; ``initialize`` sends ``token``."""
        reader, writer = await asyncio.open_connection(host, port, limit=1 << 24)
        return cls(reader, writer, token=token)

    @property
    def process(self) -> asyncio.subprocess.Process:
        assert self._process is not None, "this client did not start its server"
        return self._process

    # ------------------------------------------------------------------ sending

    def send_bytes(self, body: bytes) -> None:
        """Write one framed message body exactly as given."""
        self.writer.write(b"Content-Length: %d\r\n\r\n%b" % (len(body), body))

    def send(self, message: Mapping[str, Any]) -> None:
        try:
            body = orjson.dumps(message)
        except TypeError:  # integers beyond 64 bits: valid JSON that orjson will not write
            import json

            body = json.dumps(message, separators=(",", ":")).encode()
        self.send_bytes(body)

    def notify(self, method: str, params: Any = None) -> None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)

    def request_future(
        self, method: str, params: Any = None, *, omit_params: bool = False
    ) -> tuple[int, asyncio.Future[Body]]:
        """Send a request; returns its id and a future for the raw response body."""
        if self._read_task.done():
            raise ConnectionError("the connection to the server is closed")
        msg_id = next(self._ids)
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": msg_id, "method": method}
        if not omit_params:
            message["params"] = params if params is not None else {}
        future: asyncio.Future[Body] = asyncio.get_running_loop().create_future()
        self._pending[msg_id] = future
        self.send(message)
        return msg_id, future

    def expect(self, msg_id: Any) -> asyncio.Future[Body]:
        """A future for the response to a request sent by hand with :meth:`send_bytes`."""
        future: asyncio.Future[Body] = asyncio.get_running_loop().create_future()
        self._pending[msg_id] = future
        return future

    async def request(
        self, method: str, params: Any = None, *, omit_params: bool = False, timeout: float = 60
    ) -> Any:
        """The result, or RpcError."""
        _, future = self.request_future(method, params, omit_params=omit_params)
        return decode_response(await asyncio.wait_for(future, timeout))

    async def request_raw(self, method: str, params: Any = None, timeout: float = 120) -> Body:
        """The raw response body (for large results that should not be parsed)."""
        _, future = self.request_future(method, params)
        return await asyncio.wait_for(future, timeout)

    async def initialize(self, root: str | None = None, options: Any = None) -> Any:
        params: dict[str, Any] = {"processId": os.getpid(), "capabilities": {}}
        if root is not None:
            params["rootUri"] = "file://" + root
            params["workspaceFolders"] = [{"uri": "file://" + root, "name": os.path.basename(root)}]
        if self.token is not None:
            options = dict(options or {})
            options["pi"] = {**(options.get("pi") or {}), "token": self.token}
        if options is not None:
            params["initializationOptions"] = options
        result = await self.request("initialize", params)
        self.notify("initialized", {})
        return result

    async def next_notification(self, method: str, timeout: float = 10) -> dict[str, Any]:
        """The params of the next notification called ``method`` (others are skipped)."""

        async def wait() -> dict[str, Any]:
            while True:
                message = await self.notifications.get()
                if message.get("method") == method:
                    params: dict[str, Any] = message.get("params") or {}
                    return params

        return await asyncio.wait_for(wait(), timeout)

    def drain_notifications(self) -> list[dict[str, Any]]:
        items = []
        while not self.notifications.empty():
            items.append(self.notifications.get_nowait())
        return items

    async def close(self, timeout: float = 10) -> int | None:
        """``shutdown`` + ``exit`` and wait for the process (killed if it does not stop)."""
        with contextlib.suppress(Exception):
            await self.request("shutdown", None, omit_params=True, timeout=timeout)
            self.notify("exit")
        with contextlib.suppress(Exception):
            self.writer.close()
        self._read_task.cancel()
        if self._process is None:
            return None
        try:
            await asyncio.wait_for(self._process.wait(), timeout)
        except TimeoutError:
            self._process.kill()
            await self._process.wait()
        return self._process.returncode

    # ------------------------------------------------------------------ receiving

    async def _read_loop(self) -> None:
        with contextlib.suppress(FrameError, ConnectionError):
            await self._read_messages()
        for future in self._pending.values():
            if not future.done():
                future.set_exception(ConnectionError("the server closed its output"))

    async def _read_messages(self) -> None:
        # The server's answers may be as big as the sessions they carry: no size limit here.
        while (body := await read_frame_async(self.reader, sys.maxsize, trusted=True)) is not None:
            msg_id = _peek_id(body)
            if msg_id is not _NO_ID and msg_id in self._pending:
                future = self._pending.pop(msg_id)
                if not future.done():
                    future.set_result(body)
                continue
            with contextlib.suppress(ValueError, RecursionError):
                message = loads_line(body)  # a lone surrogate in a text is valid JSON
                if isinstance(message, dict) and "method" in message:
                    self.notifications.put_nowait(message)
                elif isinstance(message, dict) and message.get("id") is None and None in self._pending:
                    self._pending.pop(None).set_result(body)


_NO_ID = object()
_ID_PREFIX = b'{"jsonrpc":"2.0","id":'


def _peek_id(body: Body) -> Any:
    """The id of a response from its first bytes, without parsing a possibly huge body."""
    if body.startswith(_ID_PREFIX):
        end = body.find(b",", len(_ID_PREFIX))
        if end > 0:
            with contextlib.suppress(orjson.JSONDecodeError):
                msg_id = orjson.loads(body[len(_ID_PREFIX) : end])
                # orjson (and JSON.parse) read an integer beyond 64 bits as a float: read it exactly
                return json.loads(body[len(_ID_PREFIX) : end]) if isinstance(msg_id, float) else msg_id
    with contextlib.suppress(ValueError, RecursionError):
        message = loads_line(body)
        if isinstance(message, dict) and "method" not in message and "id" in message:
            return message["id"]
    return _NO_ID


def decode_response(body: Body) -> Any:
    message = loads_line(body)  # orjson's reader refuses the lone surrogates JSON allows
    if "error" in message:
        error = message["error"]
        raise RpcError(error.get("code"), error.get("message"), error.get("data"))
    return message.get("result")
