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


# ---------------------------------------------------------------------------------------------
# Scripted assistant replies (content blocks, usage, stop reason), errors and faults


@dataclass(frozen=True)
class Text:
    text: str
    chunks: int = 2


@dataclass(frozen=True)
class Thinking:
    thinking: str
    signature: str = "SIG_test"
    chunks: int = 2


@dataclass(frozen=True)
class Redacted:
    data: str


@dataclass(frozen=True)
class ToolUse:
    id: str
    name: str
    input: dict[str, Any]
    chunks: int = 3
    raw_json: str | None = None  # send this text instead of json.dumps(input)


Block = Text | Thinking | Redacted | ToolUse


def _pieces(text: str, count: int) -> list[str]:
    if count <= 1 or len(text) < 2:
        return [text]
    size = max(1, -(-len(text) // count))
    return [text[i : i + size] for i in range(0, len(text), size)]


def _block_frames(index: int, block: Block) -> list[str]:
    def start(content_block: dict[str, Any]) -> str:
        return sse("content_block_start", {"type": "content_block_start", "index": index,
                                           "content_block": content_block})  # fmt: skip

    def delta(payload: dict[str, Any]) -> str:
        return sse("content_block_delta", {"type": "content_block_delta", "index": index, "delta": payload})

    frames: list[str]
    if isinstance(block, Text):
        frames = [start({"type": "text", "text": ""})]
        frames += [delta({"type": "text_delta", "text": p}) for p in _pieces(block.text, block.chunks)]
    elif isinstance(block, Thinking):
        frames = [start({"type": "thinking", "thinking": "", "signature": ""})]
        frames += [
            delta({"type": "thinking_delta", "thinking": p}) for p in _pieces(block.thinking, block.chunks)
        ]
        if block.signature:
            frames.append(delta({"type": "signature_delta", "signature": block.signature}))
    elif isinstance(block, Redacted):
        frames = [start({"type": "redacted_thinking", "data": block.data})]
    else:
        frames = [start({"type": "tool_use", "id": block.id, "name": block.name, "input": {}})]
        text = block.raw_json if block.raw_json is not None else json.dumps(block.input)
        frames += [
            delta({"type": "input_json_delta", "partial_json": p}) for p in _pieces(text, block.chunks)
        ]
    frames.append(sse("content_block_stop", {"type": "content_block_stop", "index": index}))
    return frames


def assistant_stream(
    *blocks: Block,
    message_id: str = "msg_01",
    model: str = "claude-sonnet-4-5",
    stop_reason: str | None = None,
    input_tokens: int = 100,
    output_tokens: int = 20,
    cache_read: int = 0,
    cache_write: int = 0,
    ping: bool = True,
) -> list[str]:
    """Frames of one well-formed streamed reply. ``stop_reason`` defaults to ``tool_use`` when a
    block is a tool call, else ``end_turn``. Usage arrives as Anthropic sends it: input and cache
    counts in ``message_start``, the output count in ``message_delta``."""
    if stop_reason is None:
        stop_reason = "tool_use" if any(isinstance(b, ToolUse) for b in blocks) else "end_turn"
    usage = {"input_tokens": input_tokens, "output_tokens": 1,
             "cache_read_input_tokens": cache_read, "cache_creation_input_tokens": cache_write}  # fmt: skip
    frames = [sse("message_start", {"type": "message_start", "message": {
        "id": message_id, "type": "message", "role": "assistant", "model": model, "content": [],
        "stop_reason": None, "stop_sequence": None, "usage": usage}})]  # fmt: skip
    if ping:
        frames.append(sse("ping", {"type": "ping"}))
    for index, block in enumerate(blocks):
        frames += _block_frames(index, block)
    frames += [
        sse("message_delta", {"type": "message_delta",
                              "delta": {"stop_reason": stop_reason, "stop_sequence": None},
                              "usage": {"output_tokens": output_tokens}}),
        sse("message_stop", {"type": "message_stop"}),
    ]  # fmt: skip
    return frames


def error_event(kind: str, message: str) -> str:
    """An SSE ``error`` frame, as Anthropic sends it mid-stream (e.g. ``overloaded_error``)."""
    return sse("error", error_json(kind, message))


def error_reply(status: int, kind: str, message: str, *, retry_after: float | None = None) -> Reply:
    """An HTTP error answer with Anthropic's error body (and ``retry-after`` when given)."""
    headers = {"retry-after": f"{retry_after:g}"} if retry_after is not None else {}
    return Reply(kind="json", status=status, body=error_json(kind, message), headers=headers)


_REASONS = {200: "OK", 400: "Bad Request", 401: "Unauthorized", 413: "Payload Too Large",
            429: "Too Many Requests", 500: "Internal Server Error", 503: "Service Unavailable",
            529: "Overloaded"}  # fmt: skip


class FakeAnthropic:
    """``async with FakeAnthropic([...replies]) as fake:`` then point a client at ``fake.url``."""

    def __init__(
        self, replies: list[Reply] | None = None, route: Callable[[Recorded], Reply] | None = None
    ) -> None:
        self.replies = list(replies or [Reply(events=text_stream("ok"))])
        self.route = route
        self.requests: list[Recorded] = []
        self.request_bytes: list[bytes] = []  # each request's body as sent
        self.first_frames_sent = asyncio.Event()
        self.client_disconnected = asyncio.Event()
        self.connections = 0  # TCP connections accepted (a client reusing its pool opens one)
        self.connections_closed = 0  # of those, closed by the client
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
        self.connections += 1
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
                self.request_bytes.append(raw)
                self.requests.append(Recorded(method, path, headers, json.loads(raw) if raw else None))
                if self.route is not None:
                    reply = self.route(self.requests[-1])
                else:
                    reply = self.replies[min(len(self.requests) - 1, len(self.replies) - 1)]
                if not await self._answer(reply, reader, writer):
                    return
        except asyncio.IncompleteReadError as end:
            if not end.partial:  # the client closed the connection between requests
                self.connections_closed += 1
            return
        except ConnectionError:
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
