"""One streamed Messages API call folded into pi's ``AssistantMessage``, with pi's events.

The HTTP request goes through the real ``anthropic`` SDK (its headers, retries of 408/409/429/5xx
with ``retry-after``, timeouts), with the body encoded once by us (``MessagesRequest.body_bytes``:
orjson, pi's key order) rather than copied and re-encoded by the SDK; the SSE body is read line by
line and interpreted as pi 0.73.1's Anthropic provider interprets it, so the message, the event
order and the error texts are pi's:

- events: ``start`` once the response headers arrived, then ``text_*``, ``thinking_*`` and
  ``toolcall_*`` (``*_start`` / ``*_delta`` / ``*_end`` per content block), then ``done`` or
  ``error``. A failure before the response (HTTP error, refused connection, abort) gives only
  ``error``.
- the message never raises out: failures end it with ``stopReason`` ``"error"`` (or ``"aborted"``
  when ``abort`` was set) and pi's ``errorMessage``: ``"<status> <body>"`` as the JavaScript SDK
  writes it, ``"Connection error."``, ``"Request timed out."``, ``"terminated"`` for a connection
  cut mid-body, ``"Anthropic stream ended before message_stop"``, the raw data of an SSE
  ``error`` event, ``"Request was aborted."`` (abort before the response) or ``"This operation
  was aborted"`` (abort while streaming).

Unlike pi, a stalled body times out (pi's SDK timer stops at the response headers).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final

from pi_lsp.aborts import done_before_abort
from pi_lsp.jscompat import js_stringify, js_truthy
from pi_lsp.llm.models import API, PROVIDER, ModelInfo, calculate_cost, empty_usage
from pi_lsp.llm.partial_json import parse_json_with_repair, parse_streaming_json, v8_json_error
from pi_lsp.llm.request import MessagesRequest
from pi_lsp.llm.sse import Frame, SseLines, SseState
from pi_lsp.secrets import redact

if TYPE_CHECKING:
    import anthropic

__all__ = [
    "ABORTED_BEFORE_RESPONSE",
    "ABORTED_WHILE_STREAMING",
    "EventSink",
    "is_context_overflow",
    "is_retryable_error",
    "stream_assistant_message",
]

EventSink = Callable[[dict[str, Any]], None]

ABORTED_BEFORE_RESPONSE: Final = "Request was aborted."
ABORTED_WHILE_STREAMING: Final = "This operation was aborted"
ABORT_NOTICED: Final = "Request was aborted"
STREAM_ENDED_EARLY: Final = "Anthropic stream ended before message_stop"
UNKNOWN_ERROR: Final = "An unknown error occurred"
CONNECTION_ERROR: Final = "Connection error."
TIMEOUT_ERROR: Final = "Request timed out."
CONNECTION_CUT: Final = "terminated"
MESSAGES_PATH: Final = "/v1/messages"
_MESSAGE_EVENTS: Final = frozenset({
    "message_start", "message_delta", "message_stop",
    "content_block_start", "content_block_delta", "content_block_stop",
})  # fmt: skip
_STOP_REASONS: Final = {
    "end_turn": "stop", "max_tokens": "length", "tool_use": "toolUse", "refusal": "error",
    "pause_turn": "stop", "stop_sequence": "stop", "sensitive": "error",
}  # fmt: skip


class StreamFailure(Exception):
    """A failure whose text is the ``errorMessage`` pi would store."""


class _Assembler:
    """Builds the assistant message from Anthropic stream events and reports pi's events."""

    def __init__(self, model: ModelInfo, output: dict[str, Any], on_event: EventSink) -> None:
        self.model = model
        self.output = output
        self.emit = on_event
        self.open_blocks: dict[int, int] = {}  # Anthropic block index → content index
        # content index → the texts of its deltas so far (text, thinking or tool-call JSON), put
        # into the block when it ends (or the call fails): adding each to a growing string copied
        # the whole text on every delta, and pi's parse of the JSON after every delta re-parses a
        # long argument each time (the result is the same)
        self.pieces: dict[int, list[Any]] = {}
        self.saw_start = False
        self.saw_stop = False

    @property
    def content(self) -> list[dict[str, Any]]:
        blocks: list[dict[str, Any]] = self.output["content"]
        return blocks

    def handle(self, event: dict[str, Any]) -> None:
        kind = event.get("type")
        if kind == "message_start":
            self.saw_start = True
            self._message_start(event["message"])
        elif kind == "message_stop":
            self.saw_stop = True
        elif kind == "content_block_start":
            self._block_start(event["index"], event["content_block"])
        elif kind == "content_block_delta":
            self._block_delta(event["index"], event["delta"])
        elif kind == "content_block_stop":
            self._block_stop(event["index"])
        elif kind == "message_delta":
            self._message_delta(event)

    def _message_start(self, message: dict[str, Any]) -> None:
        self.output["responseId"] = message.get("id")
        usage = message.get("usage") or {}
        target = self.output["usage"]
        target["input"] = usage.get("input_tokens") or 0
        target["output"] = usage.get("output_tokens") or 0
        target["cacheRead"] = usage.get("cache_read_input_tokens") or 0
        target["cacheWrite"] = usage.get("cache_creation_input_tokens") or 0
        self._totals()

    def _totals(self) -> None:
        usage = self.output["usage"]
        usage["totalTokens"] = usage["input"] + usage["output"] + usage["cacheRead"] + usage["cacheWrite"]
        calculate_cost(self.model, usage)

    def _block_start(self, index: int, block: dict[str, Any]) -> None:
        kind = block.get("type")
        new: dict[str, Any]
        if kind == "text":
            new, event = {"type": "text", "text": ""}, "text_start"
        elif kind == "thinking":
            new, event = {"type": "thinking", "thinking": "", "thinkingSignature": ""}, "thinking_start"
        elif kind == "redacted_thinking":
            new = {"type": "thinking", "thinking": "[Reasoning redacted]",
                   "thinkingSignature": block.get("data"), "redacted": True}  # fmt: skip
            event = "thinking_start"
        elif kind == "tool_use":
            start_input = block.get("input")
            new = {"type": "toolCall", "id": block.get("id"), "name": block.get("name"),
                   "arguments": start_input if start_input is not None else {}}  # fmt: skip
            event = "toolcall_start"
        else:
            return
        self.content.append(new)
        position = len(self.content) - 1
        self.open_blocks.setdefault(index, position)
        self.emit({"type": event, "contentIndex": position})

    def _block_delta(self, index: int, delta: dict[str, Any]) -> None:
        position = self.open_blocks.get(index)
        if position is None:
            return
        block = self.content[position]
        kind, block_type = delta.get("type"), block["type"]
        if kind == "text_delta" and block_type == "text":
            text = delta["text"]
            self._add_text(position, block, "text", text)
            self.emit({"type": "text_delta", "contentIndex": position, "delta": text})
        elif kind == "thinking_delta" and block_type == "thinking":
            text = delta["thinking"]
            self._add_text(position, block, "thinking", text)
            self.emit({"type": "thinking_delta", "contentIndex": position, "delta": text})
        elif kind == "input_json_delta" and block_type == "toolCall":
            self._add(position, delta["partial_json"])
            self.emit({"type": "toolcall_delta", "contentIndex": position, "delta": delta["partial_json"]})
        elif kind == "signature_delta" and block_type == "thinking":
            block["thinkingSignature"] = (block.get("thinkingSignature") or "") + delta["signature"]

    def _add_text(self, position: int, block: dict[str, Any], field: str, text: Any) -> None:
        if type(text) is not str:
            block[field] += text  # the TypeError a string and another value make, as before
        self._add(position, text)

    def _add(self, position: int, text: Any) -> None:
        pieces = self.pieces.get(position)
        if pieces is None:
            self.pieces[position] = [text]
        else:
            pieces.append(text)

    def _finish(self, position: int) -> None:
        """Put what a block's deltas brought into it: its text, or a tool call's parsed arguments
        (also when none came)."""
        pieces = self.pieces.pop(position, None)
        block = self.content[position]
        if block["type"] == "toolCall":
            block["arguments"] = parse_streaming_json("".join(pieces or ()))
        elif pieces is not None:
            block["text" if block["type"] == "text" else "thinking"] += "".join(pieces)

    def _block_stop(self, index: int) -> None:
        position = self.open_blocks.pop(index, None)
        if position is None:
            return
        self._finish(position)
        block = self.content[position]
        if block["type"] == "text":
            self.emit({"type": "text_end", "contentIndex": position, "content": block["text"]})
        elif block["type"] == "thinking":
            self.emit({"type": "thinking_end", "contentIndex": position, "content": block["thinking"]})
        elif block["type"] == "toolCall":
            self.emit({"type": "toolcall_end", "contentIndex": position, "toolCall": block})

    def settle(self) -> None:
        """Give blocks cut off mid-stream the text that arrived, and tool calls the arguments
        parsed from what arrived."""
        for position in list(self.pieces):
            self._finish(position)

    def _message_delta(self, event: dict[str, Any]) -> None:
        reason = (event.get("delta") or {}).get("stop_reason")
        if reason:
            if reason not in _STOP_REASONS:
                raise StreamFailure(f"Unhandled stop reason: {reason}")
            self.output["stopReason"] = _STOP_REASONS[reason]
        usage = event.get("usage")
        if not isinstance(usage, dict):
            raise StreamFailure("Cannot read properties of undefined (reading 'input_tokens')")
        target = self.output["usage"]
        for source, name in (("input_tokens", "input"), ("output_tokens", "output"),
                             ("cache_read_input_tokens", "cacheRead"),
                             ("cache_creation_input_tokens", "cacheWrite")):  # fmt: skip
            if usage.get(source) is not None:
                target[name] = usage[source]
        self._totals()


def _new_message(model: ModelInfo) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": [],
        "api": API,
        "provider": PROVIDER,
        "model": model.id,
        "usage": empty_usage(),
        "stopReason": "stop",
        "timestamp": int(time.time() * 1000),
    }


def _parse_event(name: str | None, data: str, raw: list[str]) -> dict[str, Any] | None:
    """The event object; None for JSON that is no object (pi reads no ``type`` from it and skips it)."""
    try:
        event = parse_json_with_repair(data)
    except json.JSONDecodeError as error:
        raw_text = "\\n".join(raw)
        reason = v8_json_error(error)
        raise StreamFailure(
            f"Could not parse Anthropic SSE event {name}: {reason}; data={data}; raw={raw_text}"
        ) from None
    except ValueError as error:
        raise StreamFailure(f"Could not parse Anthropic SSE event {name}: {error}; data={data}") from None
    if event is None:
        raw_text = "\\n".join(raw)
        raise StreamFailure(
            f"Could not parse Anthropic SSE event {name}: Cannot read properties of null (reading 'type'); "
            f"data={data}; raw={raw_text}"
        )
    return event if isinstance(event, dict) else None


async def _consume(
    client: anthropic.AsyncAnthropic, request: MessagesRequest, assembler: _Assembler, phase: list[str]
) -> None:
    import httpx2

    from pi_lsp.llm.http1 import body_parts

    response: httpx2.Response = await client.post(
        MESSAGES_PATH,
        cast_to=httpx2.Response,  # the response unread: its SSE lines are read below
        content=request.body_bytes(),
        options={"headers": request.headers},
        stream=True,
    )
    try:
        phase[0] = "streaming"
        assembler.emit({"type": "start"})
        splitter, state = SseLines(), SseState()
        async for chunk in body_parts(response):
            _fold(splitter.feed(chunk), state, assembler)
        _fold(splitter.end(), state, assembler)
        frame = state.flush()
        if frame is not None:
            _dispatch(frame, assembler)
    finally:
        await response.aclose()
    if assembler.saw_start and not assembler.saw_stop:
        raise StreamFailure(STREAM_ENDED_EARLY)


def _fold(lines: list[str], state: SseState, assembler: _Assembler) -> None:
    """Fold lines into events and hand each finished one on."""
    for line in lines:
        frame = state.feed(line)
        if frame is not None:
            _dispatch(frame, assembler)


def _dispatch(frame: Frame, assembler: _Assembler) -> None:
    name, data, raw = frame
    if name == "error":
        raise StreamFailure(data)
    if name not in _MESSAGE_EVENTS:
        return
    event = _parse_event(name, data, raw)
    if event is None:
        return
    try:
        assembler.handle(event)
    except (KeyError, TypeError, AttributeError) as error:
        raise StreamFailure(
            f"Malformed Anthropic stream event {name}: {type(error).__name__}: {error}"
        ) from None


def _status_error_text(error: anthropic.APIStatusError) -> str:
    """``"<status> <message>"`` as the JavaScript SDK words an HTTP error from the body text."""
    try:
        text = error.response.text
    except Exception:  # body already closed unread: only what the SDK kept
        text = error.body if isinstance(error.body, str) else js_stringify(error.body) or ""
    try:
        parsed: Any = json.loads(text)
    except ValueError:
        parsed = None
    message: str | None
    if js_truthy(parsed):
        inner = parsed.get("message") if isinstance(parsed, dict) else None
        if js_truthy(inner):
            message = inner if isinstance(inner, str) else js_stringify(inner)
        else:
            message = js_stringify(parsed)
    else:
        message = text
    status = error.status_code
    if status and message:
        return f"{status} {message}"
    if status:
        return f"{status} status code (no body)"
    return message or "(no status code or body)"


def _failure_text(error: BaseException, phase: str) -> str:
    import anthropic
    import httpx2

    if isinstance(error, StreamFailure):
        return str(error)
    if isinstance(error, anthropic.APIStatusError):
        return _status_error_text(error)
    if isinstance(error, anthropic.APITimeoutError | httpx2.TimeoutException):
        return TIMEOUT_ERROR
    if isinstance(error, anthropic.APIConnectionError):
        return CONNECTION_ERROR
    if isinstance(error, httpx2.TransportError):
        return CONNECTION_CUT if phase == "streaming" else CONNECTION_ERROR
    return f"{type(error).__name__}: {error}"


async def _run(
    client: anthropic.AsyncAnthropic,
    request: MessagesRequest,
    assembler: _Assembler,
    phase: list[str],
    abort: asyncio.Event,
) -> str | None:
    """Run the call until it ends or ``abort`` is set; the failure text, or None on success."""
    call = asyncio.ensure_future(_consume(client, request, assembler, phase))
    try:
        await done_before_abort(call, abort)
    finally:
        if not call.done():
            call.cancel()  # closes the HTTP response
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await call
    if call.cancelled():
        return ABORTED_WHILE_STREAMING if phase[0] == "streaming" else ABORTED_BEFORE_RESPONSE
    error = call.exception()
    if error is not None:
        return _failure_text(error, phase[0])
    return ABORT_NOTICED if abort.is_set() else None


async def stream_assistant_message(
    client: anthropic.AsyncAnthropic,
    request: MessagesRequest,
    model: ModelInfo,
    *,
    abort: asyncio.Event,
    on_event: EventSink,
) -> dict[str, Any]:
    """Make the call and return pi's final ``AssistantMessage``; never raises for call failures.

    Setting ``abort`` closes the HTTP stream at once; the partial message comes back with
    ``stopReason: "aborted"``.
    """
    output = _new_message(model)
    assembler = _Assembler(model, output, on_event)
    phase = ["connecting"]
    failure = (
        ABORTED_BEFORE_RESPONSE if abort.is_set() else await _run(client, request, assembler, phase, abort)
    )
    assembler.settle()
    if failure is None and output["stopReason"] in ("aborted", "error"):
        failure = UNKNOWN_ERROR
    if failure is None:
        on_event({"type": "done", "reason": output["stopReason"]})
        return output
    output["stopReason"] = "aborted" if abort.is_set() else "error"
    output["errorMessage"] = redact(failure)
    on_event({"type": "error", "reason": output["stopReason"]})
    return output


# ---------------------------------------------------------------------------------------------
# Classification of finished messages (pi's AgentSession._isRetryableError, isContextOverflow)

_RETRYABLE: Final = re.compile(
    r"overloaded|provider.?returned.?error|rate.?limit|too many requests|429|500|502|503|504|"
    r"service.?unavailable|server.?error|internal.?error|network.?error|connection.?error|"
    r"connection.?refused|connection.?lost|websocket.?closed|websocket.?error|other side closed|"
    r"fetch failed|upstream.?connect|reset before headers|socket hang up|ended without|"
    r"http2 request did not get a response|timed? out|timeout|terminated|retry delay",
    re.IGNORECASE,
)
_OVERFLOW: Final = tuple(
    re.compile(pattern, re.IGNORECASE)
    for pattern in (
        r"prompt is too long", r"request_too_large", r"input is too long for requested model",
        r"exceeds the context window", r"input token count.*exceeds the maximum",
        r"maximum prompt length is \d+", r"reduce the length of the messages",
        r"maximum context length is \d+ tokens", r"exceeds the limit of \d+",
        r"exceeds the available context size", r"greater than the context length",
        r"context window exceeds limit", r"exceeded model token limit",
        r"too large for model with \d+ maximum context length", r"model_context_window_exceeded",
        r"prompt too long; exceeded (?:max )?context length", r"context[_ ]length[_ ]exceeded",
        r"too many tokens", r"token limit exceeded", r"^4(?:00|13)\s*(?:status code)?\s*\(no body\)",
    )
)  # fmt: skip
_NOT_OVERFLOW: Final = tuple(
    re.compile(pattern, re.IGNORECASE)
    for pattern in (r"^(Throttling error|Service unavailable):", r"rate limit", r"too many requests")
)


def is_context_overflow(message: dict[str, Any], context_window: int) -> bool:
    """pi's ``isContextOverflow``: an overflow error text, or usage beyond the window."""
    error_text = message.get("errorMessage")
    if message.get("stopReason") == "error" and error_text:
        text = str(error_text)
        if not any(p.search(text) for p in _NOT_OVERFLOW) and any(p.search(text) for p in _OVERFLOW):
            return True
    usage = message.get("usage") or {}
    used = (usage.get("input") or 0) + (usage.get("cacheRead") or 0)
    if context_window and message.get("stopReason") == "stop" and used > context_window:
        return True
    return bool(
        context_window
        and message.get("stopReason") == "length"
        and usage.get("output") == 0
        and used >= context_window * 0.99
    )


def is_retryable_error(message: dict[str, Any], context_window: int = 0) -> bool:
    """pi's ``_isRetryableError``: an error reply, not an overflow, with a transient-looking text."""
    if message.get("stopReason") != "error" or not message.get("errorMessage"):
        return False
    if is_context_overflow(message, context_window):
        return False
    return _RETRYABLE.search(str(message["errorMessage"])) is not None
