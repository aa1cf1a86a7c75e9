"""A small async client for Anthropic's Messages API, made for one-shot summarisation calls.

Built on the official SDK (``AsyncAnthropic``) but with our own retry loop (the SDK's is turned
off) so that backoff, ``retry-after`` and 529 "overloaded" handling are explicit and testable,
and with every failure surfaced as :class:`ModelError`, whose text never contains the API key.

Thinking budgets per session thinking level (Anthropic's budget-based extended thinking; the
same table pi's provider layer uses, ``xhigh`` clamped to ``high``):

====== ======= ===== ====== ===== =====
level  minimal low   medium high  xhigh
budget 1024    2048  8192   16384 16384
====== ======= ===== ====== ===== =====

The budget is added on top of the requested output tokens and the sum is capped at the model's
output limit; if that leaves less than 1024 visible-output tokens, the budget shrinks, and below
Anthropic's 1024-token minimum thinking is left off.
"""

from __future__ import annotations

import asyncio
import email.utils
import logging
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from pi_lsp.secrets import redact, register_secret

if TYPE_CHECKING:  # the SDK takes seconds to import; load it on first use only
    import anthropic
    import httpx2

DEFAULT_MODEL: Final = "claude-sonnet-4-5"
PI_API_VERSION: Final = "2023-06-01"  # what pi's JavaScript SDK sends
THINKING_BUDGETS: Final = {"minimal": 1024, "low": 2048, "medium": 8192, "high": 16384, "xhigh": 16384}
MIN_THINKING_BUDGET: Final = 1024
MIN_VISIBLE_OUTPUT: Final = 1024
RETRYABLE_STATUS: Final = frozenset({408, 429, 500, 502, 503, 504, 529})
_RETRYABLE_ERROR_TYPES: Final = {"overloaded_error": 529, "rate_limit_error": 429, "api_error": 500}

log = logging.getLogger(__name__)


class ModelError(Exception):
    """A failed model call. ``status`` is the HTTP status when known; ``retryable`` says whether
    trying again later could help. The message is redacted of credentials on construction."""

    def __init__(self, message: str, status: int | None = None, retryable: bool = False) -> None:
        self.message = redact(message)
        self.status = status
        self.retryable = retryable
        super().__init__(self.message)

    def with_prefix(self, prefix: str) -> ModelError:
        """The same error with ``prefix`` in front of its message (e.g. "Summarization failed: ")."""
        return ModelError(prefix + self.message, self.status, self.retryable)


# ---------------------------------------------------------------------------------------------
# Request planning


def thinking_budget(level: str | None) -> int | None:
    """The thinking budget for a session thinking level (None for ``off`` or unknown levels)."""
    if not level or level == "off":
        return None
    return THINKING_BUDGETS.get(level)


def plan_output(max_tokens: int, level: str | None, model_max_output: int) -> tuple[int, int | None]:
    """``(max_tokens, budget)`` for a request: visible output plus thinking, capped by the model."""
    budget = thinking_budget(level)
    if budget is None:
        return min(max_tokens, model_max_output), None
    total = min(max_tokens + budget, model_max_output)
    if total <= budget:
        budget = max(0, total - MIN_VISIBLE_OUTPUT)
    if budget < MIN_THINKING_BUDGET:
        return min(max_tokens, model_max_output), None
    return total, budget


@dataclass(frozen=True)
class RetryPolicy:
    """Exponential backoff: ``base_delay · 2^attempt`` seconds, capped; ``retry-after`` wins."""

    max_retries: int = 3
    base_delay: float = 2.0
    max_delay: float = 60.0

    def delay(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return min(max(retry_after, 0.0), self.max_delay)
        return float(min(self.base_delay * (1 << attempt), self.max_delay))


@dataclass
class Completion:
    """The visible text of a response (text blocks joined by newlines) and its metadata."""

    text: str
    stop_reason: str | None = None
    model: str | None = None
    usage: dict[str, int] = field(default_factory=dict)


def _retry_after(headers: Mapping[str, str] | None) -> float | None:
    if not headers:
        return None
    millis = headers.get("retry-after-ms")
    if millis:
        try:
            return float(millis) / 1000
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return float(value)
    except ValueError:
        try:
            parsed = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        return float(parsed.timestamp() - time.time())


# ---------------------------------------------------------------------------------------------
# The client


class AnthropicClient:
    """Async Messages API calls with retries, a per-attempt deadline and prompt cancellation.

    Credentials: ``api_key`` or ``ANTHROPIC_API_KEY``; endpoint: ``base_url`` or
    ``ANTHROPIC_BASE_URL`` (else the SDK default). Cancelling the awaiting task closes the HTTP
    stream at once; nothing is retried after a cancellation.

    ``timeout`` bounds each attempt as a whole (and every network read inside it); ``retry``
    decides how often and how long to wait between attempts; ``stream`` picks SSE streaming or a
    single JSON response; ``supports_thinking`` False never sends a thinking block (models
    without extended thinking); ``max_output_tokens`` is the model's output cap.
    """

    def __init__(
        self,
        model: str = DEFAULT_MODEL,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        timeout: float = 600.0,
        connect_timeout: float = 10.0,
        retry: RetryPolicy | None = None,
        stream: bool = True,
        max_output_tokens: int = 64000,
        supports_thinking: bool = True,
    ) -> None:
        self.model = model
        self._api_key = api_key or os.environ.get("ANTHROPIC_API_KEY") or None
        self._base_url = resolve_base_url(base_url)
        self.timeout = timeout
        self.connect_timeout = connect_timeout
        self.retry = retry or RetryPolicy()
        self.stream = stream
        self.max_output_tokens = max_output_tokens
        self.supports_thinking = supports_thinking
        self._client: anthropic.AsyncAnthropic | None = None
        register_secret(self._api_key)

    @property
    def has_api_key(self) -> bool:
        return self._api_key is not None

    def __repr__(self) -> str:  # never show the key
        return f"AnthropicClient(model={self.model!r}, base_url={self._base_url!r})"

    def _sdk(self) -> anthropic.AsyncAnthropic:
        if self._api_key is None:
            raise ModelError("No Anthropic API key configured (set ANTHROPIC_API_KEY)", None, False)
        if self._client is None:
            import httpx2

            self._client = create_async_client(
                self._api_key,
                self._base_url,
                max_retries=0,
                timeout=httpx2.Timeout(self.timeout, connect=self.connect_timeout),
            )
        return self._client

    async def aclose(self) -> None:
        """Release the connection pool."""
        if self._client is not None:
            await self._client.close()
            self._client = None

    def build_params(
        self, *, system: str, prompt: str, max_tokens: int, thinking_level: str | None = None
    ) -> dict[str, Any]:
        """The Messages API body for one summarisation call."""
        level = thinking_level if self.supports_thinking else None
        total, budget = plan_output(max_tokens, level, self.max_output_tokens)
        params: dict[str, Any] = {
            "model": self.model,
            "max_tokens": total,
            "system": system,
            "messages": [{"role": "user", "content": [{"type": "text", "text": prompt}]}],
        }
        if budget is not None:
            params["thinking"] = {"type": "enabled", "budget_tokens": budget}
        return params

    async def complete(
        self, *, system: str, prompt: str, max_tokens: int, thinking_level: str | None = None
    ) -> Completion:
        """One call, retried on 429/5xx/529, timeouts and dropped connections."""
        sdk = self._sdk()
        params = self.build_params(
            system=system, prompt=prompt, max_tokens=max_tokens, thinking_level=thinking_level
        )
        attempt = 0
        while True:
            try:
                async with asyncio.timeout(self.timeout):
                    if self.stream:
                        return await self._streamed(sdk, params)
                    return await self._plain(sdk, params)
            except TimeoutError:
                error = ModelError(f"Anthropic request timed out after {self.timeout:g}s", None, True)
                retry_after = None
            except ModelError as exc:
                error, retry_after = exc, None
            except Exception as exc:  # SDK and transport failures are classified, never leaked raw
                error, retry_after = _classify(exc)
            if not error.retryable or attempt >= self.retry.max_retries:
                raise error from None
            delay = self.retry.delay(attempt, retry_after)
            log.info("model call failed (%s); retry %d in %.2fs", error.message, attempt + 1, delay)
            attempt += 1
            await asyncio.sleep(delay)

    async def _plain(self, sdk: anthropic.AsyncAnthropic, params: dict[str, Any]) -> Completion:
        message = await sdk.messages.create(**params, stream=False)
        content = getattr(message, "content", None)
        if not isinstance(content, list):
            raise ModelError("Malformed Anthropic response: no content list", None, False)
        texts = [
            block.text
            for block in content
            if getattr(block, "type", None) == "text" and isinstance(getattr(block, "text", None), str)
        ]
        usage = getattr(message, "usage", None)
        return Completion(
            text="\n".join(texts),
            stop_reason=getattr(message, "stop_reason", None),
            model=getattr(message, "model", None),
            usage=_usage_dict(usage),
        )

    async def _streamed(self, sdk: anthropic.AsyncAnthropic, params: dict[str, Any]) -> Completion:
        collector = _StreamCollector()
        stream = await sdk.messages.create(**params, stream=True)
        async with stream:
            async for event in stream:
                collector.feed(event)
        return collector.finish()


def _usage_dict(usage: Any) -> dict[str, int]:
    out: dict[str, int] = {}
    for key in ("input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens"):
        value = getattr(usage, key, None)
        if isinstance(value, int):
            out[key] = value
    return out


class _StreamCollector:
    """Folds raw Messages stream events into a :class:`Completion`, rejecting malformed ones."""

    def __init__(self) -> None:
        self.blocks: dict[int, list[str]] = {}
        self.kinds: dict[int, str] = {}
        self.stop_reason: str | None = None
        self.model: str | None = None
        self.usage: dict[str, int] = {}
        self.started = False
        self.stopped = False

    @staticmethod
    def _bad(event_type: Any, what: str) -> ModelError:
        return ModelError(f"Malformed Anthropic stream event {event_type!r}: {what}", None, False)

    def _index(self, event: Any) -> int:
        index = getattr(event, "index", None)
        if not isinstance(index, int) or isinstance(index, bool):
            raise self._bad(getattr(event, "type", None), "missing block index")
        return index

    def feed(self, event: Any) -> None:
        kind = getattr(event, "type", None)
        if kind == "message_start":
            message = getattr(event, "message", None)
            if message is None:
                raise self._bad(kind, "missing message")
            self.started = True
            self.model = getattr(message, "model", None)
            self.usage.update(_usage_dict(getattr(message, "usage", None)))
        elif kind == "content_block_start":
            index = self._index(event)
            block = getattr(event, "content_block", None)
            block_type = getattr(block, "type", None)
            if not isinstance(block_type, str):
                raise self._bad(kind, "missing content block")
            self.kinds[index] = block_type
            initial = getattr(block, "text", None) if block_type == "text" else None
            self.blocks[index] = [initial] if isinstance(initial, str) and initial else []
        elif kind == "content_block_delta":
            index = self._index(event)
            delta = getattr(event, "delta", None)
            delta_type = getattr(delta, "type", None)
            if not isinstance(delta_type, str):
                raise self._bad(kind, "missing delta")
            if delta_type == "text_delta":
                text = getattr(delta, "text", None)
                if not isinstance(text, str):
                    raise self._bad(kind, "text delta without text")
                if self.kinds.get(index) != "text":
                    raise self._bad(kind, f"text delta for block {index}, which is not a text block")
                self.blocks[index].append(text)
        elif kind == "message_delta":
            delta = getattr(event, "delta", None)
            if delta is None:
                raise self._bad(kind, "missing delta")
            reason = getattr(delta, "stop_reason", None)
            if reason is not None:
                self.stop_reason = str(reason)
            self.usage.update(_usage_dict(getattr(event, "usage", None)))
        elif kind == "message_stop":
            self.stopped = True
        elif not isinstance(kind, str):
            raise self._bad(kind, "event without a type")
        # content_block_stop, ping and future event types carry nothing we need.

    def finish(self) -> Completion:
        if not self.started or not self.stopped:
            raise ModelError("Anthropic stream ended before the message was complete", None, True)
        texts = ["".join(self.blocks[i]) for i in sorted(self.blocks) if self.kinds.get(i) == "text"]
        return Completion("\n".join(texts), self.stop_reason, self.model, dict(self.usage))


def _classify(exc: Exception) -> tuple[ModelError, float | None]:
    """Map an SDK/transport exception to a scrubbed :class:`ModelError` and a ``retry-after``."""
    import anthropic
    import httpx2

    if isinstance(exc, anthropic.APIStatusError):
        status: int | None = exc.status_code
        error_type = getattr(exc, "type", None)
        if isinstance(error_type, str) and error_type in _RETRYABLE_ERROR_TYPES and (status or 0) < 400:
            status = _RETRYABLE_ERROR_TYPES[error_type]  # an error event inside a 200 stream
        detail = getattr(exc, "api_message", None) or error_type or "request failed"
        retryable = status in RETRYABLE_STATUS or error_type in _RETRYABLE_ERROR_TYPES
        headers = exc.response.headers if exc.response is not None else None
        return ModelError(f"Anthropic API error {status}: {detail}", status, retryable), _retry_after(headers)
    if isinstance(exc, anthropic.APITimeoutError | httpx2.TimeoutException):
        return ModelError("Anthropic request timed out", None, True), None
    if isinstance(exc, anthropic.APIConnectionError | httpx2.TransportError):
        return ModelError(f"Connection to the Anthropic API failed: {type(exc).__name__}", None, True), None
    if isinstance(exc, anthropic.APIResponseValidationError | ValueError | AttributeError | TypeError):
        return ModelError(f"Malformed Anthropic response: {type(exc).__name__}: {exc}", None, False), None
    if isinstance(exc, httpx2.HTTPError | anthropic.AnthropicError):
        return ModelError(f"Anthropic call failed: {type(exc).__name__}: {exc}", None, False), None
    return ModelError(f"Anthropic call failed: {type(exc).__name__}: {exc}", None, False), None


def resolve_base_url(base_url: str | None) -> str | None:
    """The endpoint a client made now would use: ``base_url``, else ``ANTHROPIC_BASE_URL``, else
    None (the SDK's default, Anthropic's API)."""
    return base_url or os.environ.get("ANTHROPIC_BASE_URL") or None


def import_sdk() -> None:
    """Load the SDK's modules, those its HTTP stack loads for the first client and the first request
    included: a client is made and dropped (it has no key, sends nothing and opens no connection),
    and anyio's asyncio backend is imported by the name anyio itself imports it by on a first
    request (on the event loop otherwise). No event loop is run here: this is a session worker."""
    import importlib

    import anthropic

    anthropic.AsyncAnthropic(api_key="", base_url="http://127.0.0.1:9", max_retries=0)
    importlib.import_module("pi_lsp.llm.asyncio_network")
    try:
        importlib.import_module("anyio._backends._asyncio")
    except ImportError:  # another anyio layout: the first request imports what it needs
        log.debug("anyio's asyncio backend is not where it was; the first request loads it")


def mark_asyncio_thread() -> None:
    """Tell sniffio that the calling thread runs asyncio (its documented ``thread_local.name``, which
    ``trio.run`` sets for trio). The SDK's HTTP stack asks sniffio which library runs on every read
    of a stream (anyio's backend lookup); unmarked, each answer looks up the current task, about a
    tenth of the server's CPU per streamed delta. Call it on the event loop's thread only."""
    import sniffio

    sniffio.thread_local.name = "asyncio"


def create_async_client(
    api_key: str,
    base_url: str | None = None,
    *,
    max_retries: int = 2,
    timeout: float | httpx2.Timeout = 600.0,
) -> anthropic.AsyncAnthropic:
    """An SDK client for agent runs, configured as pi's: the SDK's own retries (2 by default, pi's
    ``retry.provider.maxRetries``) and its 600 s timeout (``retry.provider.timeoutMs``).

    ``base_url`` defaults to ``ANTHROPIC_BASE_URL``, else Anthropic's endpoint. The key is
    registered for scrubbing. Authentication and API version are sent as pi's SDK sends them
    (``x-api-key``, ``anthropic-version: 2023-06-01``) rather than this SDK's bearer token and
    newer version, so the request matches pi's.
    """
    import anthropic

    register_secret(api_key)
    pi_headers: dict[str, Any] = {
        "x-api-key": api_key,
        "anthropic-version": PI_API_VERSION,
        "Authorization": anthropic.Omit(),
    }
    client = anthropic.AsyncAnthropic(
        api_key=api_key,
        base_url=resolve_base_url(base_url),
        max_retries=max_retries,
        timeout=timeout,
        default_headers=pi_headers,
    )
    from pi_lsp.llm.asyncio_network import use_asyncio_network
    from pi_lsp.llm.http1 import use_direct_http1

    use_asyncio_network(client._client)  # the sockets on asyncio, not anyio (asyncio_network.py)
    use_direct_http1(client._client)  # HTTP/1.1 without httpcore's and h11's layers (http1.py)
    return client
