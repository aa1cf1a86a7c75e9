"""Helpers of the checkpoint tests: a workspace's exact file tree, hashes of a ``.git``, a chat."""

from __future__ import annotations

import hashlib
import os
import stat
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from tests.agent.chat_support import MODEL, ChatClient, Workspace
from tests.llm.fake_anthropic import FakeAnthropic, Reply, Text, ToolUse, assistant_stream
from tests.pi.pi_rpc import write_agent_dir

FileTree = dict[str, tuple[str, bytes | str, int]]


def file_tree(root: Path, skip: tuple[str, ...] = (".git",)) -> FileTree:
    """Every file and link under ``root`` (``skip`` folders left out): kind, bytes or link target,
    permission bits; empty folders as ``("dir", "", 0)`` so a left-over folder is seen too."""
    tree: FileTree = {}
    for folder, dirs, files in os.walk(root):
        dirs[:] = [name for name in dirs if name not in skip]
        relative = os.path.relpath(folder, root)
        if relative != "." and not dirs and not files:
            tree[relative] = ("dir", "", 0)
        for name in files + [d for d in dirs if os.path.islink(os.path.join(folder, d))]:
            path = os.path.join(folder, name)
            key = os.path.normpath(os.path.join(relative, name))
            info = os.lstat(path)
            if stat.S_ISLNK(info.st_mode):
                tree[key] = ("link", os.readlink(path), 0)
            else:
                tree[key] = ("file", Path(path).read_bytes(), stat.S_IMODE(info.st_mode))
    return tree


def hash_dir(root: Path) -> dict[str, str]:
    """sha256 of every file under ``root`` (a ``.git``), with its mode: byte-identical or not."""
    hashes: dict[str, str] = {}
    for folder, _dirs, files in os.walk(root):
        for name in files:
            path = os.path.join(folder, name)
            info = os.lstat(path)
            data = os.readlink(path).encode() if os.path.islink(path) else Path(path).read_bytes()
            hashes[os.path.relpath(path, root)] = f"{oct(info.st_mode)}:{hashlib.sha256(data).hexdigest()}"
    return hashes


def git_env() -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("GIT_")}
    env.update(GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull, GIT_AUTHOR_NAME="t",
               GIT_AUTHOR_EMAIL="t@t", GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@t")  # fmt: skip
    return env


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, env=git_env(), capture_output=True, check=True)
    return done.stdout.decode()


def tool_turn(*calls: tuple[str, str, dict[str, Any]]) -> Reply:
    blocks = [ToolUse(call_id, name, args) for call_id, name, args in calls]
    return Reply(events=assistant_stream(*blocks, message_id="m_" + calls[0][0]))


def text_turn(text: str) -> Reply:
    return Reply(events=assistant_stream(Text(text), message_id="m_" + text.split()[0]))


class Chat:
    """A workspace, a fake model and one connected client with a fresh session."""

    def __init__(self, ws: Workspace, fake: FakeAnthropic, client: ChatClient) -> None:
        self.ws, self.fake, self.client = ws, fake, client

    async def request(self, method: str, **params: Any) -> Any:
        return await self.client.rpc.request(method, params)

    async def entries(self) -> list[dict[str, Any]]:
        """The session's entries (file order) as the server holds them (a new file is written once
        it has an assistant message, as pi writes it)."""
        result = await self.request("pi/getEntries")
        return list(result["entries"])

    async def checkpoints(self) -> list[dict[str, Any]]:
        return [e for e in await self.entries() if e.get("customType") == "pi-lsp/checkpoint"]

    def events(self, kind: str) -> list[dict[str, Any]]:
        return [event for event in self.client.event_list() if event.get("type") == kind]


async def open_chat(
    replies: list[Reply],
    files: dict[str, str] | None = None,
    options: dict[str, Any] | None = None,
    *,
    inside: bool = False,
    env: dict[str, str] | None = None,
) -> AsyncIterator[Chat]:
    """``inside``: the agent dir and the session folder inside the workspace (``.pi-agent/``,
    ``.pi/sessions/``); ``env``: more variables for the server process."""
    ws = Workspace(files or {})
    if inside:
        ws.agent_dir, ws.sessions = ws.cwd / ".pi-agent", ws.cwd / ".pi" / "sessions"
        ws.sessions.mkdir(parents=True)
    fake = FakeAnthropic(replies)
    await fake.__aenter__()
    write_agent_dir(ws.agent_dir, fake.url, ws.settings)
    client = await ChatClient.start(
        ws, fake.url, options={"model": MODEL, "approval": "auto", **(options or {})}, env=env
    )
    try:
        await client.new_session(ws)
        yield Chat(ws, fake, client)
    finally:
        await client.close()
        await fake.__aexit__(None, None, None)
        ws.cleanup()
