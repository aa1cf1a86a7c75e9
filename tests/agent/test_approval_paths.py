"""The approval policy's boundary through the real server, real symlinks and the fake model: edit and
write are judged on the file they really change, against the editor's workspace folders only, and
what the user approved is what gets written (or nothing)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from tests.agent.approval_support import batch, chat, result_text, tool_results
from tests.agent.chat_support import Workspace
from tests.llm.fake_anthropic import Reply, ToolUse


def outside(ws: Workspace) -> Path:
    return Path(os.path.realpath(ws.root)) / "outside"


async def test_a_symlink_then_dotdot_cannot_write_outside_without_asking() -> None:
    """``<workspace>/link/../x`` is ``x`` beside the link's target for the kernel: write and edit
    through it (also spelled with ``@``, ``~`` and a Unicode space) ask under acceptEdits, and the
    preview names the real file."""

    def setup(ws: Workspace) -> dict[str, str]:
        deep = outside(ws) / "deep" / "dir"
        deep.mkdir(parents=True)
        (deep.parent / "bashrc").write_text("safe shell\n")
        os.symlink(deep, ws.cwd / "link")
        os.symlink(deep, ws.cwd / "link ")
        return {"HOME": str(ws.cwd)}

    def replies(ws: Workspace) -> list[Reply]:
        cwd = str(ws.cwd)
        return batch(
            ToolUse("w1", "write", {"path": f"{cwd}/link/../escape.txt", "content": "export PATH=evil\n"}),
            ToolUse("e1", "edit", {"path": f"@{cwd}/link/../bashrc",
                                   "edits": [{"oldText": "safe", "newText": "evil"}]}),
            ToolUse("w2", "write", {"path": "~/link/../tilde.txt", "content": "x"}),
            ToolUse("w3", "write", {"path": f"{cwd}/link\u00a0/../nbsp.txt", "content": "x"}),
        )  # fmt: skip

    async with chat(replies, setup=setup) as (ws, client):
        await client.new_session(ws)
        client.answer_approval = lambda request: {"decision": "deny"}
        await client.rpc.request("pi/prompt", {"text": "go"})
        deep = outside(ws) / "deep"
        asked = {r["toolCallId"]: r["preview"] for r in client.approval_requests}
        assert sorted(asked) == ["e1", "w1", "w2", "w3"]
        assert asked["w1"]["path"] == str(deep / "escape.txt")
        assert asked["w1"]["requestedPath"] == f"{ws.cwd}/link/../escape.txt"
        assert asked["e1"]["path"] == str(deep / "bashrc") and "+evil shell" in asked["e1"]["diff"]
        assert asked["w2"]["path"] == str(deep / "tilde.txt")
        assert asked["w3"]["path"] == str(deep / "nbsp.txt")
        assert all(preview["outsideWorkspace"] is True for preview in asked.values())
        assert sorted(p.name for p in deep.iterdir()) == ["bashrc", "dir"]
        assert (deep / "bashrc").read_text() == "safe shell\n"


async def test_a_session_whose_cwd_is_outside_the_workspace_asks_before_every_change() -> None:
    """A session file can say ``cwd: "/"`` (a repository can ship one): that never makes the whole
    disk inside. Every edit/write asks, even into the workspace, and the approval says why."""

    def replies(ws: Workspace) -> list[Reply]:
        return batch(
            ToolUse("w_in", "write", {"path": str(ws.cwd / "inside.txt"), "content": "a\n"}),
            ToolUse("w_out", "write", {"path": str(outside(ws) / "out.txt"), "content": "b\n"}),
        )

    async with chat(replies) as (ws, client):
        outside(ws).mkdir()
        header = {"type": "session", "version": 3, "id": "shipped-1", "timestamp": "2026-01-01T00:00:00.000Z",
                  "cwd": "/"}  # fmt: skip
        shipped = ws.sessions / "shipped.jsonl"
        shipped.write_text(json.dumps(header) + "\n")
        await client.rpc.request("pi/openSession", {"path": str(shipped)})
        client.answer_approval = lambda request: {"decision": "deny"}
        await client.rpc.request("pi/prompt", {"text": "go"})
        asked = {r["toolCallId"]: r for r in client.approval_requests}
        assert sorted(asked) == ["w_in", "w_out"]
        assert asked["w_in"]["cwd"] == "/" and asked["w_in"]["preview"]["cwdOutsideWorkspace"] is True
        assert asked["w_in"]["preview"]["outsideWorkspace"] is False
        assert asked["w_out"]["preview"]["outsideWorkspace"] is True
        assert not (ws.cwd / "inside.txt").exists() and not (outside(ws) / "out.txt").exists()


async def test_what_changed_while_the_approval_was_open_is_not_written() -> None:
    """``ask`` mode, four calls in one batch; while each approval is open the user (or a program)
    changes the file, saves over it, or swaps it or its folder for a symlink. Each call then fails
    with a text that tells the model, and nothing is written through or over."""
    calls = (
        ToolUse("w_saved", "write", {"path": "notes.txt", "content": "model\n"}),
        ToolUse("e_saved", "edit", {"path": "hello.txt", "edits": [{"oldText": "one", "newText": "two"}]}),
        ToolUse("w_folder", "write", {"path": "sub/new.txt", "content": "model\n"}),
        ToolUse("w_file", "write", {"path": "final.txt", "content": "model\n"}),
    )
    async with chat(lambda ws: batch(*calls), options={"approval": "ask"}) as (ws, client):
        victim = outside(ws)
        victim.mkdir()
        (victim / "final.txt").write_text("victim\n")
        (ws.cwd / "notes.txt").write_text("v1\n")
        (ws.cwd / "sub").mkdir()
        (ws.cwd / "final.txt").write_text("mine\n")

        def meanwhile(request: dict[str, Any]) -> dict[str, Any]:
            call = request["toolCallId"]
            if call == "w_saved":
                (ws.cwd / "notes.txt").write_text("saved by the user\n")
            elif call == "e_saved":
                (ws.cwd / "hello.txt").write_text("line one\nsaved by the user\n")
            elif call == "w_folder":
                (ws.cwd / "sub").rmdir()
                os.symlink(victim, ws.cwd / "sub")
            else:
                (ws.cwd / "final.txt").unlink()
                os.symlink(victim / "final.txt", ws.cwd / "final.txt")
            return {"decision": "allow"}

        client.answer_approval = meanwhile
        await client.new_session(ws)
        await client.rpc.request("pi/prompt", {"text": "go"})
        results = tool_results(ws)
        assert len(client.approval_requests) == 4
        assert all(results[c.id]["isError"] for c in calls), results
        assert "changed on disk after the user was shown this write" in result_text(results["w_saved"])
        assert "changed on disk after the user was shown this edit" in result_text(results["e_saved"])
        assert "now resolves to" in result_text(results["w_folder"])
        assert "now resolves to" in result_text(results["w_file"])
        assert (ws.cwd / "notes.txt").read_text() == "saved by the user\n"
        assert (ws.cwd / "hello.txt").read_text() == "line one\nsaved by the user\n"
        assert sorted(p.name for p in victim.iterdir()) == ["final.txt"]
        assert (victim / "final.txt").read_text() == "victim\n"
