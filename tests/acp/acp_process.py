"""A bare ACP client for tests: the real ``pi-lsp acp`` process, raw lines in and out."""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
from collections.abc import Mapping
from typing import Any


class AcpProcess:
    """``python -m pi_lsp acp`` over pipes: send lines, await answers by id, collect notifications."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.answers: dict[Any, dict[str, Any]] = {}
        self.unaddressed: list[dict[str, Any]] = []  # answers with id null (parse errors)
        self.notifications: list[dict[str, Any]] = []
        self.requests: list[dict[str, Any]] = []  # agent → client requests
        self._changed = asyncio.Event()
        self._ids = 1000
        self._reader = asyncio.ensure_future(self._read())

    @classmethod
    async def start(cls, env: Mapping[str, str], cwd: str | None = None, *args: str) -> AcpProcess:
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "pi_lsp", "acp", *args,
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL,
            env=dict(env), cwd=cwd, limit=1 << 26,
        )  # fmt: skip
        return cls(process)

    async def _read(self) -> None:
        assert self.process.stdout is not None
        while line := await self.process.stdout.readline():
            message = json.loads(line)
            if "method" in message and "id" in message:
                self.requests.append(message)
            elif "method" in message:
                self.notifications.append(message)
            elif message.get("id") is None:
                self.unaddressed.append(message)
            else:
                self.answers[message["id"]] = message
            self._changed.set()

    def send_line(self, line: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(line + b"\n")

    def send(self, message: Mapping[str, Any]) -> None:
        self.send_line(json.dumps(message).encode())

    async def request(self, method: str, params: Any = None, timeout: float = 60) -> dict[str, Any]:
        """The whole answer (``result`` or ``error``) to one request."""
        self._ids += 1
        request_id = self._ids
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        return await self.answer(request_id, timeout)

    async def answer(self, request_id: Any, timeout: float = 60) -> dict[str, Any]:
        async def wait() -> dict[str, Any]:
            while request_id not in self.answers:
                self._changed.clear()
                await self._changed.wait()
            return self.answers[request_id]

        return await asyncio.wait_for(wait(), timeout)

    async def wait_for(self, predicate: Any, timeout: float = 30) -> None:
        async def wait() -> None:
            while not predicate(self):
                self._changed.clear()
                await self._changed.wait()

        await asyncio.wait_for(wait(), timeout)

    async def close(self) -> int:
        """End input (the client goes away); the exit status."""
        with contextlib.suppress(Exception):
            assert self.process.stdin is not None
            self.process.stdin.close()
        try:
            code = await asyncio.wait_for(self.process.wait(), 20)
        except TimeoutError:
            self.process.kill()
            code = await self.process.wait()
        self._reader.cancel()
        return code
