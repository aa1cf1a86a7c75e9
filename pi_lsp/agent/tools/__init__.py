"""pi's built-in tools (read, bash, edit, write, grep, find, ls), run by the agent loop.

Each gives pi's output for the same input (texts, truncation, details, error messages); see
``docs/tools.md`` for the few places where we differ on purpose.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pi_lsp.agent.tools.base import Tool, ToolContext, ToolError, ToolResult
    from pi_lsp.agent.tools.registry import (
        ALL_TOOL_NAMES,
        DEFAULT_TOOL_NAMES,
        READ_ONLY_TOOL_NAMES,
        create_tools,
    )
    from pi_lsp.agent.tools.user_bash import UserBashResult, run_user_bash
    from pi_lsp.agent.tools.validation import validate_tool_arguments

# Loaded on first use: importing one tool module (``output_files``, ``targets``) for the settings or
# the run bookkeeping must not load every tool, and with them the prompt package (the server
# answers its first session requests before any of that is imported).
_HOMES = {
    "Tool": "base",
    "ToolContext": "base",
    "ToolError": "base",
    "ToolResult": "base",
    "ALL_TOOL_NAMES": "registry",
    "DEFAULT_TOOL_NAMES": "registry",
    "READ_ONLY_TOOL_NAMES": "registry",
    "create_tools": "registry",
    "UserBashResult": "user_bash",
    "run_user_bash": "user_bash",
    "validate_tool_arguments": "validation",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{home}"), name)
    globals()[name] = value
    return value


__all__ = [
    "ALL_TOOL_NAMES",
    "DEFAULT_TOOL_NAMES",
    "READ_ONLY_TOOL_NAMES",
    "Tool",
    "ToolContext",
    "ToolError",
    "ToolResult",
    "UserBashResult",
    "create_tools",
    "run_user_bash",
    "validate_tool_arguments",
]
