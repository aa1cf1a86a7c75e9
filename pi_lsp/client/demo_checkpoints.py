"""The demo's checkpoint step: a run changes files, going back in the tree brings them back, the
undo returns the run's version.

The scripted loopback model of :mod:`pi_lsp.client.demo_chat` asks for an ``edit`` of ``main.py``
and a ``write`` of a new ``greet.py``; the server snapshots the workspace before the user message
and after the tool batch. ``pi/getChanges`` shows what the run changed, ``pi/navigate`` with
``restoreFiles`` to the run's user message puts the files back as they were before it (the leaf
moves with them), and ``pi/undoRestore`` puts the run's version back.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pi_lsp.client.demo_chat import ScriptedModel, reply, show_events, start_server
from pi_lsp.client.rpc_client import RpcClient

if TYPE_CHECKING:
    from pi_lsp.client.demo import Demo

GREET = "def greet(name):\n    return f'hello, {name}'\n"
SCRIPT = [
    reply(
        "msg_demo_rewind_1",
        [
            {"type": "text", "text": "I will add a greet() helper and use it."},
            {
                "type": "tool_use",
                "id": "toolu_demo_write",
                "name": "write",
                "input": {"path": "greet.py", "content": GREET},
            },
            {
                "type": "tool_use",
                "id": "toolu_demo_edit",
                "name": "edit",
                "input": {
                    "path": "main.py",
                    "edits": [
                        {
                            "oldText": "print('hello')",
                            "newText": "from greet import greet\n\nprint(greet('world'))",
                        }
                    ],
                },
            },
        ],
        "tool_use",
    ),
    reply("msg_demo_rewind_2", [{"type": "text", "text": "main.py now greets the world."}], "end_turn"),
]


def _files(project: Path) -> str:
    """``main.py`` and ``greet.py`` as one line each (their first line, or absent)."""
    shown = []
    for name in ("main.py", "greet.py"):
        path = project / name
        shown.append(f"{name}: {path.read_text().splitlines()[0]!r}" if path.exists() else f"{name}: absent")
    return ", ".join(shown)


async def rewind(demo: Demo) -> None:
    project = demo.root / "project"
    (project / "main.py").write_text("print('hello')\n")
    model = ScriptedModel(SCRIPT)
    url = await model.start()
    client = await start_server(demo, url)
    try:
        await client.request("pi/newSession", {"cwd": str(project)})
        demo.out(f"before the run: {_files(project)}")
        pending = asyncio.ensure_future(client.request("pi/prompt", {"text": "Greet the world."}))
        await show_events(demo, client)
        result = await pending
        demo.out(f"after the run:  {_files(project)}")
        checkpoints = await _checkpoints(client)
        demo.out(f"{len(checkpoints)} checkpoint entries (before the user message, after the tool batch)")
        changes = await client.request("pi/getChanges", {})
        demo.out("pi/getChanges: " + ", ".join(f"{f['path']} {f['change']}" for f in changes["files"]))

        back = await client.request("pi/navigate", {"targetId": result["userEntryId"], "restoreFiles": True})
        restored = back["restored"]
        what = ", ".join(f"{f['path']} {f['change']}" for f in restored["restored"])
        demo.out(
            f"pi/navigate to the user message with restoreFiles: {what}; conflicts {restored['conflicts']}"
        )
        demo.out(f"back in the tree: {_files(project)} (editor text {back.get('editorText')!r})")

        undone = await client.request("pi/undoRestore", {"undoId": restored["undoId"]})
        what = ", ".join(f"{f['path']} {f['change']}" for f in undone["restored"])
        demo.out(f"pi/undoRestore: {what}")
        demo.out(f"after the undo: {_files(project)}")
    finally:
        await client.close()
        await model.close()


async def _checkpoints(client: RpcClient) -> list[dict[str, Any]]:
    entries = (await client.request("pi/getEntries", {}))["entries"]
    return [entry for entry in entries if entry.get("customType") == "pi-lsp/checkpoint"]
