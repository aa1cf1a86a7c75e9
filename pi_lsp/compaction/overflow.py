"""pi-ai 0.73.1's ``isContextOverflow``: does an assistant message report a context overflow?

An overflowing request shows up in three ways: an error whose text matches one of the providers'
overflow messages (rate-limit and throttling errors excluded), a "silent" overflow where a
successful answer reports more input than the window holds, and a server that truncated the input
to the window and had no room left to answer (``stopReason: "length"`` with no output).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

OVERFLOW_PATTERNS: Final = tuple(
    re.compile(pattern, re.IGNORECASE)
    for pattern in (
        r"prompt is too long",  # Anthropic token overflow
        r"request_too_large",  # Anthropic request byte-size overflow (HTTP 413)
        r"input is too long for requested model",  # Amazon Bedrock
        r"exceeds the context window",  # OpenAI
        r"input token count.*exceeds the maximum",  # Google Gemini
        r"maximum prompt length is \d+",  # xAI
        r"reduce the length of the messages",  # Groq
        r"maximum context length is \d+ tokens",  # OpenRouter
        r"exceeds the limit of \d+",  # GitHub Copilot
        r"exceeds the available context size",  # llama.cpp
        r"greater than the context length",  # LM Studio
        r"context window exceeds limit",  # MiniMax
        r"exceeded model token limit",  # Kimi for Coding
        r"too large for model with \d+ maximum context length",  # Mistral
        r"model_context_window_exceeded",  # z.ai
        r"prompt too long; exceeded (?:max )?context length",  # Ollama
        r"context[_ ]length[_ ]exceeded",  # generic
        r"too many tokens",  # generic
        r"token limit exceeded",  # generic
        r"^4(?:00|13)\s*(?:status code)?\s*\(no body\)",  # Cerebras
    )
)
NON_OVERFLOW_PATTERNS: Final = tuple(
    re.compile(pattern, re.IGNORECASE)
    for pattern in (r"^(Throttling error|Service unavailable):", r"rate limit", r"too many requests")
)


def _number(value: Any) -> float:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0.0


def is_overflow_error_message(text: str) -> bool:
    """Whether an error text is a context-overflow error (and not a throttling one)."""
    if any(p.search(text) for p in NON_OVERFLOW_PATTERNS):
        return False
    return any(p.search(text) for p in OVERFLOW_PATTERNS)


def is_context_overflow(message: Mapping[str, Any], context_window: int | None = None) -> bool:
    """pi's ``isContextOverflow(message, contextWindow)`` for an assistant message."""
    stop = message.get("stopReason")
    error = message.get("errorMessage")
    if stop == "error" and isinstance(error, str) and error and is_overflow_error_message(error):
        return True
    usage = message.get("usage")
    if not context_window or not isinstance(usage, Mapping):
        return False
    input_tokens = _number(usage.get("input")) + _number(usage.get("cacheRead"))
    if stop == "stop" and input_tokens > context_window:
        return True  # silent overflow: the provider accepted more than the window holds
    output = usage.get("output")
    return (
        stop == "length"
        and output == 0
        and not isinstance(output, bool)
        and input_tokens >= context_window * 0.99
    )
