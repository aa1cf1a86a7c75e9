"""The built-in slash commands an ACP client offers (pi's ``/compact``, ``/name``, ``/session``).

Skills (``/skill:name``) and prompt templates are expanded by the run service as ``pi/prompt``
expands them; these three are answered here, as agent text, without a model call.
"""

from __future__ import annotations

from typing import Any

BUILTIN_COMMANDS: tuple[dict[str, Any], ...] = (
    {"name": "compact", "description": "Summarise the conversation so far to free context",
     "input": {"hint": "[instructions for the summary]"}},
    {"name": "name", "description": "Name this session", "input": {"hint": "<name>"}},
    {"name": "session", "description": "Show the session's file, id, messages and tokens"},
)  # fmt: skip
_NAMES = {command["name"] for command in BUILTIN_COMMANDS}


def builtin_command(text: str) -> tuple[str, str] | None:
    """(name, argument) when ``text`` is one of the built-in commands, else None."""
    if not text.startswith("/"):
        return None
    head, _, rest = text[1:].partition(" ")
    name = head.strip()
    if name not in _NAMES:
        return None
    return name, rest.strip()


def session_summary(state: dict[str, Any], stats: dict[str, Any]) -> str:
    """What ``/session`` shows, as pi's ``/session`` does."""
    tokens = stats.get("tokens") or {}
    usage = stats.get("contextUsage") or {}
    lines = [
        "Session info",
        f"- File: {state.get('file') or '(not saved yet)'}",
        f"- ID: {state.get('sessionId')}",
    ]
    if state.get("name"):
        lines.append(f"- Name: {state['name']}")
    lines += [
        f"- Messages: {stats.get('userMessages', 0)} user, {stats.get('assistantMessages', 0)} assistant,"
        f" {stats.get('toolCalls', 0)} tool calls, {stats.get('toolResults', 0)} tool results",
        f"- Tokens: {tokens.get('input', 0)} in, {tokens.get('output', 0)} out,"
        f" {tokens.get('cacheRead', 0)} cache read, {tokens.get('cacheWrite', 0)} cache write",
        f"- Cost: ${float(stats.get('cost') or 0):.4f}",
    ]
    if isinstance(usage, dict) and usage.get("tokens") is not None:
        lines.append(f"- Context: {usage.get('tokens')} of {usage.get('contextWindow')} tokens")
    lines.append(
        "- The session tree (branches, forks): pi-lsp's VS Code and Neovim clients, or `pi-lsp tree`."
    )
    return "\n".join(lines)
