"""Two servers on one workspace at once (two editors, or an editor and a second window): their
snapshots run concurrently into one store, which stays whole; each session's checkpoints hold
the workspace as it was after each of its commands."""

from __future__ import annotations

import asyncio

from pi_lsp.checkpoints.store import WorkspaceStore
from tests.agent.chat_support import MODEL, ChatClient
from tests.checkpoints.support import open_chat

COMMANDS = 6


async def test_two_servers_snapshot_one_workspace_concurrently() -> None:
    async for chat in open_chat([], {f"f{n:03}.txt": f"{n}\n" for n in range(200)}):
        other = await ChatClient.start(chat.ws, chat.fake.url, options={"model": MODEL, "approval": "auto"})
        try:
            await other.new_session(chat.ws)

            async def commands(client: ChatClient, name: str) -> None:
                for number in range(COMMANDS):
                    command = f"printf '{name} {number}' > {name}{number}.txt && touch f{number:03}.txt"
                    await client.rpc.request("pi/bash", {"command": command})

            await asyncio.gather(commands(chat.client, "a"), commands(other, "b"))
            store = WorkspaceStore(str(chat.ws.cwd), chat.ws.agent_dir)
            store.git(["fsck", "--no-progress", "--no-dangling"])
            for client, name in ((chat.client, "a"), (other, "b")):
                entries = (await client.rpc.request("pi/getEntries", {}))["entries"]
                checkpoints = [e for e in entries if e.get("customType") == "pi-lsp/checkpoint"]
                assert 1 <= len(checkpoints) <= COMMANDS
                # each command's own file is in the snapshot taken after it
                for entry in entries:
                    if entry["type"] != "bashExecution":
                        continue
                    number = int(entry["command"].split("'")[1].split()[1])
                    later = [c for c in checkpoints if entries.index(c) > entries.index(entry)]
                    if not later:
                        continue
                    snapshot = later[0]["data"]["snapshot"]
                    paths = {change.path for change in store.diff(None, snapshot)}
                    assert f"{name}{number}.txt" in paths
                last = checkpoints[-1]["data"]["snapshot"]
                assert {f"{name}{n}.txt" for n in range(COMMANDS)} <= {c.path for c in store.diff(None, last)}
                changes = await client.rpc.request(
                    "pi/getChanges", {"fromId": checkpoints[0]["id"], "toId": checkpoints[-1]["id"]}
                )
                assert all(not f["path"].startswith(".") for f in changes["files"])
        finally:
            await other.close()
