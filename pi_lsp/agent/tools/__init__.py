"""pi's built-in tools (read, bash, edit, write, grep, find, ls), run by the agent loop.

Each gives pi's output for the same input (texts, truncation, details, error messages); see
``docs/tools.md`` for the few places where we differ on purpose.
"""

from pi_lsp.agent.tools.base import Tool, ToolContext, ToolError, ToolResult
from pi_lsp.agent.tools.registry import ALL_TOOL_NAMES, DEFAULT_TOOL_NAMES, READ_ONLY_TOOL_NAMES, create_tools
from pi_lsp.agent.tools.user_bash import UserBashResult, run_user_bash
from pi_lsp.agent.tools.validation import validate_tool_arguments

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
