"""The Messages API request pi 0.73.1 sends for a given context: body and headers.

Body keys in pi's order: ``model, messages, max_tokens, stream, system, tools, thinking,
output_config``. pi never sends ``temperature`` or ``metadata`` from its agent, and does not use
the session id for Anthropic.

- ``max_tokens``: the model's output cap, at most 32000; budget-thinking models add the budget
  (capped by the model); adaptive-thinking models (Opus 4.6+, Sonnet 4.6) add nothing and send an
  ``output_config.effort`` instead.
- Thinking ``off`` sends ``{"type": "disabled"}`` to reasoning models and nothing to the others.
- Cache markers (``{"type": "ephemeral"}``, ``ttl: "1h"`` with long retention): the system block,
  the last tool, the last block of the last message when that message is the user's.
- Headers on top of the SDK's own: ``accept: application/json``,
  ``anthropic-dangerous-direct-browser-access: true`` and, for every model without adaptive
  thinking, ``anthropic-beta: interleaved-thinking-2025-05-14``.

pi's OAuth "Claude Code" mode is not reproduced (API keys only).
"""

from __future__ import annotations

import os
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import orjson

from pi_lsp.jscompat import js_stringify
from pi_lsp.llm.convert import ConversionCache, request_messages, sanitize_surrogates
from pi_lsp.llm.models import ModelInfo

MAX_BASE_OUTPUT: Final = 32000
MIN_VISIBLE_OUTPUT: Final = 1024
DEFAULT_THINKING_BUDGETS: Final = {"minimal": 1024, "low": 2048, "medium": 8192, "high": 16384}
INTERLEAVED_THINKING_BETA: Final = "interleaved-thinking-2025-05-14"
CACHE_RETENTION_ENV: Final = "PI_CACHE_RETENTION"


@dataclass
class MessagesRequest:
    """The JSON body and the extra HTTP headers of one Messages API call."""

    body: dict[str, Any]
    headers: dict[str, str]

    def body_bytes(self) -> bytes:
        """The body as sent: compact JSON in the body's key order (pi's), as ``JSON.stringify``
        writes it. orjson writes it (a whole conversation, hundreds of KB, in well under a
        millisecond); what orjson refuses (a lone surrogate in a tool call's arguments, an integer
        beyond 64 bits) is written as JavaScript would."""
        try:
            return orjson.dumps(self.body)
        except orjson.JSONEncodeError:
            return (js_stringify(self.body) or "null").encode("utf-8", "surrogatepass")


def cache_control_for(retention: str | None) -> dict[str, Any] | None:
    """pi's cache marker: ``short`` (default) → ephemeral, ``long`` → 1 h, ``none`` → no marker."""
    if not retention:
        retention = "long" if os.environ.get(CACHE_RETENTION_ENV) == "long" else "short"
    if retention == "none":
        return None
    return {"type": "ephemeral", "ttl": "1h"} if retention == "long" else {"type": "ephemeral"}


def effort_for(model: ModelInfo, level: str) -> str:
    """Adaptive thinking's effort for a thinking level (the model's own map first)."""
    mapped = model.thinking_level_map.get(level)
    if isinstance(mapped, str):
        return mapped
    return {"minimal": "low", "low": "low", "medium": "medium"}.get(level, "high")


def thinking_budget_plan(
    base_max_tokens: int, model: ModelInfo, level: str, budgets: Mapping[str, int] | None = None
) -> tuple[int, int]:
    """``(max_tokens, budget_tokens)`` for budget thinking: budget on top, capped by the model."""
    table = {**DEFAULT_THINKING_BUDGETS, **(budgets or {})}
    budget = table["high" if level == "xhigh" else level]
    max_tokens = min(base_max_tokens + budget, model.max_tokens)
    if max_tokens <= budget:
        budget = max(0, max_tokens - MIN_VISIBLE_OUTPUT)
    return max_tokens, budget


def _tool_param(tool: Mapping[str, Any], cache_control: dict[str, Any] | None) -> dict[str, Any]:
    schema = tool.get("parameters") or {}
    param: dict[str, Any] = {
        "name": tool["name"],
        "description": tool.get("description"),
        "eager_input_streaming": True,
        "input_schema": {
            "type": "object",
            "properties": schema.get("properties") if schema.get("properties") is not None else {},
            "required": schema.get("required") if schema.get("required") is not None else [],
        },
    }
    if cache_control is not None:
        param["cache_control"] = dict(cache_control)
    return param


def request_headers(model: ModelInfo) -> dict[str, str]:
    """The headers pi adds to the SDK's (``anthropic-version``, auth, content type)."""
    headers = {"accept": "application/json", "anthropic-dangerous-direct-browser-access": "true"}
    if not model.adaptive_thinking:
        headers["anthropic-beta"] = INTERLEAVED_THINKING_BETA
    return headers


def build_messages_request(
    *,
    model: ModelInfo,
    system_prompt: str,
    messages: Sequence[dict[str, Any]],
    tools: Sequence[Mapping[str, Any]],
    thinking_level: str,
    session_id: str | None = None,
    thinking_budgets: Mapping[str, int] | None = None,
    cache_retention: str | None = None,
    block_images: bool = False,
    keys: Sequence[Hashable | None] | None = None,
    conversions: ConversionCache | None = None,
) -> MessagesRequest:
    """pi's request for this context. ``messages`` are pi's agent messages, any role.

    ``session_id`` is accepted for symmetry with pi's options; pi does not send it to Anthropic.
    ``keys`` and ``conversions``: a key per message that cannot change (its stored entry), else
    None, under which its conversion is kept in ``conversions`` for the next request.
    """
    del session_id
    cache_control = cache_control_for(cache_retention)
    base_max_tokens = min(model.max_tokens, MAX_BASE_OUTPUT) if model.max_tokens > 0 else 0
    body: dict[str, Any] = {
        "model": model.id,
        "messages": request_messages(
            messages, model, cache_control, block_images=block_images, keys=keys, cache=conversions
        ),
        "max_tokens": base_max_tokens or model.max_tokens // 3,
        "stream": True,
    }
    if system_prompt:
        system_block: dict[str, Any] = {"type": "text", "text": sanitize_surrogates(system_prompt)}
        if cache_control is not None:
            system_block["cache_control"] = dict(cache_control)
        body["system"] = [system_block]
    if tools:
        last = len(tools) - 1
        body["tools"] = [
            _tool_param(tool, cache_control if index == last else None) for index, tool in enumerate(tools)
        ]
    if not thinking_level or thinking_level == "off":
        if model.reasoning:
            body["thinking"] = {"type": "disabled"}
    elif model.adaptive_thinking:
        if model.reasoning:
            body["thinking"] = {"type": "adaptive", "display": "summarized"}
            body["output_config"] = {"effort": effort_for(model, thinking_level)}
    else:  # budget thinking; pi raises max_tokens even for a model that cannot reason
        max_tokens, budget = thinking_budget_plan(base_max_tokens, model, thinking_level, thinking_budgets)
        body["max_tokens"] = max_tokens or model.max_tokens // 3
        if model.reasoning:
            body["thinking"] = {"type": "enabled", "budget_tokens": budget or 1024, "display": "summarized"}
    return MessagesRequest(body=body, headers=request_headers(model))
