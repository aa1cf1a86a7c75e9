"""``pi/getSessionStats``: pi's ``getSessionStats`` counts over a context's messages."""

from __future__ import annotations

from typing import Any


def session_stats(messages: list[dict[str, Any]]) -> dict[str, Any]:
    """pi's ``getSessionStats`` over the context's messages (pi counts its agent's messages: after
    loading a session those are the branch's context, compaction summary included)."""
    counts = {"user": 0, "assistant": 0, "toolResult": 0}
    tool_calls = 0
    tokens = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0}
    cost = 0.0
    total = 0
    for message in messages:
        total += 1
        role = message.get("role")
        if role in counts:
            counts[role] += 1
        if role != "assistant":
            continue
        tool_calls += sum(1 for block in message.get("content") or [] if block.get("type") == "toolCall")
        usage = message.get("usage") or {}
        for key in tokens:
            value = usage.get(key)
            if isinstance(value, int | float):
                tokens[key] += int(value)
        spent = (usage.get("cost") or {}).get("total")
        if isinstance(spent, int | float):
            cost += spent
    return {
        "userMessages": counts["user"],
        "assistantMessages": counts["assistant"],
        "toolCalls": tool_calls,
        "toolResults": counts["toolResult"],
        "totalMessages": total,
        "tokens": {**tokens, "total": sum(tokens.values())},
        "cost": cost,
    }
