"""pi's tool names → our implementations, and the sets pi offers by default."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from pi_lsp.agent.tools.base import Tool
from pi_lsp.agent.tools.bash import BashTool
from pi_lsp.agent.tools.edit import EditTool
from pi_lsp.agent.tools.find import FindTool
from pi_lsp.agent.tools.grep import GrepTool
from pi_lsp.agent.tools.ls import LsTool
from pi_lsp.agent.tools.read import ReadTool
from pi_lsp.agent.tools.write import WriteTool

ALL_TOOL_NAMES = ("read", "bash", "edit", "write", "grep", "find", "ls")
DEFAULT_TOOL_NAMES = ("read", "bash", "edit", "write")
READ_ONLY_TOOL_NAMES = ("read", "grep", "find", "ls")

_FACTORIES: dict[str, Callable[[], Tool]] = {
    "read": ReadTool,
    "bash": BashTool,
    "edit": EditTool,
    "write": WriteTool,
    "grep": GrepTool,
    "find": FindTool,
    "ls": LsTool,
}


def create_tools(
    names: Sequence[str] = DEFAULT_TOOL_NAMES,
    *,
    shell_path: str | None = None,
    shell_command_prefix: str | None = None,
) -> list[Tool]:
    """Fresh tool objects for ``names`` in the given order; an unknown name is a ValueError.

    ``shell_path`` / ``shell_command_prefix`` are pi's ``shellPath`` / ``shellCommandPrefix``
    settings, used by bash.
    """
    tools: list[Tool] = []
    for name in names:
        if name == "bash":
            tools.append(BashTool(shell_path=shell_path, command_prefix=shell_command_prefix))
            continue
        factory = _FACTORIES.get(name)
        if factory is None:
            raise ValueError(f"Unknown tool name: {name}")
        tools.append(factory())
    return tools
