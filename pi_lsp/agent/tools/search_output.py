"""The tail pi's listing tools (ls, find, grep) share: byte truncation and the ``[…]`` notices."""

from __future__ import annotations

from typing import Any

from pi_lsp.agent.tools.base import ToolResult, text_result
from pi_lsp.agent.tools.truncate import DEFAULT_MAX_BYTES, format_size, truncate_head

_NO_LINE_LIMIT = 2**53 - 1  # Number.MAX_SAFE_INTEGER: pi's "no line limit", kept in details


def finish_listing(
    lines: list[str],
    limit_notice: str | None,
    limit_key: str,
    limit_value: float | None,
    extra_notices: list[tuple[str, str, Any]] | None = None,
) -> ToolResult:
    """Join ``lines``, cut at 50 KB (whole lines), add the notices and their ``details`` keys.

    ``extra_notices`` are (notice, details key, value) added after the byte-limit notice.
    """
    truncation = truncate_head("\n".join(lines), max_lines=_NO_LINE_LIMIT)
    text = truncation["content"]
    details: dict[str, Any] = {}
    notices: list[str] = []
    if limit_notice is not None:
        notices.append(limit_notice)
        details[limit_key] = limit_value
    if truncation["truncated"]:
        notices.append(f"{format_size(DEFAULT_MAX_BYTES)} limit reached")
        details["truncation"] = truncation
    for notice, key, value in extra_notices or []:
        notices.append(notice)
        details[key] = value
    if notices:
        text += f"\n\n[{'. '.join(notices)}]"
    return text_result(text, details or None)
