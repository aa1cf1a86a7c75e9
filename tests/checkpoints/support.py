"""Helpers of the checkpoint tests: a workspace's exact file tree, hashes of a ``.git``, a chat
(``tests/agent/chat_support.py``'s, with the tools approved)."""

from __future__ import annotations

import hashlib
import os
import stat
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from tests.agent.chat_support import Chat, text_turn, tool_turn
from tests.agent.chat_support import open_chat as open_chat_on
from tests.llm.fake_anthropic import Reply

__all__ = ["Chat", "file_tree", "git", "hash_dir", "open_chat", "text_turn", "tool_turn"]

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


async def open_chat(
    replies: list[Reply],
    files: dict[str, str] | None = None,
    options: dict[str, Any] | None = None,
    *,
    inside: bool = False,
    env: dict[str, str] | None = None,
) -> AsyncIterator[Chat]:
    """:func:`tests.agent.chat_support.open_chat` on ``files`` (none by default), tools approved;
    ``inside``: the agent dir and the session folder inside the workspace; ``env``: more variables
    for the server process."""
    async for chat in open_chat_on(
        replies, files=files or {}, options={"approval": "auto", **(options or {})}, inside=inside, env=env
    ):
        yield chat
