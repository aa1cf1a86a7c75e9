"""The settings one compaction run uses (compaction, retries, timeouts), read from pi's settings."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from pi_lsp.compaction.prepare import CompactionSettings
from pi_lsp.llm.anthropic_client import RetryPolicy
from pi_lsp.service.settings import Settings

DEFAULT_TIMEOUT_S: Final = 600.0


def _number(data: Mapping[str, Any], key: str) -> float | None:
    value = data.get(key)
    if isinstance(value, int | float) and not isinstance(value, bool) and value >= 0:
        return float(value)
    return None


def _section(data: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    value = data.get(key)
    return value if isinstance(value, Mapping) else {}


@dataclass(frozen=True)
class RunConfig:
    """The settings one compaction uses, read once from the client's settings."""

    context_window: int
    compaction: CompactionSettings
    tokenizer: str
    summarizer: str
    model: str | None
    max_retries: int = 3
    base_delay: float = 2.0
    max_delay: float = 60.0
    timeout: float = DEFAULT_TIMEOUT_S
    branch_reserve_tokens: int = 16384

    @classmethod
    def from_settings(
        cls, settings: Settings, context_window: int, keep_recent_tokens: int | None = None
    ) -> RunConfig:
        """pi's settings: ``compaction.*``, ``retry.{enabled, maxRetries, baseDelayMs}``,
        ``retry.provider.{maxRetries, maxRetryDelayMs, timeoutMs}``, ``branchSummary.reserveTokens``;
        ``context_window`` is the session's (:func:`~pi_lsp.service.model_choice.context_window`)."""
        section = settings.compaction
        raw = settings.as_dict()
        retry = _section(raw, "retry")
        provider = _section(retry, "provider")
        retries = _number(provider, "maxRetries")
        retries = _number(retry, "maxRetries") if retries is None else retries
        base = _number(retry, "baseDelayMs")
        max_delay = _number(provider, "maxRetryDelayMs")
        max_delay = _number(retry, "maxDelayMs") if max_delay is None else max_delay
        timeout = _number(provider, "timeoutMs")
        branch = _number(_section(raw, "branchSummary"), "reserveTokens")
        return cls(
            context_window=context_window,
            compaction=CompactionSettings(
                enabled=section.enabled,
                reserve_tokens=section.reserve_tokens,
                keep_recent_tokens=section.keep_recent_tokens
                if keep_recent_tokens is None
                else keep_recent_tokens,
            ),
            tokenizer=settings.tokenizer,
            summarizer=settings.summarizer,
            model=section.model or settings.model,
            max_retries=0 if retry.get("enabled") is False else int(3 if retries is None else retries),
            base_delay=2.0 if base is None else base / 1000,
            max_delay=60.0 if max_delay is None else max_delay / 1000,
            timeout=DEFAULT_TIMEOUT_S if not timeout else timeout / 1000,
            branch_reserve_tokens=16384 if branch is None else int(branch),
        )

    def retry_policy(self) -> RetryPolicy:
        return RetryPolicy(self.max_retries, self.base_delay, self.max_delay)
