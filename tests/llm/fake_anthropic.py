"""A loopback fake of Anthropic's Messages API for exercising the real SDK end to end.

An asyncio HTTP/1.1 server on 127.0.0.1 (random port). Each incoming request takes the next
scripted :class:`Reply` (the last one repeats), or the one ``route`` picks for it, and is
recorded (headers + JSON body). Replies can
be plain JSON, an SSE stream (chunked), a stream that is cut off or stalls, or no answer at all.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Reply:
    """One scripted answer. ``kind``: json | sse | hang."""

    kind: str = "sse"
    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    events: list[str] = field(default_factory=list)  # raw SSE frames ("event: x\ndata: {...}\n\n")
    cut_after: int | None = None  # close the socket abruptly after this many frames
    stall_after: int | None = None  # stop sending (connection open) after this many frames
    event_delay: float = 0.0


@dataclass
class Recorded:
    method: str
    path: str
    headers: dict[str, str]
    body: Any


def sse(event: str, data: Any) -> str:
    payload = data if isinstance(data, str) else json.dumps(data)
    return f"event: {event}\ndata: {payload}\n\n"


def text_stream(*texts: str, model: str = "claude-test", stop_reason: str = "end_turn") -> list[str]:
    """Frames of a well-formed streamed message whose text blocks are ``texts``."""
    frames = [
        sse("message_start", {"type": "message_start", "message": {
            "id": "msg_1", "type": "message", "role": "assistant", "model": model, "content": [],
            "stop_reason": None, "stop_sequence": None, "usage": {"input_tokens": 10, "output_tokens": 1}}}),
        sse("ping", {"type": "ping"}),
        sse("content_block_start", {"type": "content_block_start", "index": 0,
                                    "content_block": {"type": "thinking", "thinking": "", "signature": ""}}),
        sse("content_block_delta", {"type": "content_block_delta", "index": 0,
                                    "delta": {"type": "thinking_delta", "thinking": "hmm"}}),
        sse("content_block_stop", {"type": "content_block_stop", "index": 0}),
    ]  # fmt: skip
    for offset, text in enumerate(texts, start=1):
        half = len(text) // 2
        frames += [
            sse("content_block_start", {"type": "content_block_start", "index": offset,
                                        "content_block": {"type": "text", "text": ""}}),
            sse("content_block_delta", {"type": "content_block_delta", "index": offset,
                                        "delta": {"type": "text_delta", "text": text[:half]}}),
            sse("content_block_delta", {"type": "content_block_delta", "index": offset,
                                        "delta": {"type": "text_delta", "text": text[half:]}}),
            sse("content_block_stop", {"type": "content_block_stop", "index": offset}),
        ]  # fmt: skip
    frames += [
        sse("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop_reason,
                                                                 "stop_sequence": None},
                              "usage": {"output_tokens": 42}}),
        sse("message_stop", {"type": "message_stop"}),
    ]  # fmt: skip
    return frames


def message_json(*texts: str, model: str = "claude-test") -> dict[str, Any]:
    """A non-streamed Messages API response body."""
    return {
        "id": "msg_1", "type": "message", "role": "assistant", "model": model,
        "content": [{"type": "text", "text": t} for t in texts],
        "stop_reason": "end_turn", "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 5},
    }  # fmt: skip


def error_json(kind: str, message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": kind, "message": message}}


_REASONS = {200: "OK", 400: "Bad Request", 401: "Unauthorized", 429: "Too Many Requests",
            500: "Internal Server Error", 529: "Overloaded"}  # fmt: skip


class FakeAnthropic:
    """``async with FakeAnthropic([...replies]) as fake:`` then point a client at ``fake.url``."""

    def __init__(
        self, replies: list[Reply] | None = None, route: Callable[[Recorded], Reply] | None = None
    ) -> None:
        self.replies = list(replies or [Reply(events=text_stream("ok"))])
        self.route = route
        self.requests: list[Recorded] = []
        self.first_frames_sent = asyncio.Event()
        self.client_disconnected = asyncio.Event()
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self.port = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def __aenter__(self) -> FakeAnthropic:
        self._server = await asyncio.start_server(self._on_connect, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.close()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self._server.wait_closed(), 1)

    def _on_connect(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.ensure_future(self._serve(reader, writer))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                lines = head.decode("latin-1").split("\r\n")
                method, path, _ = lines[0].split(" ", 2)
                headers = {
                    k.strip().lower(): v.strip() for k, v in (ln.split(":", 1) for ln in lines[1:] if ln)
                }
                raw = await reader.readexactly(int(headers.get("content-length", "0")))
                self.requests.append(Recorded(method, path, headers, json.loads(raw) if raw else None))
                if self.route is not None:
                    reply = self.route(self.requests[-1])
                else:
                    reply = self.replies[min(len(self.requests) - 1, len(self.replies) - 1)]
                if not await self._answer(reply, reader, writer):
                    return
        except (asyncio.IncompleteReadError, ConnectionError):
            return
        finally:
            writer.close()

    async def _answer(self, reply: Reply, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        """Send one reply; False when the connection must end afterwards."""
        if reply.kind == "hang":
            await self._wait_for_disconnect(reader)
            return False
        reason = _REASONS.get(reply.status, "Status")
        if reply.kind == "json":
            payload = json.dumps(reply.body).encode()
            head = [f"HTTP/1.1 {reply.status} {reason}", "content-type: application/json",
                    f"content-length: {len(payload)}", "request-id: req_fake"]  # fmt: skip
            head += [f"{k}: {v}" for k, v in reply.headers.items()]
            writer.write(("\r\n".join(head) + "\r\n\r\n").encode() + payload)
            await writer.drain()
            return True
        head = [f"HTTP/1.1 {reply.status} {reason}", "content-type: text/event-stream",
                "transfer-encoding: chunked", "cache-control: no-cache"]  # fmt: skip
        head += [f"{k}: {v}" for k, v in reply.headers.items()]
        writer.write(("\r\n".join(head) + "\r\n\r\n").encode())
        for number, frame in enumerate(reply.events):
            if reply.cut_after is not None and number == reply.cut_after:
                writer.transport.abort()  # no terminating chunk: an incomplete body
                return False
            if reply.stall_after is not None and number == reply.stall_after:
                self.first_frames_sent.set()
                await self._wait_for_disconnect(reader)
                return False
            data = frame.encode()
            writer.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            await writer.drain()
            if reply.event_delay:
                await asyncio.sleep(reply.event_delay)
        writer.write(b"0\r\n\r\n")
        await writer.drain()
        return True

    async def _wait_for_disconnect(self, reader: asyncio.StreamReader) -> None:
        with contextlib.suppress(ConnectionError):
            while await reader.read(1024):
                pass
        self.client_disconnected.set()
