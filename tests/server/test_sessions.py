"""The Sessions methods, end to end over stdio with pytest-lsp."""

from __future__ import annotations

import json
from pathlib import Path

from pytest_lsp import LanguageClient

from tests.server.support import PI_FIXTURES, assistant, call, call_error, copy_fixture, user, wait_until


async def test_new_session_persisted_and_written_on_first_assistant(client: LanguageClient) -> None:
    root: Path = client.root  # type: ignore[attr-defined]
    state = await call(client, "pi/newSession", {})
    assert state["cwd"] == str(root)
    assert state["leafId"] is None and state["entryCount"] == 0 and state["name"] is None
    assert state["version"] == 3 and state["diagnostics"] == []
    file = Path(state["file"])
    assert file.parent == root / "sessions"  # initializationOptions.pi.sessionDir
    await call(client, "pi/appendEntry", {"entry": user("hi")})
    assert not file.exists()  # like pi: nothing is written before the first assistant message
    await call(client, "pi/appendEntry", {"entry": assistant("hello")})
    lines = [json.loads(line) for line in file.read_text().splitlines()]
    assert [line["type"] for line in lines] == ["session", "message", "message"]
    assert lines[0]["id"] == state["sessionId"]


async def test_new_session_options(client: LanguageClient, tmp_path: Path) -> None:
    state = await call(
        client,
        "pi/newSession",
        {
            "cwd": str(tmp_path),
            "sessionDir": str(tmp_path / "elsewhere"),
            "id": "my-id",
            "parentSession": "/p.jsonl",
        },
    )
    assert state["sessionId"] == "my-id" and state["parentSession"] == "/p.jsonl"
    assert Path(state["file"]).parent == tmp_path / "elsewhere"
    memory = await call(client, "pi/newSession", {"persist": False})
    assert memory["file"] is None
    await call(client, "pi/appendEntry", {"entry": assistant("x")})
    duplicate = await call_error(client, "pi/newSession", {"id": "my-id"})
    assert duplicate.code == -32602
    wrong = await call_error(client, "pi/newSession", {"persist": "yes"})
    assert wrong.code == -32602 and "persist must be a boolean" in wrong.message


async def test_open_session_twice_returns_the_same_session(client: LanguageClient, tmp_path: Path) -> None:
    file = copy_fixture(tmp_path)
    before = file.read_bytes()
    first = await call(client, "pi/openSession", {"path": str(file)})
    assert first["sessionId"] == "0197a000-0000-7000-8000-000000000001"
    assert first["name"] == "Branched demo" and first["leafId"] == "e17" and first["entryCount"] == 17
    second = await call(client, "pi/openSession", {"path": str(tmp_path / "." / file.name)})
    assert second["sessionId"] == first["sessionId"]
    await call(client, "pi/setLeaf", {"id": "e6"})
    third = await call(client, "pi/openSession", {"path": file.as_uri()})
    assert third["leafId"] == "e6"  # the open session, not a second copy
    assert file.read_bytes() == before  # opening never modifies a v3 file


async def test_open_v1_file_migrates_and_announces(client: LanguageClient, tmp_path: Path) -> None:
    file = copy_fixture(tmp_path, PI_FIXTURES / "large-session.jsonl")
    state = await call(client, "pi/openSession", {"path": str(file)})
    assert state["version"] == 3 and state["entryCount"] == 1018
    assert any("migrated" in item["message"] for item in state["diagnostics"])
    change = await wait_until(lambda: [c for c in client.changes if c["reason"] == "migrate"])  # type: ignore[attr-defined]
    assert change[0]["sessionId"] == state["sessionId"] and change[0]["appendedIds"] == []
    assert json.loads(file.read_text().splitlines()[0])["version"] == 3


async def test_invalid_session_file_is_left_untouched(client: LanguageClient, tmp_path: Path) -> None:
    file = tmp_path / "notes.jsonl"
    file.write_text('{"hello": "world"}\nnot json\n')
    before = file.read_bytes()
    error = await call_error(client, "pi/openSession", {"path": str(file)})
    assert error.code == -32005 and "untouched" in error.message
    assert file.read_bytes() == before
    missing = await call(client, "pi/openSession", {"path": str(tmp_path / "new.jsonl")})
    assert missing["entryCount"] == 0 and missing["file"] == str(tmp_path / "new.jsonl")
    fork_error = await call_error(client, "pi/forkSession", {"sourcePath": str(file)})
    assert fork_error.code == -32005


async def test_continue_recent(client: LanguageClient) -> None:
    fresh = await call(client, "pi/continueRecent", {})
    assert fresh["entryCount"] == 0
    await call(client, "pi/appendEntry", {"entry": user("first question")})
    await call(client, "pi/appendEntry", {"entry": assistant("answer")})
    await call(client, "pi/closeSession", {})
    again = await call(client, "pi/continueRecent", {})
    assert again["sessionId"] == fresh["sessionId"] and again["entryCount"] == 2


async def test_list_sessions(client: LanguageClient) -> None:
    for text in ("alpha question", "beta question"):
        await call(client, "pi/newSession", {})
        await call(client, "pi/appendEntry", {"entry": user(text)})
        await call(client, "pi/appendEntry", {"entry": assistant("ok")})
    listed = await call(client, "pi/listSessions", {})
    assert [s["firstMessage"] for s in listed["sessions"]] == ["beta question", "alpha question"]
    info = listed["sessions"][0]
    assert set(info) >= {"path", "id", "cwd", "created", "modified", "messageCount", "firstMessage"}
    assert info["messageCount"] == 2
    assert [
        s["firstMessage"] for s in (await call(client, "pi/listSessions", {"query": "alpha"}))["sessions"]
    ] == ["alpha question"]
    assert len((await call(client, "pi/listSessions", {"limit": 1}))["sessions"]) == 1
    assert isinstance((await call(client, "pi/listSessions", {"all": True}))["sessions"], list)
    assert (await call_error(client, "pi/listSessions", {"limit": -1})).code == -32602


async def test_list_sessions_sees_changes_made_by_others(client: LanguageClient) -> None:
    """The listing is cached (pi-lsp/list-cache), yet another writer's appends show at once."""
    created = await call(client, "pi/newSession", {})
    await call(client, "pi/appendEntry", {"entry": user("first question")})
    await call(client, "pi/appendEntry", {"entry": assistant("ok")})
    [info] = (await call(client, "pi/listSessions", {}))["sessions"]
    assert info["messageCount"] == 2
    line = {
        "type": "message",
        "id": "ext00001",
        "parentId": None,
        "timestamp": "2030-01-01T00:00:00.000Z",
        "message": {"role": "user", "content": "written by pi's CLI", "timestamp": 1893456000000},
    }
    with open(created["file"], "ab") as out:
        out.write(json.dumps(line).encode() + b"\n")
    [info] = (await call(client, "pi/listSessions", {}))["sessions"]
    assert (info["messageCount"], info["modified"]) == (3, "2030-01-01T00:00:00.000Z")
    found = await call(client, "pi/listSessions", {"query": '"BY pi\'s"'})
    assert [s["id"] for s in found["sessions"]] == [created["sessionId"]]


async def test_fork_and_branch_to_new_session(client: LanguageClient, tmp_path: Path) -> None:
    file = copy_fixture(tmp_path)
    source = await call(client, "pi/openSession", {"path": str(file)})
    fork = await call(client, "pi/forkSession", {"sourcePath": str(file)})
    assert fork["sessionId"] != source["sessionId"] and fork["entryCount"] == 17
    assert fork["parentSession"] == str(file) and Path(fork["file"]).exists()
    branch = await call(client, "pi/branchToNewSession", {"session": source["sessionId"], "entryId": "e6"})
    assert branch["parentSession"] == str(file)
    entries = (await call(client, "pi/getBranch", {"session": branch["sessionId"]}))["entries"]
    assert [e["id"] for e in entries][:6] == ["e1", "e2", "e3", "e4", "e5", "e6"]
    assert entries[-1]["type"] == "label" and entries[-1]["label"] == "A-start"  # labels recreated
    original = await call(client, "pi/getSessionState", {"session": source["sessionId"]})
    assert original["entryCount"] == 17 and original["leafId"] == "e17"  # the source is unchanged
    missing = await call_error(client, "pi/branchToNewSession", {"entryId": "nope"})
    assert missing.code == -32002


async def test_active_session_and_close(client: LanguageClient, tmp_path: Path) -> None:
    error = await call_error(client, "pi/getSessionState", {})
    assert error.code == -32001
    first = await call(client, "pi/newSession", {})
    second = await call(client, "pi/newSession", {})
    assert (await call(client, "pi/getSessionState", {}))["sessionId"] == second["sessionId"]
    await call(client, "pi/getSessionState", {"session": first["sessionId"]})  # addressing makes it active
    assert (await call(client, "pi/getSessionState", {}))["sessionId"] == first["sessionId"]
    assert await call(client, "pi/closeSession", {}) == {}
    assert (await call_error(client, "pi/getSessionState", {})).code == -32001
    unknown = await call_error(client, "pi/getSessionState", {"session": first["sessionId"]})
    assert unknown.code == -32001 and first["sessionId"] in unknown.message
    assert (await call_error(client, "pi/closeSession", {"session": "nope"})).code == -32001


async def test_configuration_changes_apply_to_new_sessions(client: LanguageClient, tmp_path: Path) -> None:
    from lsprotocol import types

    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"pi": {"sessionDir": str(tmp_path / "configured")}})
    )
    state = await call(client, "pi/newSession", {})
    assert Path(state["file"]).parent == tmp_path / "configured"
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings={"other": 1}))
    assert Path((await call(client, "pi/newSession", {}))["file"]).parent == tmp_path / "configured"
