"""Three branches from one point, each changing the workspace differently (edit, create, delete,
rename, modes, links, a folder replaced by a file, binary data), then navigation back and forth
across all of them with ``restoreFiles``: the exact file tree (names, bytes, modes, link targets)
each time, and no conflict."""

from __future__ import annotations

import os

from tests.checkpoints.support import Chat, file_tree, open_chat, text_turn, tool_turn

BINARY = bytes(range(256)) * 4
START = {"hello.txt": "hello\n", "dir/a.txt": "a\n", "dir/sub/b.txt": "b\n"}
BRANCH_A = "mv hello.txt renamed.txt && chmod -x script.sh && rm link && ln -s dir linkdir"
BRANCH_B = "rm -r dir && printf 'now a file' > dir && printf '\\x00\\x01\\x02' > data.bin"
BRANCH_C = "chmod +x hello.txt && ln -sf script.sh link && mkdir -p deep/er && printf y > deep/er/z"


def replies() -> list[object]:
    edit = {"path": "hello.txt", "edits": [{"oldText": "hello", "newText": "hello from b"}]}
    return [
        tool_turn(
            ("a1", "write", {"path": "new.txt", "content": "new in a\n"}),
            ("a2", "bash", {"command": BRANCH_A}),
        ),
        text_turn("done a"),
        tool_turn(("b1", "edit", edit), ("b2", "bash", {"command": BRANCH_B})),
        text_turn("done b"),
        tool_turn(("c1", "bash", {"command": BRANCH_C})),
        text_turn("done c"),
    ]  # fmt: skip


async def leaf(chat: Chat) -> str:
    return str((await chat.request("pi/getSessionState"))["leafId"])


async def test_navigating_across_three_branches_restores_the_exact_tree() -> None:
    async for chat in open_chat(replies(), START):  # type: ignore[arg-type]
        cwd = chat.ws.cwd
        (cwd / "data.bin").write_bytes(BINARY)
        (cwd / "script.sh").write_text("#!/bin/sh\necho hi\n")
        (cwd / "script.sh").chmod(0o755)
        os.symlink("hello.txt", cwd / "link")
        start = file_tree(cwd)
        trees: dict[str, object] = {}
        leaves: dict[str, str] = {}
        fork = None
        for name in ("a", "b", "c"):
            result = await chat.request("pi/prompt", text=f"branch {name}")
            assert result["stopReason"] == "stop"
            trees[name], leaves[name] = file_tree(cwd), await leaf(chat)
            fork = fork or (await chat.checkpoints())[0]["id"]  # the workspace before "branch a"
            back = await chat.request("pi/navigate", targetId=result["userEntryId"], restoreFiles=True)
            assert back["restored"]["conflicts"] == [] and file_tree(cwd) == start
        assert trees["a"]["renamed.txt"] == ("file", b"hello\n", 0o644)  # type: ignore[index]
        assert trees["a"]["linkdir"] == ("link", "dir", 0) and "link" not in trees["a"]  # type: ignore[index,operator]
        assert trees["a"]["script.sh"][2] == 0o644  # type: ignore[index]
        assert trees["b"]["dir"] == ("file", b"now a file", 0o644)  # type: ignore[index]
        assert trees["b"]["data.bin"] == ("file", b"\x00\x01\x02", 0o644)  # type: ignore[index]
        assert trees["b"]["hello.txt"] == ("file", b"hello from b\n", 0o644)  # type: ignore[index]
        assert trees["c"]["link"] == ("link", "script.sh", 0)  # type: ignore[index]
        assert trees["c"]["hello.txt"][2] == 0o755  # type: ignore[index]
        assert len(await chat.checkpoints()) == 4  # the fork's, one per branch's tool batch
        for name in ("a", "b", "c", "start", "c", "a", "b", "start", "b"):
            target = fork if name == "start" else leaves[name]
            moved = await chat.request("pi/setLeaf", id=target, restoreFiles=True)
            assert moved["restored"]["conflicts"] == [], (name, moved)
            assert file_tree(cwd) == (start if name == "start" else trees[name]), name
