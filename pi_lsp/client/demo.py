"""``pi-lsp demo``: start the real server over stdio and use it the way an editor does.

No network and no API key: the "assistant" replies are scripted (the tool result is the real file
the scripted read names), and the compaction step uses the offline summariser (a labelled digest
made without a model); the system-prompt step writes an AGENTS.md and a skill and reads the prompt
back. The demo is a list of steps (``STEPS``) so later features can add theirs: a step is an async
function of :class:`Demo` that prints what it did. Its temporary folder is removed at the end unless
``--keep`` (or ``--dir``) asks to keep it.
"""

from __future__ import annotations

import asyncio
import os
import shlex
import shutil
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pi_lsp.client import demo_chat, demo_checkpoints
from pi_lsp.client.rpc_client import RpcClient
from pi_lsp.service.render import context_lines, wire_tree_lines

MODEL = {"api": "anthropic-messages", "provider": "anthropic", "model": "claude-sonnet-4-5"}
OUTPUT_TOKENS = 40
USAGE: dict[str, Any] = {
    "input": 120,
    "output": 40,
    "cacheRead": 0,
    "cacheWrite": 0,
    "totalTokens": 160,
    "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
}


def user(text: str) -> dict[str, Any]:
    return {"type": "message", "message": {"role": "user", "content": [{"type": "text", "text": text}]}}


def assistant(
    text: str, tool_call: dict[str, Any] | None = None, context_tokens: int = 160
) -> dict[str, Any]:
    """A scripted reply; ``context_tokens`` is the context size the "model" reports in its usage."""
    content: list[dict[str, Any]] = [{"type": "text", "text": text}]
    if tool_call is not None:
        content.append({"type": "toolCall", **tool_call})
    message = {
        "role": "assistant",
        "content": content,
        **MODEL,
        "usage": {**USAGE, "input": context_tokens - OUTPUT_TOKENS, "totalTokens": context_tokens},
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
    kept: bool = False
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


HELPERS = 40
APP_SOURCE = (
    "".join(
        f"def helper_{n}(value):\n    # step {n} of the pipeline\n    return value + {n}\n\n"
        for n in range(HELPERS)
    )
    + "def main():\n    print('hello')\n"
)
ANSWER = (
    f"src/app.py defines {HELPERS} helpers, helper_0 to helper_{HELPERS - 1}, each returning its"
    " argument plus its own number, and main(), which prints 'hello'."
)
TYPED_MAIN = "With type hints, main() reads:\n\ndef main() -> None:\n    print('hello')"
DOCUMENTED_MAIN = (
    'With a docstring, main() reads:\n\ndef main():\n    """Print hello."""\n    print(\'hello\')'
)


async def tool_conversation(demo: Demo) -> None:
    """A question answered from a file the assistant reads with a tool; the file is really there."""
    app = demo.root / "project" / "src" / "app.py"
    app.parent.mkdir(parents=True, exist_ok=True)
    app.write_text(APP_SOURCE, encoding="utf-8")
    await demo.append("ask", user("What does src/app.py do?"))
    call = {"id": "call_1", "name": "read", "arguments": {"path": "src/app.py"}}
    await demo.append("read", assistant("Let me read it.", call, 1500))
    await demo.append("result", tool_result("call_1", "read", app.read_text(encoding="utf-8")))
    await demo.append("answer", assistant(ANSWER, context_tokens=2900))
    await demo.append("follow_up", user("Show main() with type hints."))
    await demo.append("hints", assistant(TYPED_MAIN, context_tokens=2950))
    demo.out(
        f"appended {len(demo.ids)} entries (user, assistant→read, toolResult, assistant, user, assistant)"
    )


async def branch(demo: Demo) -> None:
    result = await demo.client.request("pi/navigate", {"targetId": demo.ids["follow_up"]})
    demo.out(f"navigated to the follow-up question: leaf is now {result['leafId']} (the answer before it)")
    demo.out(f"text handed back to the editor: {result.get('editorText')!r}")
    await demo.append("other_question", user("Show main() with a docstring instead."))
    await demo.append("docstring", assistant(DOCUMENTED_MAIN, context_tokens=2940))
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


async def compact(demo: Demo) -> None:
    before = await demo.client.request("pi/buildContext", {})
    usage = before["usage"]
    demo.out(
        f"context before: {len(before['messages'])} messages, {usage['tokens']} of"
        f" {usage['contextWindow']} tokens ({usage['percent']:.2f}%)"
    )
    prepared = await demo.client.request("pi/prepareCompaction", {})
    demo.out(
        f"dry run: {prepared['summarizeCount']} messages to summarise, kept from"
        f" {prepared['firstKeptEntryId']} (keepRecentTokens is tiny in this demo)"
    )
    result = await demo.client.request("pi/compact", {})
    how = (
        " (no API key: pi-lsp's offline digest, no model involved)"
        if result["summarizer"] == "offline"
        else ""
    )
    demo.out(f"compacted by {result['summarizer']}{how}; summary begins:")
    for line in result["summary"].splitlines()[:8]:
        demo.out("  │ " + line)
    demo.out(f"tokensBefore {result['tokensBefore']} → tokensAfter {result['tokensAfter']}")
    after = await demo.client.request("pi/buildContext", {})
    demo.out("context after compaction:")
    for line in context_lines(after["messages"], after["thinkingLevel"], after["model"]):
        demo.out("  " + line)


async def show_file(demo: Demo) -> None:
    state = await demo.client.request("pi/getSessionState", {})
    notifications = [n for n in demo.client.drain_notifications() if n.get("method") == "pi/sessionChanged"]
    demo.out(
        f"{state['entryCount']} entries, leaf {state['leafId']},"
        f" {len(notifications)} pi/sessionChanged notifications"
    )
    demo.out(f"session file: {state['file']}")
    if demo.kept:
        demo.out(f"look at it with: {own_command('tree', state['file'])}")
    else:
        demo.out(f"(the demo folder is removed at the end; `{own_command('demo', '--keep')}` keeps it)")


AGENTS_MD = "# Project rules\n\n- Run `pytest -q` before every commit.\n- Prefer small, typed functions.\n"
SKILL_MD = (
    "---\nname: release-notes\ndescription: Draft release notes from the git log since the last tag.\n"
    "---\n\n1. Run `git log --oneline $(git describe --tags --abbrev=0)..HEAD`.\n"
    "2. Group the commits under Added / Changed / Fixed.\n"
)


async def system_prompt(demo: Demo) -> None:
    """Context file + skill on disk → pi/getSystemPrompt, pi/listSkills, the hover, the watcher."""
    project = demo.root / "project"
    (project / "AGENTS.md").write_text(AGENTS_MD)
    skill = project / ".pi" / "skills" / "release-notes" / "SKILL.md"
    skill.parent.mkdir(parents=True, exist_ok=True)
    skill.write_text(SKILL_MD)
    demo.out("wrote project/AGENTS.md and the skill project/.pi/skills/release-notes/SKILL.md")
    result = await demo.client.request("pi/getSystemPrompt", {"cwd": str(project)})
    demo.out(f"system prompt: {result['tokens']:,} tokens; files it is built from:")
    for source in result["sources"]:
        where = Path(source["path"]).relative_to(demo.root)
        demo.out(f"  {source['kind']:<6} {source['tokens']:>5} tokens  {where}")
    demo.out("first lines of the prompt:")
    for line in result["text"].splitlines()[:3]:
        demo.out("  │ " + line)
    skills = await demo.client.request("pi/listSkills", {"cwd": str(project)})
    demo.out("skills: " + ", ".join(f"{s['name']} ({s['source']})" for s in skills["skills"]))
    hover = await demo.client.request(
        "textDocument/hover",
        {"textDocument": {"uri": skill.as_uri()}, "position": {"line": 0, "character": 0}},
    )
    if hover is not None:
        demo.out("hover on SKILL.md: " + hover["contents"]["value"].split("\n")[0])
    # The server watches the session's cwd itself (no client file watchers needed): save and wait.
    await asyncio.sleep(0.3)  # let the notice of the writes above arrive first
    demo.client.drain_notifications()
    started = time.perf_counter()
    (project / "AGENTS.md").write_text(AGENTS_MD + "- Keep the changelog up to date.\n")
    try:
        change = await demo.client.next_notification("pi/systemPromptChanged", timeout=5)
    except TimeoutError:
        demo.out("edited AGENTS.md: no pi/systemPromptChanged within 5 s")
        return
    elapsed = (time.perf_counter() - started) * 1000
    tokens = ", ".join(f"{Path(s['path']).name} {s['tokens']}" for s in change["sources"])
    demo.out(f"edited AGENTS.md → pi/systemPromptChanged after {elapsed:.0f} ms ({tokens} tokens)")


STEPS: list[Step] = [
    ("Create a session", create_session),
    ("Append a tool-using conversation", tool_conversation),
    ("Branch from an earlier message", branch),
    ("Label the fork point", label),
    ("The tree", show_tree),
    ("The context of both branches", show_contexts),
    ("Compact the session", compact),
    ("Where it is stored", show_file),
    ("The system prompt", system_prompt),
    ("Chat with the agent (scripted loopback model)", demo_chat.chat),
    ("Rewind the code with the tree (checkpoints)", demo_checkpoints.rewind),
]


def own_command(*args: str) -> str:
    """A shell command running this same pi-lsp with ``args`` from the current folder.

    ``pi-lsp`` when that is what the shell finds, else the path it was started by (e.g.
    ``.venv/bin/pi-lsp`` from ``make demo``), else ``python -m pi_lsp``.
    """
    program = sys.argv[0]
    if os.path.basename(program) != "pi-lsp":
        command = [sys.executable, "-m", "pi_lsp"]
    else:
        on_path = shutil.which("pi-lsp")
        same = on_path is not None and os.path.exists(program) and os.path.samefile(on_path, program)
        command = ["pi-lsp" if os.sep not in program or same else program]
    return " ".join(shlex.quote(part) for part in [*command, *args])


async def _run(root: Path, steps: list[Step], kept: bool) -> int:
    env = dict(os.environ, PI_CODING_AGENT_DIR=str(root / "agent"))
    env.pop("ANTHROPIC_API_KEY", None)
    env["HOME"] = str(root / "home")  # the prompt step must not read the user's ~/.agents/skills
    client = await RpcClient.start(env=env, cwd=str(root), quiet=True)
    try:
        # A tiny keepRecentTokens so that the short demo conversation has something to summarise.
        options = {"pi": {"sessionDir": str(root / "sessions"), "compaction": {"keepRecentTokens": 10}}}
        info = await client.initialize(str(root), options)
        server = info.get("serverInfo", {})
        print(f"started {server.get('name')} {server.get('version')} over stdio (pid {client.process.pid})")
        demo = Demo(client, root, kept)
        for number, (title, step) in enumerate(steps, 1):
            print(f"\n{number}. {title}")
            await step(demo)
    finally:
        await client.close()
    return 0


def run_demo(directory: str | None = None, steps: list[Step] | None = None, *, keep: bool = False) -> int:
    """Run the steps in ``directory`` (kept) or a temporary folder (removed unless ``keep``)."""
    kept = keep or directory is not None
    root = Path(directory) if directory else Path(tempfile.mkdtemp(prefix="pi-lsp-demo-"))
    root.mkdir(parents=True, exist_ok=True)
    print(f"demo folder: {root}")
    try:
        code = asyncio.run(_run(root.resolve(), steps or STEPS, kept))
    finally:
        if kept:
            print(f"\nkept the demo folder {root}")
        else:
            shutil.rmtree(root, ignore_errors=True)
            print(f"\nremoved the demo folder {root} (`{own_command('demo', '--keep')}` keeps it)")
        sys.stdout.flush()
    return code
