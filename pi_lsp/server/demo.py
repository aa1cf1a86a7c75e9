"""``pi-lsp demo``: start the real server over stdio and use it the way an editor does.

No network and no API key: the "assistant" replies are scripted. The demo is a list of steps so
later features (compaction, the system prompt) can add theirs; each step prints what it did.
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pi_lsp.server.rpc_client import RpcClient
from pi_lsp.service.render import context_lines, wire_tree_lines

MODEL = {"api": "anthropic-messages", "provider": "anthropic", "model": "claude-sonnet-4-5"}
USAGE = {
    "input": 120,
    "output": 40,
    "cacheRead": 0,
    "cacheWrite": 0,
    "totalTokens": 160,
    "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
}


def user(text: str) -> dict[str, Any]:
    return {"type": "message", "message": {"role": "user", "content": [{"type": "text", "text": text}]}}


def assistant(text: str, tool_call: dict[str, Any] | None = None) -> dict[str, Any]:
    content: list[dict[str, Any]] = [{"type": "text", "text": text}]
    if tool_call is not None:
        content.append({"type": "toolCall", **tool_call})
    message = {
        "role": "assistant",
        "content": content,
        **MODEL,
        "usage": USAGE,
        "stopReason": "toolUse" if tool_call else "stop",
    }
    return {"type": "message", "message": message}


def tool_result(call_id: str, name: str, text: str) -> dict[str, Any]:
    message = {
        "role": "toolResult",
        "toolCallId": call_id,
        "toolName": name,
        "content": [{"type": "text", "text": text}],
        "isError": False,
    }
    return {"type": "message", "message": message}


@dataclass
class Demo:
    """State shared by the steps."""

    client: RpcClient
    root: Path
    out: Callable[[str], None] = print
    ids: dict[str, str] = field(default_factory=dict)
    state: dict[str, Any] = field(default_factory=dict)

    async def append(self, name: str, entry: dict[str, Any]) -> str:
        result = await self.client.request("pi/appendEntry", {"entry": entry})
        self.ids[name] = result["id"]
        return str(result["id"])


Step = tuple[str, Callable[[Demo], Awaitable[None]]]


async def create_session(demo: Demo) -> None:
    project = demo.root / "project"
    project.mkdir(parents=True, exist_ok=True)
    demo.state = await demo.client.request(
        "pi/newSession", {"cwd": str(project), "sessionDir": str(demo.root / "sessions")}
    )
    demo.out(f"session {demo.state['sessionId']} for {project}")


async def tool_conversation(demo: Demo) -> None:
    await demo.append("ask", user("What does src/app.py do?"))
    call = {"id": "call_1", "name": "read", "arguments": {"path": "src/app.py"}}
    await demo.append("read", assistant("Let me read it.", call))
    await demo.append("result", tool_result("call_1", "read", "def main():\n    print('hello')\n"))
    await demo.append("answer", assistant("It defines main(), which prints a greeting."))
    await demo.append("follow_up", user("Add type hints to it."))
    await demo.append("hints", assistant("Done: def main() -> None."))
    demo.out(
        f"appended {len(demo.ids)} entries (user, assistant→read, toolResult, assistant, user, assistant)"
    )


async def branch(demo: Demo) -> None:
    result = await demo.client.request("pi/navigate", {"targetId": demo.ids["follow_up"]})
    demo.out(f"navigated to the follow-up question: leaf is now {result['leafId']} (the answer before it)")
    demo.out(f"text handed back to the editor: {result.get('editorText')!r}")
    await demo.append("other_question", user("Write a docstring for it instead."))
    await demo.append("docstring", assistant('Added """Print a greeting."""'))
    demo.out("appended a different follow-up: the session now has two branches")


async def label(demo: Demo) -> None:
    result = await demo.client.request("pi/setLabel", {"targetId": demo.ids["answer"], "label": "fork point"})
    demo.out(f"labelled the shared answer 'fork point' (label entry {result['id']})")


async def show_tree(demo: Demo) -> None:
    tree = await demo.client.request("pi/getTree", {})
    for line in wire_tree_lines(tree):
        demo.out("  " + line)


async def show_contexts(demo: Demo) -> None:
    for title, leaf in (("first branch (type hints)", "hints"), ("second branch (docstring)", "docstring")):
        context = await demo.client.request("pi/buildContext", {"leafId": demo.ids[leaf]})
        demo.out(f"context of the {title}:")
        for line in context_lines(context["messages"], context["thinkingLevel"], context["model"]):
            demo.out("  " + line)


async def show_file(demo: Demo) -> None:
    state = await demo.client.request("pi/getSessionState", {})
    notifications = [n for n in demo.client.drain_notifications() if n.get("method") == "pi/sessionChanged"]
    demo.out(
        f"{state['entryCount']} entries, leaf {state['leafId']},"
        f" {len(notifications)} pi/sessionChanged notifications"
    )
    demo.out(f"session file: {state['file']}")
    demo.out(f"try: pi-lsp tree {state['file']}")


STEPS: list[Step] = [
    ("Create a session", create_session),
    ("Append a tool-using conversation", tool_conversation),
    ("Branch from an earlier message", branch),
    ("Label the fork point", label),
    ("The tree", show_tree),
    ("The context of both branches", show_contexts),
    ("Where it is stored", show_file),
]


async def _run(root: Path, steps: list[Step]) -> int:
    env = dict(os.environ, PI_CODING_AGENT_DIR=str(root / "agent"))
    env.pop("ANTHROPIC_API_KEY", None)
    client = await RpcClient.start(env=env, cwd=str(root), quiet=True)
    try:
        info = await client.initialize(str(root), {"pi": {"sessionDir": str(root / "sessions")}})
        server = info.get("serverInfo", {})
        print(f"started {server.get('name')} {server.get('version')} over stdio (pid {client.process.pid})")
        demo = Demo(client, root)
        for number, (title, step) in enumerate(steps, 1):
            print(f"\n{number}. {title}")
            await step(demo)
    finally:
        await client.close()
    return 0


def run_demo(directory: str | None = None, steps: list[Step] | None = None) -> int:
    root = Path(directory) if directory else Path(tempfile.mkdtemp(prefix="pi-lsp-demo-"))
    root.mkdir(parents=True, exist_ok=True)
    print(f"demo folder: {root}")
    code = asyncio.run(_run(root.resolve(), steps or STEPS))
    sys.stdout.flush()
    return code
