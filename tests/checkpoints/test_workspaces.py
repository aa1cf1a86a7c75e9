"""Checkpoints in the workspaces people really have, through the real server: pi's session folder
and agent dir inside the workspace, a workspace inside a repository with uncommitted work (and a
stash), a file replaced by a folder and back, a server whose own environment is full of ``GIT_*``
variables."""

from __future__ import annotations

from pathlib import Path

from tests.checkpoints.support import file_tree, git, hash_dir, open_chat, text_turn, tool_turn


def own_paths(files: list[dict[str, str]]) -> list[str]:
    return [f["path"] for f in files if f["path"].startswith((".pi/", ".pi-agent/"))]


async def test_the_session_folder_and_agent_dir_inside_the_workspace_are_never_captured() -> None:
    replies = [tool_turn(("t1", "write", {"path": "a.txt", "content": "by the model\n"})), text_turn("done")]
    async for chat in open_chat(replies, {"a.txt": "a\n"}, inside=True):
        cwd = chat.ws.cwd
        await chat.request("pi/bash", command="printf 1 > b.txt")
        first = await chat.request("pi/prompt", text="go")
        assert first["stopReason"] == "stop"
        [session_file] = chat.ws.session_files()
        assert session_file.is_relative_to(cwd)
        checkpoints = await chat.checkpoints()
        # pi/bash's, the write's: the session file changed meanwhile, yet nothing before "go"
        assert len(checkpoints) == 2
        assert [own_paths(c["data"]["files"]) for c in checkpoints] == [[], []]
        # a second prompt with no change of the user's takes no "user's changes" snapshot either
        chat.fake.replies.append(text_turn("again"))
        await chat.request("pi/prompt", text="again")
        assert len(await chat.checkpoints()) == 2
        # going back to before everything leaves the session file and the store alone
        session_bytes = session_file.read_bytes()
        back = await chat.request("pi/restoreFiles", targetId=checkpoints[0]["id"])
        assert back["restored"] == [{"path": "a.txt", "change": "modify"}] and back["conflicts"] == []
        assert session_file.read_bytes() == session_bytes
        assert (cwd / "a.txt").read_text() == "a\n"
        changes = await chat.request("pi/getChanges", fromId=checkpoints[0]["id"], toId=checkpoints[1]["id"])
        assert changes["files"] == [{"path": "a.txt", "change": "modified"}]


async def test_a_workspace_inside_a_repository_with_uncommitted_work_and_a_stash() -> None:
    replies = [
        tool_turn(
            ("t1", "write", {"path": "mod.py", "content": "x = 2\n"}),
            ("t2", "bash", {"command": "rm notes.txt && mkdir notes.txt && printf n > notes.txt/inner"}),
        ),
        text_turn("done"),
    ]
    async for chat in open_chat(replies, {"sub/mod.py": "x = 1\n", "top.txt": "top\n"}):
        repo = chat.ws.cwd
        git(repo, "init", "-q")
        git(repo, "add", "-A")
        git(repo, "commit", "-qm", "start")
        (repo / "top.txt").write_text("stashed change\n")
        git(repo, "stash")
        (repo / "sub" / "mod.py").write_text("x = 1  # uncommitted\n")
        (repo / "sub" / "notes.txt").write_text("untracked notes\n")
        (repo / "top.txt").write_text("uncommitted, above the workspace\n")
        git(repo, "add", "top.txt")  # staged work too
        repository = hash_dir(repo / ".git")
        # the session's workspace is the subfolder
        sub = repo / "sub"
        await chat.request("pi/newSession", cwd=str(sub), sessionDir=str(chat.ws.sessions))
        before = file_tree(sub)
        result = await chat.request("pi/prompt", text="go")
        assert result["stopReason"] == "stop"
        assert file_tree(sub)["notes.txt/inner"] == ("file", b"n", 0o644)  # a file became a folder
        first = (await chat.checkpoints())[0]
        assert {f["path"] for f in first["data"]["files"]} == {"mod.py", "notes.txt"}
        back = await chat.request("pi/setLeaf", id=first["id"], restoreFiles=True)
        assert back["restored"]["conflicts"] == []
        assert file_tree(sub) == before  # the folder is a file again, with the uncommitted bytes
        forward = await chat.request("pi/restoreFiles", targetId=result["entryIds"][-1])
        assert forward["conflicts"] == [] and file_tree(sub)["notes.txt/inner"] == ("file", b"n", 0o644)
        undone = await chat.request("pi/undoRestore", undoId=forward["undoId"])
        assert undone["conflicts"] == [] and file_tree(sub) == before
        assert hash_dir(repo / ".git") == repository  # objects, index (staged work), refs, stash
        assert git(repo, "stash", "list").count("stash@") == 1
        assert (repo / "top.txt").read_text() == "uncommitted, above the workspace\n"


LOCAL_VARIABLES = set(git(Path("/"), "rev-parse", "--local-env-vars").split())
OURS = {"GIT_CONFIG_NOSYSTEM", "GIT_CONFIG_GLOBAL", "GIT_TERMINAL_PROMPT"}


async def test_no_git_variable_of_the_server_or_ours_reaches_the_tools(tmp_path: Path) -> None:
    """A server started with ``GIT_DIR`` & co. set (from a git hook): the tools' ``git`` still works
    on the workspace's repository, and snapshots are unaffected."""
    polluted = {"GIT_DIR": str(tmp_path / "elsewhere"), "GIT_WORK_TREE": "/",
                "GIT_INDEX_FILE": str(tmp_path / "index"), "GIT_OBJECT_DIRECTORY": str(tmp_path)}  # fmt: skip
    command = "env | grep '^GIT_' ; git rev-parse --git-dir ; printf 'made' > made.txt"
    replies = [tool_turn(("t1", "bash", {"command": command})), text_turn("done")]
    async for chat in open_chat(replies, {"a.txt": "a\n"}, env=polluted):
        git(chat.ws.cwd, "init", "-q")
        result = await chat.request("pi/prompt", text="go")
        assert result["stopReason"] == "stop"
        [end] = [e for e in chat.client.event_list() if e.get("type") == "tool_execution_end"]
        output = end["result"]["content"][0]["text"]
        names = {line.split("=")[0] for line in output.splitlines() if line.startswith("GIT_")}
        assert not names & (LOCAL_VARIABLES | OURS), output
        assert ".git" in output.splitlines()[-1]  # the tool's git found the workspace's repository
        user = await chat.request("pi/bash", command="env | grep '^GIT_' || true")
        assert not {line.split("=")[0] for line in user["output"].splitlines()} & (LOCAL_VARIABLES | OURS)
        checkpoints = await chat.checkpoints()
        assert {f["path"] for c in checkpoints for f in c["data"]["files"]} == {"a.txt", "made.txt"}
        assert not Path(polluted["GIT_INDEX_FILE"]).exists()
