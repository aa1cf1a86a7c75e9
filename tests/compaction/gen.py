"""Seeded generators of pi session entries and messages for differential tests.

Every entry type and message role pi knows appears, with awkward content on purpose: non-ASCII
and astral characters (UTF-16 lengths), images, thinking, tool calls whose arguments hold floats,
big integers and integer-like keys (``JSON.stringify`` parity), empty branch summaries,
compactions pointing at kept entries, unknown ids or nothing, and aborted/error assistants.
"""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from typing import Any

WORDS = [
    "alpha", "beta", "compaction", "session", "token", "branch", "pi", "ünïcode", "日本語", "😀",
    "fix", "the", "bug", "in", "src/main.ts", "\n", "tab\t", "quote\"", "back\\slash", "𝔘",
]  # fmt: skip
PATHS = ["src/a.ts", "src/b.ts", "/abs/c.py", "README.md", "src/ü.ts", "Z.md", "a/😀.txt", "docs/é.md"]
TOOLS = ["read", "write", "edit", "bash", "grep", "ls", "custom_tool"]
BASE_TIME = datetime(2026, 1, 1, tzinfo=UTC)


class Gen:
    """One deterministic generator (``Gen(seed)``) of texts, messages and entry chains."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.clock = 0
        self.ids: set[str] = set()

    # -- primitives ---------------------------------------------------------------------------
    def text(self, max_words: int = 60) -> str:
        rng = self.rng
        roll = rng.random()
        if roll < 0.05:
            return ""
        count = rng.randint(1, max_words)
        if roll > 0.93:
            count *= rng.randint(10, 60)  # an occasional very large block
        return " ".join(rng.choice(WORDS) for _ in range(count))

    def ms(self) -> int:
        self.clock += self.rng.randint(1, 5000)
        return 1767225600000 + self.clock

    def iso(self) -> str:
        stamp = BASE_TIME + timedelta(milliseconds=self.clock + self.rng.randint(0, 200))
        return stamp.isoformat(timespec="milliseconds").replace("+00:00", "Z")

    def new_id(self) -> str:
        while True:
            candidate = f"{self.rng.getrandbits(32):08x}"
            if candidate not in self.ids:
                self.ids.add(candidate)
                return candidate

    def image(self) -> dict[str, Any]:
        return {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}

    def blocks(self, images: bool = True) -> Any:
        if self.rng.random() < 0.3:
            return self.text()
        out: list[dict[str, Any]] = []
        for _ in range(self.rng.randint(0, 3)):
            if images and self.rng.random() < 0.25:
                out.append(self.image())
            else:
                out.append({"type": "text", "text": self.text()})
        return out

    def arguments(self, name: str) -> dict[str, Any]:
        rng = self.rng
        args: dict[str, Any] = {}
        if name in ("read", "write", "edit") and rng.random() < 0.9:
            args["path"] = rng.choice([*PATHS, ""]) if rng.random() < 0.95 else 42
        if name == "edit":
            args["oldText"], args["newText"] = self.text(10), self.text(10)
        if name == "write":
            args["content"] = self.text(30)
        if name == "bash":
            args["command"] = rng.choice(["ls -la", "npm test", "echo 日本 😀", 'grep -r "x" .'])
        if rng.random() < 0.4:
            args["limit"] = rng.choice([1.0, 0.5, 1e-7, 123.456, 1e21, 2.5e-3, 100, -3, 2**53 + 1, 1e300])
        if rng.random() < 0.2:
            args["nested"] = {"2": [True, None, "x"], "1": {"b": 1.0, "a": "é"}, "z": []}
        if rng.random() < 0.1:
            args["10"] = "integer-like key"
        return args

    # -- messages -----------------------------------------------------------------------------
    def usage(self) -> dict[str, Any]:
        rng = self.rng
        parts = {k: rng.randint(0, 5000) for k in ("input", "output", "cacheRead", "cacheWrite")}
        total = sum(parts.values()) if rng.random() < 0.8 else 0
        return {**parts, "totalTokens": total, "cost": {"input": 0, "output": 0, "total": 0}}

    def assistant(self) -> dict[str, Any]:
        rng = self.rng
        content: list[dict[str, Any]] = []
        for _ in range(rng.randint(0, 4)):
            kind = rng.choice(["text", "thinking", "toolCall", "toolCall"])
            if kind == "text":
                content.append({"type": "text", "text": self.text()})
            elif kind == "thinking":
                content.append({"type": "thinking", "thinking": self.text(), "thinkingSignature": "sig"})
            else:
                name = rng.choice(TOOLS)
                content.append(
                    {"type": "toolCall", "id": f"call_{self.new_id()}", "name": name,
                     "arguments": self.arguments(name)}
                )  # fmt: skip
        return {
            "role": "assistant",
            "content": content,
            "api": "anthropic-messages",
            "provider": "anthropic",
            "model": rng.choice(["claude-sonnet-4-5", "claude-opus-4-5"]),
            "usage": self.usage(),
            "stopReason": rng.choice(["stop", "toolUse", "toolUse", "length", "aborted", "error"]),
            "timestamp": self.ms(),
        }

    def message(self, role: str | None = None) -> dict[str, Any]:
        rng = self.rng
        role = role or rng.choice(
            ["user", "assistant", "assistant", "toolResult", "toolResult", "bashExecution", "custom"]
        )
        if role == "assistant":
            return self.assistant()
        if role == "user":
            return {"role": "user", "content": self.blocks(), "timestamp": self.ms()}
        if role == "toolResult":
            return {
                "role": "toolResult",
                "toolCallId": f"call_{self.new_id()}",
                "toolName": rng.choice(TOOLS),
                "content": [
                    b for b in [{"type": "text", "text": self.text()}, self.image()] if rng.random() < 0.8
                ],
                "isError": rng.random() < 0.2,
                "timestamp": self.ms(),
            }
        if role == "bashExecution":
            out: dict[str, Any] = {
                "role": "bashExecution",
                "command": rng.choice(["ls", "make test", "echo 😀"]),
                "output": self.text(),
                "exitCode": rng.choice([0, 1, None]),
                "cancelled": rng.random() < 0.1,
                "truncated": rng.random() < 0.1,
                "timestamp": self.ms(),
            }
            if rng.random() < 0.2:
                out["excludeFromContext"] = True
            if out["truncated"]:
                out["fullOutputPath"] = "/tmp/out.txt"
            return out
        if role == "custom":
            return {"role": "custom", "customType": "note", "content": self.blocks(), "display": True,
                    "timestamp": self.ms()}  # fmt: skip
        if role == "branchSummary":
            return {"role": "branchSummary", "summary": self.text(), "fromId": "x", "timestamp": self.ms()}
        if role == "compactionSummary":
            return {
                "role": "compactionSummary",
                "summary": self.text(),
                "tokensBefore": 10,
                "timestamp": self.ms(),
            }
        return {"role": role, "timestamp": self.ms()}

    # -- entries ------------------------------------------------------------------------------
    def details(self) -> dict[str, Any]:
        rng = self.rng
        return {
            "readFiles": rng.sample(PATHS, rng.randint(0, 3)),
            "modifiedFiles": rng.sample(PATHS, rng.randint(0, 3)),
        }

    def entry(self, kind: str, previous: list[dict[str, Any]]) -> dict[str, Any]:
        rng = self.rng
        self.ms()
        base: dict[str, Any] = {"type": kind, "id": self.new_id(), "parentId": None, "timestamp": self.iso()}
        if kind == "message":
            base["message"] = self.message()
        elif kind == "custom_message":
            base.update(customType="ext", content=self.blocks(), display=rng.random() < 0.5)
            if rng.random() < 0.3:
                base["details"] = {"k": 1}
        elif kind == "branch_summary":
            base.update(fromId=rng.choice([e["id"] for e in previous] or ["root"]),
                        summary=self.text() if rng.random() < 0.8 else "")  # fmt: skip
            if rng.random() < 0.5:
                base["details"] = self.details()
            if rng.random() < 0.3:
                base["fromHook"] = rng.random() < 0.5
        elif kind == "compaction":
            base.update(summary=self.text(), tokensBefore=rng.randint(100, 200000))
            roll = rng.random()
            if previous and roll < 0.75:
                base["firstKeptEntryId"] = rng.choice(previous[-12:])["id"]
            elif roll < 0.9:
                base["firstKeptEntryId"] = "ffffffff"
            if rng.random() < 0.7:
                base["details"] = self.details() if rng.random() < 0.9 else {"readFiles": "nope"}
            base["fromHook"] = rng.random() < 0.2
        elif kind == "model_change":
            base.update(provider="anthropic", modelId="claude-opus-4-5")
        elif kind == "thinking_level_change":
            base["thinkingLevel"] = rng.choice(["off", "low", "high"])
        elif kind == "label":
            base.update(targetId=rng.choice([e["id"] for e in previous] or ["x"]), label="mark")
        elif kind == "custom":
            base.update(customType="state", data={"n": 1})
        elif kind == "session_info":
            base["name"] = "name"
        return base

    def branch(self, length: int | None = None, compaction_rate: float = 0.06) -> list[dict[str, Any]]:
        """A root-first chain of entries of every type (messages dominate)."""
        rng = self.rng
        length = length if length is not None else rng.randint(0, 60)
        kinds = ["custom_message", "branch_summary", "model_change", "thinking_level_change", "label",
                 "custom", "session_info"]  # fmt: skip
        entries: list[dict[str, Any]] = []
        for _ in range(length):
            roll = rng.random()
            if roll < compaction_rate:
                kind = "compaction"
            elif roll < 0.8:
                kind = "message"
            else:
                kind = rng.choice(kinds)
            entry = self.entry(kind, entries)
            entry["parentId"] = entries[-1]["id"] if entries else None
            entries.append(entry)
        return entries
