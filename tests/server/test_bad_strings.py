"""Strings no file, process or id can hold, in every string param of every ``pi/`` method and in
``initialize``: a lone UTF-16 surrogate (JSON ``"\\ud800"``) and a NUL character. Each is refused as
InvalidParams naming the field, or answered as bad input; never an internal error (-32603), and the
server stays up. Free text (a prompt, a label) may hold a lone surrogate: it is stored as pi
stores it (an escape in the JSON line)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from pi_lsp.client.rpc_client import RpcClient, RpcError
from pi_lsp.protocol import METHOD_NAMES
from pi_lsp.server.early import EARLY_METHODS
from tests.server.support import SERVER, copy_fixture, server_env, start_raw

INTERNAL_ERROR = -32603
SURROGATE, NUL = "\ud800x", "\x00x"

PATH, NAME, ID, TEXT, CHOICE = "path", "file name", "id", "text", "choice"
"""What a field is: a path or a file name refuses both bad strings, an id and a choice refuse the
lone surrogate (a NUL id is simply not found), free text may hold either."""

SESSION: dict[str, str] = {"session": ID}

# method → (params that reach the field, {field: kind}); every method of the contract is listed
STRING_PARAMS: dict[str, tuple[dict[str, Any], dict[str, str]]] = {
    "pi/newSession": ({}, {"cwd": PATH, "sessionDir": PATH, "parentSession": PATH, "id": NAME}),
    "pi/openSession": ({}, {"path": PATH}),
    "pi/continueRecent": ({}, {"cwd": PATH}),
    "pi/listSessions": ({}, {"cwd": PATH, "query": TEXT}),
    "pi/forkSession": ({"sourcePath": "FIXTURE"}, {"sourcePath": PATH, "cwd": PATH}),
    "pi/branchToNewSession": ({"entryId": "e4"}, {**SESSION, "entryId": ID}),
    "pi/getSessionState": ({}, SESSION),
    "pi/closeSession": ({}, SESSION),
    "pi/appendEntry": ({"entry": {"type": "label", "targetId": "e4", "label": "l"}}, SESSION),
    "pi/getEntry": ({"id": "e4"}, {**SESSION, "id": ID}),
    "pi/getEntries": ({}, SESSION),
    "pi/getBranch": ({}, {**SESSION, "fromId": ID, "beforeId": ID}),
    "pi/getTree": ({}, {**SESSION, "parentId": ID, "format": CHOICE}),
    "pi/setLeaf": ({"id": "e4"}, {**SESSION, "id": ID}),
    "pi/navigate": (
        {"targetId": "e4"},
        {**SESSION, "targetId": ID, "customInstructions": TEXT, "label": TEXT},
    ),
    "pi/setLabel": ({"targetId": "e4"}, {**SESSION, "targetId": ID, "label": TEXT}),
    "pi/setSessionName": ({"name": "n"}, {**SESSION, "name": TEXT}),
    "pi/buildContext": ({}, {**SESSION, "leafId": ID}),
    "pi/prepareCompaction": ({}, SESSION),
    "pi/compact": ({}, {**SESSION, "workDoneToken": ID, "customInstructions": TEXT}),
    "pi/getSystemPrompt": ({}, {"cwd": PATH, "customPrompt": TEXT, "appendPrompt": TEXT, "tools[1]": ID}),
    "pi/listSkills": ({}, {"cwd": PATH}),
    "pi/prompt": ({"text": "hi"}, {**SESSION, "text": TEXT, "streamingBehavior": CHOICE}),
    "pi/abort": ({}, SESSION),
    "pi/clearQueue": ({}, SESSION),
    "pi/getRunState": ({}, SESSION),
    "pi/listModels": ({}, {}),
    "pi/setModel": ({}, {**SESSION, "modelId": ID, "thinkingLevel": CHOICE}),
    "pi/getSessionStats": ({}, SESSION),
    "pi/getCommands": ({}, {**SESSION, "cwd": PATH}),
    "pi/bash": ({"command": "true"}, {**SESSION, "command": NAME}),
    "pi/setApiKey": ({}, {"apiKey": NAME}),
    "pi/getServerStatus": ({}, {}),
    "pi/previewRestore": ({"targetId": "e4"}, {**SESSION, "targetId": ID}),
    "pi/getChanges": ({}, {**SESSION, "fromId": ID, "toId": ID}),
    "pi/restoreFiles": ({"targetId": "e4"}, {**SESSION, "targetId": ID}),
    "pi/undoRestore": ({"undoId": "u"}, {**SESSION, "undoId": ID}),
}
REFUSED = {PATH, NAME, ID, CHOICE}


def test_every_method_is_listed() -> None:
    assert set(STRING_PARAMS) == set(METHOD_NAMES)


def _params(base: dict[str, Any], field: str, bad: str, fixture: Path) -> dict[str, Any]:
    params = {key: str(fixture) if value == "FIXTURE" else value for key, value in base.items()}
    if field == "tools[1]":
        params["tools"] = ["read", bad]
    else:
        params[field] = bad
    return params


def _refused(kind: str, bad: str) -> bool:
    return kind in (PATH, NAME) or (bad == SURROGATE and kind in REFUSED)


async def _ask(client: RpcClient, method: str, params: dict[str, Any]) -> tuple[int | None, Any]:
    try:
        await client.request(method, params, timeout=30)
    except RpcError as error:
        return error.code, error.data
    return None, None


async def test_bad_strings_in_every_param_are_invalid_params(tmp_path: Path) -> None:
    fixture = copy_fixture(tmp_path)
    client = await start_raw(tmp_path)
    try:
        # First the early methods, sent at once: the start-up phase (server/early.py) answers what
        # it can parse before pygls is loaded; then every method under pygls.
        cases = [
            (method, field, kind, bad)
            for early in (True, False)
            for method, (base, fields) in STRING_PARAMS.items()
            if (method in EARLY_METHODS) == early
            for field, kind in fields.items()
            for bad in (NUL, SURROGATE)
        ]
        futures = [
            client.request_future(method, _params(STRING_PARAMS[method][0], field, bad, fixture))[1]
            for method, field, kind, bad in cases
            if method in EARLY_METHODS
        ]
        await asyncio.wait_for(asyncio.gather(*futures), 60)
        wrong = []
        for method, field, kind, bad in cases:
            await client.request("pi/openSession", {"path": str(fixture)})  # an active session
            code, data = await _ask(client, method, _params(STRING_PARAMS[method][0], field, bad, fixture))
            expected_refusal = _refused(kind, bad)
            if code == INTERNAL_ERROR or (
                expected_refusal and (code != -32602 or (data or {}).get("field") != field)
            ):
                wrong.append((method, field, ascii(bad), code, data))
        for future in futures:
            assert json.loads(future.result()).get("error", {}).get("code") != INTERNAL_ERROR
        assert wrong == []
        assert (await client.request("pi/getServerStatus", {})) is not None  # still up
    finally:
        await client.close()


async def test_free_text_keeps_a_lone_surrogate_as_pi_stores_it(tmp_path: Path) -> None:
    """A label and a session name are text pi writes with JSON.stringify: the line holds the
    escape, and the text reads back unchanged."""
    fixture = copy_fixture(tmp_path)
    client = await start_raw(tmp_path)
    try:
        await client.request("pi/openSession", {"path": str(fixture)})
        await client.request("pi/setLabel", {"targetId": "e4", "label": "é \ud800"})
        await client.request("pi/setSessionName", {"name": "n \udc00"})
        entry = {
            "type": "message",
            "message": {"role": "user", "content": [{"type": "text", "text": "t \ud800"}]},
        }
        appended = await client.request("pi/appendEntry", {"entry": entry})
        lines = fixture.read_bytes().splitlines()[-3:]
        assert b'"label":"\xc3\xa9 \\ud800"' in lines[0] and b'"name":"n \\udc00"' in lines[1]
        assert b'"text":"t \\ud800"' in lines[2]
        await client.request("pi/closeSession", {})
        await client.request("pi/openSession", {"path": str(fixture)})
        read = await client.request("pi/getEntry", {"id": appended["id"]})
        assert read["entry"]["message"]["content"][0]["text"] == "t \ud800"
    finally:
        await client.close()


async def _serve_with_unusable_root(tmp_path: Path, params: dict[str, Any]) -> None:
    client = await RpcClient.start(SERVER, env=server_env(tmp_path / "agent"), cwd=str(tmp_path), quiet=True)
    try:
        await client.request("initialize", {"processId": None, "capabilities": {}, **params})
        client.notify("initialized", {})
        state = await client.request("pi/newSession", {"persist": False})
        assert state["cwd"] == str(tmp_path), params
        listed = await client.request("pi/listSessions", {})
        assert listed["sessions"] == [], params
        assert client.process.returncode is None
    finally:
        client.process.kill()  # a clean shutdown takes seconds; this test is about requests
        await client.close(timeout=5)


async def test_an_unusable_workspace_root_is_ignored(tmp_path: Path) -> None:
    """``initialize`` is answered before its params are read, so a root no file can have (NUL,
    lone surrogate) cannot be refused: it is ignored (the server's cwd stands in), and the
    requests that follow work. It used to end the server (NUL) or fail them with -32603."""
    cases: list[dict[str, Any]] = [
        {"rootPath": "/tmp/\x00x"},
        {"rootUri": "file:///tmp/%00x"},
        {"rootUri": "file:///tmp/\ud800"},
        {"workspaceFolders": [{"uri": "file:///tmp/\ud800", "name": "x"}]},
        {"initializationOptions": {"pi": {"sessionDir": "/tmp/\x00x"}}},
        {"initializationOptions": {"pi": {"sessionDir": "\ud800"}}},
    ]
    await asyncio.gather(*(_serve_with_unusable_root(tmp_path, params) for params in cases))


async def test_notifications_naming_no_possible_file_are_ignored(tmp_path: Path) -> None:
    """Editor notifications carry URIs too; one no file can have (NUL, lone surrogate) is ignored,
    not an error logged for each (they used to fail inside the watcher and the documents)."""
    log = tmp_path / "server.log"
    client = await start_raw(tmp_path, "--log-file", str(log))
    try:
        for uri in ("file:///tmp/\ud800.md", "file:///tmp/%00x.md", "file:///tmp/\x00.md"):
            document = {"uri": uri, "languageId": "markdown", "version": 1, "text": "x"}
            client.notify("textDocument/didOpen", {"textDocument": document})
            change = {"textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"text": "y"}]}
            client.notify("textDocument/didChange", change)
            client.notify("textDocument/didSave", {"textDocument": {"uri": uri}})
            client.notify("workspace/didChangeWatchedFiles", {"changes": [{"uri": uri, "type": 2}]})
            added = {"added": [{"uri": uri, "name": "x"}], "removed": []}
            client.notify("workspace/didChangeWorkspaceFolders", {"event": added})
            hover = {"textDocument": {"uri": uri}, "position": {"line": 0, "character": 0}}
            assert await client.request("textDocument/hover", hover) is None
            client.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
        assert (await client.request("pi/listSessions", {}))["sessions"] == []
    finally:
        await client.close()
    text = log.read_text()
    assert "ERROR" not in text and "Traceback" not in text, text[-3000:]
