"""Checkpoints through the real server: runs against the fake model that write, delete and run bash,
then navigation back and forth across branches with ``restoreFiles``, checking the exact file tree
(names, bytes, modes, links) each time; conflicts, forced restores and their undo; the user's
``.git`` byte-identical throughout; pi reading the session with the same context as before."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from pi_lsp.client.rpc_client import RpcError
from tests.agent.chat_support import skip_dropped, without_checkpoints
from tests.checkpoints.support import Chat, file_tree, git, hash_dir, open_chat, text_turn, tool_turn
from tests.oracle import PiOracle

OUR_GIT_VARIABLES = "env | grep -E '^GIT_(DIR|WORK_TREE|INDEX_FILE|CONFIG_NOSYSTEM|CONFIG_GLOBAL)='"
BINARY = b"\x00\xffbinary\x00data\n"
BASH_ONE = (
    "rm old.bin && printf 'made' > made.sh && chmod +x made.sh && ln -s hello.txt link"
    " && mkdir -p d/e && printf 'x' > d/e/f && printf 'log' > ignored/new.log"
)


def prepare(cwd: Path) -> None:
    """A git repository with a binary file, an executable, a symlink and an ignored folder."""
    (cwd / "old.bin").write_bytes(BINARY)
    (cwd / "script.sh").write_text("#!/bin/sh\necho hi\n")
    (cwd / "script.sh").chmod(0o755)
    (cwd / "ignored").mkdir()
    (cwd / "ignored" / "keep.log").write_text("ignored\n")
    (cwd / ".gitignore").write_text("ignored/\n")
    os.symlink("script.sh", cwd / "run")
    git(cwd, "init", "-q")
    git(cwd, "add", "-A")
    git(cwd, "commit", "-qm", "start")
    git(cwd, "stash", "list")


def run_one() -> list[Any]:
    return [
        tool_turn(
            ("t1", "write", {"path": "new.txt", "content": "new file\n"}),
            ("t2", "write", {"path": "hello.txt", "content": "line one\nline two\n"}),
        ),
        tool_turn(("t3", "bash", {"command": BASH_ONE})),
        text_turn("done one"),
        tool_turn(("t4", "write", {"path": "hello.txt", "content": "branch two\n"})),
        text_turn("done two"),
    ]


async def user_entry(chat: Chat, text: str) -> dict[str, Any]:
    return next(
        e for e in (await chat.entries())
        if e["type"] == "message" and e["message"]["role"] == "user"
        and e["message"]["content"][0]["text"] == text
    )  # fmt: skip


def without_ignored(tree: dict[str, Any]) -> dict[str, Any]:
    return {path: value for path, value in tree.items() if not path.startswith("ignored")}


@pytest.mark.oracle
async def test_runs_take_checkpoints_and_navigation_rewinds_the_workspace(pi_oracle: PiOracle) -> None:
    async for chat in open_chat(run_one(), {"hello.txt": "line one\n"}):
        cwd = chat.ws.cwd
        prepare(cwd)
        git_before = hash_dir(cwd / ".git")
        start = file_tree(cwd)

        one = await chat.request("pi/prompt", text="one")
        assert one["stopReason"] == "stop"
        after_one = file_tree(cwd)
        assert after_one["made.sh"] == ("file", b"made", 0o755) and after_one["link"] == (
            "link",
            "hello.txt",
            0,
        )
        assert "old.bin" not in after_one
        # before the user message (none on the branch yet), after each tool batch
        checkpoints = await chat.checkpoints()
        assert len(checkpoints) == 3
        assert [e["entryId"] for e in chat.events("checkpoint")] == [c["id"] for c in checkpoints]
        assert set(one["entryIds"]) >= {c["id"] for c in checkpoints}
        assert one["userEntryId"] == (await user_entry(chat, "one"))["id"]
        assert (await user_entry(chat, "one"))["parentId"] == checkpoints[0]["id"]
        second = {f["path"]: f["change"] for f in checkpoints[2]["data"]["files"]}
        assert second == {"old.bin": "deleted", "made.sh": "added", "link": "added", "d/e/f": "added"}
        assert not any(
            f["path"].startswith((".git/", "ignored")) for c in checkpoints for f in c["data"]["files"]
        )
        leaf_one = (await chat.request("pi/getSessionState"))["leafId"]

        changes = await chat.request("pi/getChanges", diff=True)
        by_path = {f["path"]: f for f in changes["files"]}
        assert {p: f["change"] for p, f in by_path.items()} == {
            "new.txt": "added", "hello.txt": "modified", "old.bin": "deleted", "made.sh": "added",
            "link": "added", "d/e/f": "added",
        }  # fmt: skip
        assert "+line two" in by_path["hello.txt"]["diff"]
        assert by_path["old.bin"]["diff"] == "Binary files differ\n"

        # back to before the first message: the workspace is as it was (ignored files untouched)
        preview = await chat.request("pi/previewRestore", targetId=(await user_entry(chat, "one"))["id"])
        assert {f["path"]: f["change"] for f in preview["files"]}["old.bin"] == "create"
        assert not any(f["conflict"] for f in preview["files"])
        assert file_tree(cwd) == after_one  # a preview writes nothing
        back = await chat.request(
            "pi/navigate", targetId=(await user_entry(chat, "one"))["id"], restoreFiles=True
        )
        assert back["editorText"] == "one" and back["restored"]["conflicts"] == []
        assert without_ignored(file_tree(cwd)) == without_ignored(start)
        assert file_tree(cwd)["ignored/new.log"] == ("file", b"log", 0o644)  # ignored: not ours to remove

        # a second branch from there
        two = await chat.request("pi/prompt", text="two")
        assert two["stopReason"] == "stop"
        assert len(await chat.checkpoints()) == 4  # nothing changed before "two": only the write's snapshot
        after_two = file_tree(cwd)
        assert after_two["hello.txt"] == ("file", b"branch two\n", 0o644)
        leaf_two = (await chat.request("pi/getSessionState"))["leafId"]

        for leaf, expected in ((leaf_one, after_one), (leaf_two, after_two), (leaf_one, after_one)):
            moved = await chat.request("pi/setLeaf", id=leaf, restoreFiles=True)
            assert moved["leafId"] == leaf and moved["restored"]["conflicts"] == []
            assert file_tree(cwd) == expected

        # a hand edit is a conflict: left alone, then forced, then undone (the leaf stays at one)
        (cwd / "new.txt").write_text("by hand\n")
        preview = await chat.request("pi/previewRestore", targetId=leaf_two, diff=True)
        assert [f for f in preview["files"] if f["path"] == "new.txt"] == [
            {"path": "new.txt", "change": "delete", "conflict": True,
             "diff": "--- new.txt\n+++ new.txt\n@@ -1 +0,0 @@\n-by hand\n"}
        ]  # fmt: skip
        kept = await chat.request("pi/restoreFiles", targetId=leaf_two)
        assert (
            kept["conflicts"] == ["new.txt"] and {"path": "hello.txt", "change": "modify"} in kept["restored"]
        )
        assert (cwd / "new.txt").read_text() == "by hand\n"
        assert file_tree(cwd)["hello.txt"] == after_two["hello.txt"]
        forced = await chat.request("pi/restoreFiles", targetId=leaf_two, force=True)
        assert forced["restored"] == [{"path": "new.txt", "change": "delete"}] and forced["conflicts"] == []
        assert file_tree(cwd) == after_two
        assert (await chat.request("pi/getSessionState"))["leafId"] == leaf_one  # restores move no leaf
        undone = await chat.request("pi/undoRestore", undoId=forced["undoId"])
        assert undone == {"restored": [{"path": "new.txt", "change": "create"}], "conflicts": []}
        assert (cwd / "new.txt").read_text() == "by hand\n"
        undone = await chat.request("pi/undoRestore", undoId=kept["undoId"])
        assert {"path": "hello.txt", "change": "modify"} in undone["restored"] and undone["conflicts"] == []
        assert file_tree(cwd) == {**after_one, "new.txt": ("file", b"by hand\n", 0o644)}

        assert hash_dir(cwd / ".git") == git_before  # the user's repository: byte-identical
        git(cwd, "stash", "list")

        # pi reads the session with the same context as without the checkpoint entries
        [session_file] = chat.ws.session_files()
        entries = chat.ws.entries()
        for leaf in (leaf_one, leaf_two, (await user_entry(chat, "two"))["id"]):
            with_checkpoints = pi_oracle.result("context", path=str(session_file), leafId=leaf)
            stripped, dropped = without_checkpoints(entries[1:])
            stripped_leaf = skip_dropped(leaf, {e["id"]: e["parentId"] for e in entries[1:]}, dropped)
            assert with_checkpoints == pi_oracle.result("context", entries=stripped, leafId=stripped_leaf)
            ours = await chat.request("pi/buildContext", leafId=leaf)
            assert ours["messages"] == with_checkpoints["messages"]


async def test_user_bash_and_hand_edits_are_captured_and_tools_see_no_git_variables() -> None:
    async for chat in open_chat([text_turn("ok fine")], {"a.txt": "a\n"}):
        cwd = chat.ws.cwd  # not a git repository
        result = await chat.request("pi/bash", command=OUR_GIT_VARIABLES + " ; printf 'u' > user.txt")
        assert result["output"] == "" and result["exitCode"] == 0
        [checkpoint] = await chat.checkpoints()
        assert checkpoint["parentId"] == result["entryId"]
        assert {f["path"] for f in checkpoint["data"]["files"]} == {"a.txt", "user.txt"}
        assert chat.events("checkpoint")[0]["entryId"] == checkpoint["id"]
        assert not (cwd / ".git").exists()
        (cwd / "a.txt").write_text("by hand\n")
        await chat.request("pi/prompt", text="hi")
        first = (await chat.checkpoints())[1]  # the user's edit, recorded before the message
        assert first["data"]["files"] == [{"path": "a.txt", "change": "modified"}]
        user = next(
            e for e in (await chat.entries()) if e["type"] == "message" and e["message"]["role"] == "user"
        )
        assert user["parentId"] == first["id"]
        only = await chat.request("pi/previewRestore", targetId=checkpoint["id"], paths=["user.txt"])
        assert only["files"] == []
        only = await chat.request("pi/getChanges", fromId=checkpoint["id"], toId=first["id"], paths=["a.txt"])
        assert only["files"] == [{"path": "a.txt", "change": "modified"}]
        back = await chat.request("pi/restoreFiles", targetId=checkpoint["id"])
        assert back["restored"] == [{"path": "a.txt", "change": "modify"}]
        assert (cwd / "a.txt").read_text() == "a\n"
        nothing = await chat.request("pi/restoreFiles", targetId=(await chat.entries())[0]["id"])
        assert nothing == {"restored": [], "conflicts": []}  # no checkpoint on that path


async def test_a_restore_during_a_run_is_busy_and_bad_params_name_the_field() -> None:
    replies = [tool_turn(("t1", "bash", {"command": "sleep 30"})), text_turn("never")]
    async for chat in open_chat(replies, {"a.txt": "a\n"}):
        pending = chat.client.rpc.request("pi/prompt", {"text": "go"})
        import asyncio

        task = asyncio.ensure_future(pending)
        await chat.client.wait_event(lambda e: e.get("type") == "tool_execution_start")
        first = (await chat.checkpoints())[0]["id"]
        with pytest.raises(RpcError) as raised:
            await chat.request("pi/restoreFiles", targetId=first)
        assert raised.value.code == -32006
        with pytest.raises(RpcError) as raised:
            await chat.request("pi/setLeaf", id=first, restoreFiles=True)
        assert raised.value.code == -32006
        await chat.request("pi/abort")
        await task
        for method, params, field in (
            ("pi/restoreFiles", {}, "targetId"),
            ("pi/restoreFiles", {"targetId": first, "paths": "a.txt"}, "paths"),
            ("pi/undoRestore", {}, "undoId"),
            ("pi/undoRestore", {"undoId": "0123"}, "undoId"),
            ("pi/previewRestore", {"targetId": first, "diff": 1}, "diff"),
        ):
            with pytest.raises(RpcError) as raised:
                await chat.request(method, **params)
            assert raised.value.code == -32602 and raised.value.data["field"] == field
        with pytest.raises(RpcError) as raised:
            await chat.request("pi/restoreFiles", targetId="nope")
        assert raised.value.code == -32002


async def test_settings_turn_checkpoints_off_and_too_many_files_is_told_once() -> None:
    async for chat in open_chat([], {"a.txt": "a\n", "b.txt": "b\n"}, {"checkpoints": {"maxFiles": 1}}):
        for command in ("printf 1 > c.txt", "printf 2 > c.txt"):
            await chat.request("pi/bash", command=command)
        assert await chat.checkpoints() == []
        [skipped] = chat.events("checkpoint_skipped")
        assert "more than 1 files" in skipped["reason"]
    async for chat in open_chat([], {"a.txt": "a\n"}, {"checkpoints": {"enabled": False}}):
        await chat.request("pi/bash", command="printf 1 > c.txt")
        assert await chat.checkpoints() == [] and chat.events("checkpoint_skipped") == []
        assert not (chat.ws.agent_dir / "pi-lsp" / "checkpoints").exists()
