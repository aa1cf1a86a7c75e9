"""The approval policy of agent runs: which tool calls wait for the user, and what a refusal says.

pi itself never asks ("No permission popups"); editors expect to. The contract's setting
``approval`` picks: ``auto`` (pi's behaviour), ``acceptEdits`` (default: ask before ``bash``, and
before ``edit``/``write`` outside the workspace folders) or ``ask`` (ask before ``bash``, ``edit``
and ``write``). Read-only tools never ask. "Outside" is judged on the file the call really changes
(:func:`check_call`), against the editor's workspace folders only. ``allowAlways`` covers a tool
for the rest of the session (for ``bash`` only that exact command).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pi_lsp.agent.tools.targets import FileTarget, file_target, preview_fields

MUTATING_TOOLS = frozenset({"edit", "write"})

NO_CAPABILITY = (
    "Tool call blocked: running {tool} needs the user's approval, and this editor cannot ask for it"
    " (it did not declare capabilities.experimental.pi.approvals). Nothing was run."
)
DENIED = "Tool call blocked: the user denied permission to run {tool}. Nothing was run."
# A refusal with the user's reason says first that the user refused (so the model does not take
# the reason for a tool failure), then gives the reason as the user wrote it.
DENIED_WITH_REASON = DENIED + " The user's reason: {reason}"
UNANSWERED = "Tool call blocked: the approval request for {tool} got no valid answer. Nothing was run."
INVALID_ANSWER = (
    "Tool call blocked: the editor's approval answer for {tool} could not be applied ({why})."
    " Nothing was run."
)


def _under(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


@dataclass(frozen=True)
class CallCheck:
    """What the policy judged of one tool call, against the editor's workspace folders.

    ``target``: the file an ``edit``/``write`` changes (symlinks followed, ``targets.py``);
    ``outside``: that file lies outside every workspace folder; ``cwd_outside``: the session's cwd
    does (a session file's header names its cwd, and a cloned repository can ship one saying
    ``/``: the cwd never widens the boundary, and when it lies outside, every call that changes
    something asks, whatever its path).
    """

    target: FileTarget | None
    outside: bool
    cwd_outside: bool

    def needs_approval(self, mode: str, tool_name: str) -> bool:
        return needs_approval(mode, tool_name, self.outside or self.cwd_outside)

    def preview_fields(self) -> dict[str, Any]:
        """What the approval preview says of the boundary (and the file judged, for edit/write)."""
        fields: dict[str, Any] = {}
        if self.target is not None:
            fields.update(preview_fields(self.target), outsideWorkspace=self.outside)
        if self.cwd_outside:
            fields["cwdOutsideWorkspace"] = True
        return fields


def check_call(tool_name: str, args: Mapping[str, Any], cwd: str, folders: Iterable[str]) -> CallCheck:
    """Judge a call against the workspace ``folders`` (real paths compared; none: all is outside)."""
    roots = [os.path.realpath(folder) for folder in folders]
    cwd_outside = not any(_under(os.path.realpath(cwd), root) for root in roots)
    path = args.get("path")
    if tool_name not in MUTATING_TOOLS or not isinstance(path, str) or not path:
        return CallCheck(None, False, cwd_outside)
    target = file_target(path, cwd)
    return CallCheck(target, not any(_under(target.real, root) for root in roots), cwd_outside)


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
