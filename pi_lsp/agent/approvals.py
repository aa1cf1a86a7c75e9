"""The approval policy of agent runs: which tool calls wait for the user, and what a refusal says.

pi itself never asks ("No permission popups"); editors expect to. The contract's setting
``approval`` picks: ``auto`` (pi's behaviour), ``acceptEdits`` (default: ask before ``bash``, and
before ``edit``/``write`` outside the workspace folders) or ``ask`` (ask before ``bash``, ``edit``
and ``write``). Read-only tools never ask. ``allowAlways`` covers a tool for the rest of the session
(for ``bash`` only that exact command).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

APPROVAL_MODES = ("auto", "acceptEdits", "ask")
DEFAULT_APPROVAL = "acceptEdits"
_STRICTNESS = {mode: rank for rank, mode in enumerate(APPROVAL_MODES)}
MUTATING_TOOLS = frozenset({"edit", "write"})

NO_CAPABILITY = (
    "Tool call blocked: running {tool} needs the user's approval, and this editor cannot ask for it"
    " (it did not declare capabilities.experimental.pi.approvals). Nothing was run."
)
DENIED = "Tool call blocked: the user denied permission to run {tool}. Nothing was run."
UNANSWERED = "Tool call blocked: the approval request for {tool} got no valid answer. Nothing was run."


def stricter(first: str, second: str | None) -> str:
    """The stricter of two modes (a workspace may tighten the policy, never loosen it)."""
    if second is None or second not in _STRICTNESS:
        return first
    return second if _STRICTNESS[second] > _STRICTNESS[first] else first


def tool_path(args: Mapping[str, Any], cwd: str) -> str | None:
    """The absolute path an ``edit``/``write`` call targets (pi resolves against the cwd)."""
    path = args.get("path")
    if not isinstance(path, str) or not path:
        return None
    if path.startswith("@"):
        path = path[1:]
    if path == "~" or path.startswith("~/"):
        path = os.path.expanduser(path)
    return os.path.normpath(os.path.join(cwd, path))


def is_outside(path: str, roots: Iterable[str]) -> bool:
    """Whether ``path`` (symlinks resolved) lies outside every workspace root."""
    real = os.path.realpath(path)
    for root in roots:
        base = os.path.realpath(root)
        if real == base or real.startswith(base.rstrip(os.sep) + os.sep):
            return False
    return True


def needs_approval(mode: str, tool_name: str, outside_workspace: bool) -> bool:
    if mode == "auto":
        return False
    if tool_name == "bash":
        return True
    if tool_name in MUTATING_TOOLS:
        return mode == "ask" or outside_workspace
    return False


@dataclass
class AllowList:
    """What ``allowAlways`` answers allowed for the rest of the session."""

    tools: set[str] = field(default_factory=set)
    commands: set[str] = field(default_factory=set)

    def covers(self, tool_name: str, args: Mapping[str, Any]) -> bool:
        if tool_name == "bash":
            return args.get("command") in self.commands
        return tool_name in self.tools

    def add(self, tool_name: str, args: Mapping[str, Any]) -> None:
        if tool_name == "bash":
            command = args.get("command")
            if isinstance(command, str):
                self.commands.add(command)
        else:
            self.tools.add(tool_name)
