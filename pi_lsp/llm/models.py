"""Our table of the Anthropic models pi 0.73.1 knows, with pi's cost and thinking-level rules.

The figures (context window, output cap, reasoning, image input, USD per million tokens) are the
ones pi's model catalogue lists for the ``anthropic`` provider; ``tests/llm/test_models.py``
compares this table with the installed pi package at test time, so a drift shows up as a failure.

Thinking levels follow pi: a model without reasoning offers only ``off``; ``xhigh`` is offered
only where the model maps it to an effort of its own (Opus 4.6 → ``max``, Opus 4.7 → ``xhigh``);
a level the model lacks is clamped to the nearest higher one it has, else the nearest lower one.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Final

from pi_lsp.protocol.enums import THINKING_LEVELS as THINKING_LEVELS

PROVIDER: Final = "anthropic"
API: Final = "anthropic-messages"
DEFAULT_MODEL_ID: Final = "claude-opus-4-7"  # pi's default for the anthropic provider
DEFAULT_THINKING_LEVEL: Final = "medium"

_EMPTY_MAP: Mapping[str, str | None] = MappingProxyType({})


@dataclass(frozen=True)
class ModelCost:
    """USD per million tokens."""

    input: float
    output: float
    cache_read: float
    cache_write: float


@dataclass(frozen=True)
class ModelInfo:
    """One model: what it accepts, what it costs, how far it thinks."""

    id: str
    name: str
    context_window: int
    max_tokens: int
    reasoning: bool
    input: tuple[str, ...]
    cost: ModelCost
    thinking_level_map: Mapping[str, str | None] = field(
        default_factory=lambda: _EMPTY_MAP, compare=False, hash=False
    )

    @property
    def supports_images(self) -> bool:
        return "image" in self.input

    @property
    def adaptive_thinking(self) -> bool:
        """Opus 4.6+/Sonnet 4.6 think adaptively (effort), older models by token budget."""
        return any(tag in self.id for tag in _ADAPTIVE_TAGS)

    def to_wire(self) -> dict[str, Any]:
        """The protocol's ``ModelInfo``."""
        return {
            "provider": PROVIDER,
            "id": self.id,
            "name": self.name,
            "contextWindow": self.context_window,
            "maxTokens": self.max_tokens,
            "reasoning": self.reasoning,
            "input": list(self.input),
            "cost": {
                "input": self.cost.input,
                "output": self.cost.output,
                "cacheRead": self.cost.cache_read,
                "cacheWrite": self.cost.cache_write,
            },
        }


_ADAPTIVE_TAGS: Final = ("opus-4-6", "opus-4.6", "opus-4-7", "opus-4.7", "sonnet-4-6", "sonnet-4.6")

# Price groups (USD / Mtok: input, output, cache read, cache write).
_HAIKU_35 = ModelCost(0.8, 4, 0.08, 1)
_SONNET = ModelCost(3, 15, 0.3, 3.75)
_SONNET_3 = ModelCost(3, 15, 0.3, 0.3)
_HAIKU_3 = ModelCost(0.25, 1.25, 0.03, 0.3)
_OPUS_OLD = ModelCost(15, 75, 1.5, 18.75)
_HAIKU_45 = ModelCost(1, 5, 0.1, 1.25)
_OPUS_NEW = ModelCost(5, 25, 0.5, 6.25)
_TEXT_IMAGE = ("text", "image")


def _model(
    model_id: str,
    name: str,
    cost: ModelCost,
    *,
    reasoning: bool,
    window: int = 200_000,
    max_tokens: int,
    levels: Mapping[str, str | None] | None = None,
) -> ModelInfo:
    return ModelInfo(
        id=model_id,
        name=name,
        context_window=window,
        max_tokens=max_tokens,
        reasoning=reasoning,
        input=_TEXT_IMAGE,
        cost=cost,
        thinking_level_map=MappingProxyType(dict(levels)) if levels else _EMPTY_MAP,
    )


_TABLE: Final = (
    _model("claude-3-5-haiku-20241022", "Claude Haiku 3.5", _HAIKU_35, reasoning=False, max_tokens=8192),
    _model("claude-3-5-haiku-latest", "Claude Haiku 3.5 (latest)", _HAIKU_35, reasoning=False,
           max_tokens=8192),
    _model("claude-3-5-sonnet-20240620", "Claude Sonnet 3.5", _SONNET, reasoning=False, max_tokens=8192),
    _model("claude-3-5-sonnet-20241022", "Claude Sonnet 3.5 v2", _SONNET, reasoning=False, max_tokens=8192),
    _model("claude-3-7-sonnet-20250219", "Claude Sonnet 3.7", _SONNET, reasoning=True, max_tokens=64000),
    _model("claude-3-haiku-20240307", "Claude Haiku 3", _HAIKU_3, reasoning=False, max_tokens=4096),
    _model("claude-3-opus-20240229", "Claude Opus 3", _OPUS_OLD, reasoning=False, max_tokens=4096),
    _model("claude-3-sonnet-20240229", "Claude Sonnet 3", _SONNET_3, reasoning=False, max_tokens=4096),
    _model("claude-haiku-4-5", "Claude Haiku 4.5 (latest)", _HAIKU_45, reasoning=True, max_tokens=64000),
    _model("claude-haiku-4-5-20251001", "Claude Haiku 4.5", _HAIKU_45, reasoning=True, max_tokens=64000),
    _model("claude-opus-4-0", "Claude Opus 4 (latest)", _OPUS_OLD, reasoning=True, max_tokens=32000),
    _model("claude-opus-4-1", "Claude Opus 4.1 (latest)", _OPUS_OLD, reasoning=True, max_tokens=32000),
    _model("claude-opus-4-1-20250805", "Claude Opus 4.1", _OPUS_OLD, reasoning=True, max_tokens=32000),
    _model("claude-opus-4-20250514", "Claude Opus 4", _OPUS_OLD, reasoning=True, max_tokens=32000),
    _model("claude-opus-4-5", "Claude Opus 4.5 (latest)", _OPUS_NEW, reasoning=True, max_tokens=64000),
    _model("claude-opus-4-5-20251101", "Claude Opus 4.5", _OPUS_NEW, reasoning=True, max_tokens=64000),
    _model("claude-opus-4-6", "Claude Opus 4.6", _OPUS_NEW, reasoning=True, window=1_000_000,
           max_tokens=128000, levels={"xhigh": "max"}),
    _model("claude-opus-4-7", "Claude Opus 4.7", _OPUS_NEW, reasoning=True, window=1_000_000,
           max_tokens=128000, levels={"xhigh": "xhigh"}),
    _model("claude-sonnet-4-0", "Claude Sonnet 4 (latest)", _SONNET, reasoning=True, max_tokens=64000),
    _model("claude-sonnet-4-20250514", "Claude Sonnet 4", _SONNET, reasoning=True, max_tokens=64000),
    _model("claude-sonnet-4-5", "Claude Sonnet 4.5 (latest)", _SONNET, reasoning=True, max_tokens=64000),
    _model("claude-sonnet-4-5-20250929", "Claude Sonnet 4.5", _SONNET, reasoning=True, max_tokens=64000),
    _model("claude-sonnet-4-6", "Claude Sonnet 4.6", _SONNET, reasoning=True, window=1_000_000,
           max_tokens=64000),
)  # fmt: skip

MODELS: Final[Mapping[str, ModelInfo]] = MappingProxyType({model.id: model for model in _TABLE})


def find_model(model_id: str) -> ModelInfo | None:
    """The model with this exact id, or None."""
    return MODELS.get(model_id)


def empty_usage() -> dict[str, Any]:
    """pi's zero ``usage`` object (key order as pi writes it)."""
    return {
        "input": 0,
        "output": 0,
        "cacheRead": 0,
        "cacheWrite": 0,
        "totalTokens": 0,
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
    }


def calculate_cost(model: ModelInfo, usage: dict[str, Any]) -> dict[str, Any]:
    """Set and return ``usage["cost"]`` as pi computes it: price / 1e6 · tokens, plus the total.

    Same floating-point operations in the same order as pi, so the numbers are identical (the
    session writer prints them as JavaScript would).
    """
    cost: dict[str, Any] = usage.setdefault("cost", {})
    cost["input"] = model.cost.input / 1_000_000 * usage["input"]
    cost["output"] = model.cost.output / 1_000_000 * usage["output"]
    cost["cacheRead"] = model.cost.cache_read / 1_000_000 * usage["cacheRead"]
    cost["cacheWrite"] = model.cost.cache_write / 1_000_000 * usage["cacheWrite"]
    cost["total"] = cost["input"] + cost["output"] + cost["cacheRead"] + cost["cacheWrite"]
    return cost


def supported_thinking_levels(model: ModelInfo) -> list[str]:
    """The levels pi offers for this model."""
    if not model.reasoning:
        return ["off"]
    levels = []
    for level in THINKING_LEVELS:
        present = level in model.thinking_level_map
        mapped = model.thinking_level_map.get(level)
        if present and mapped is None:
            continue
        if level == "xhigh" and not present:
            continue
        levels.append(level)
    return levels


def clamp_thinking_level(model: ModelInfo, level: str) -> str:
    """``level`` if the model offers it, else the nearest higher offered level, else the nearest lower."""
    available = supported_thinking_levels(model)
    if level in available:
        return level
    if level not in THINKING_LEVELS:
        return available[0] if available else "off"
    index = THINKING_LEVELS.index(level)
    for candidate in THINKING_LEVELS[index:]:
        if candidate in available:
            return candidate
    for candidate in reversed(THINKING_LEVELS[:index]):
        if candidate in available:
            return candidate
    return available[0] if available else "off"
