"""Entries, the tree, navigation and context, end to end over stdio with pytest-lsp."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pytest_lsp import LanguageClient

from pi_lsp.session import build_session_context
from tests.server.support import (
    FIXTURE,
    assistant,
    call,
    call_error,
    copy_fixture,
    tool_result,
    user,
    wait_until,
)


async def open_fixture(client: LanguageClient, tmp_path: Path) -> dict[str, Any]:
    return await call(client, "pi/openSession", {"path": str(copy_fixture(tmp_path))})


def changes(client: LanguageClient) -> list[dict[str, Any]]:
    return client.changes  # type: ignore[attr-defined, no-any-return]


async def test_append_every_entry_type(client: LanguageClient) -> None:
    state = await call(client, "pi/newSession", {})
    first = await call(client, "pi/appendEntry", {"entry": user("hi")})
    assert first["entry"]["parentId"] is None and first["entry"]["id"] == first["id"]
    assert first["entry"]["timestamp"].endswith("Z") and isinstance(
        first["entry"]["message"]["timestamp"], int
    )
    entries: list[dict[str, Any]] = [
        assistant("reading", {"id": "c1", "name": "read", "arguments": {"path": "a.py"}}),
        tool_result("c1", "print(1)"),
        {
            "type": "message",
            "message": {
                "role": "bashExecution",
                "command": "ls",
                "output": "a.py",
                "exitCode": 0,
                "cancelled": False,
                "truncated": False,
            },
        },
        {
            "type": "message",
            "message": {"role": "custom", "customType": "note", "content": "x", "display": True},
        },
        {"type": "model_change", "provider": "openai", "modelId": "gpt-5"},
        {"type": "thinking_level_change", "thinkingLevel": "high"},
        {"type": "custom", "customType": "ext", "data": {"k": [1, 2]}, "unknownField": "kept"},
        {"type": "custom_message", "customType": "ext", "content": "shown", "display": True},
        {"type": "session_info", "name": "  Named  "},
        {"type": "label", "targetId": first["id"], "label": "start"},
        {"type": "branch_summary", "summary": "explored"},
        {"type": "compaction", "summary": "sum", "firstKeptEntryId": first["id"], "tokensBefore": 10},
    ]
    previous = first["id"]
    for entry in entries:
        result = await call(client, "pi/appendEntry", {"entry": entry})
        assert result["entry"]["type"] == entry["type"] and result["entry"]["parentId"] == previous
        previous = result["id"]
    custom = (await call(client, "pi/getEntries", {"offset": 7, "limit": 1}))["entries"][0]
    assert custom["unknownField"] == "kept" and custom["data"] == {"k": [1, 2]}
    summary = (await call(client, "pi/getEntry", {"id": previous}))["entry"]
    assert summary["type"] == "compaction"
    branch_summary = (await call(client, "pi/getEntries", {"offset": 11, "limit": 1}))["entries"][0]
    assert branch_summary["fromId"] == branch_summary["parentId"]  # fromId defaults as in pi
    final = await call(client, "pi/getSessionState", {})
    assert final["name"] == "Named" and final["leafId"] == previous and final["entryCount"] == 13
    await wait_until(lambda: len(changes(client)) == 13)
    assert all(c["reason"] == "append" and c["sessionId"] == state["sessionId"] for c in changes(client))
    assert changes(client)[-1] == {
        "sessionId": state["sessionId"],
        "leafId": previous,
        "appendedIds": [previous],
        "reason": "append",
    }


async def test_invalid_entries_name_the_field(client: LanguageClient) -> None:
    await call(client, "pi/newSession", {})
    cases = [
        ({}, "entry is required"),
        ({"entry": "text"}, "entry must be an object"),
        ({"entry": {"type": "nope"}}, "entry.type must be one of"),
        ({"entry": {"type": "message", "message": {"role": "robot"}}}, "entry.message.role"),
        ({"entry": {"type": "message", "message": {"role": "user"}}}, "entry.message.content is required"),
        ({"entry": {"type": "model_change", "provider": "x"}}, "entry.modelId is required"),
        ({"entry": {"type": "session_info", "name": 3}}, "entry.name must be a string"),
    ]
    for params, text in cases:
        error = await call_error(client, "pi/appendEntry", params)
        assert error.code == -32602 and text in error.message, (params, error.message)
    error = await call_error(
        client, "pi/appendEntry", {"entry": {"type": "label", "targetId": "nope", "label": "x"}}
    )
    assert error.code == -32002
    assert (await call(client, "pi/getSessionState", {}))["entryCount"] == 0


async def test_get_entry_entries_and_branch(client: LanguageClient, tmp_path: Path) -> None:
    await open_fixture(client, tmp_path)
    lines = [json.loads(line) for line in FIXTURE.read_text().splitlines()[1:]]
    assert (await call(client, "pi/getEntry", {"id": "e8"}))["entry"] == lines[7]
    page = await call(client, "pi/getEntries", {})
    assert page["total"] == 17 and page["entries"] == lines
    page = await call(client, "pi/getEntries", {"offset": 15, "limit": 5})
    assert [e["id"] for e in page["entries"]] == ["e16", "e17"]
    assert (
        len((await call(client, "pi/getEntries", {"limit": 50_000}))["entries"]) == 17
    )  # clamped, not an error
    assert (await call_error(client, "pi/getEntries", {"offset": -1})).code == -32602
    assert (await call_error(client, "pi/getEntries", {"limit": "10"})).message == "limit must be an integer"
    branch = (await call(client, "pi/getBranch", {"fromId": "e6"}))["entries"]
    assert [e["id"] for e in branch] == ["e1", "e2", "e3", "e4", "e5", "e6"]
    assert len((await call(client, "pi/getBranch", {}))["entries"]) == 14
    assert (await call_error(client, "pi/getEntry", {"id": "nope"})).code == -32002
    assert (await call_error(client, "pi/getBranch", {"fromId": "nope"})).code == -32002
    assert (await call_error(client, "pi/getEntry", {})).message == "id is required"


async def test_tree_nested_and_flat(client: LanguageClient, tmp_path: Path) -> None:
    await open_fixture(client, tmp_path)
    tree = await call(client, "pi/getTree", {})
    assert tree["leafId"] == "e17" and len(tree["roots"]) == 1
    node = tree["roots"][0]
    assert node == {
        **node,
        "id": "e1",
        "parentId": None,
        "type": "message",
        "role": "user",
        "preview": "hello",
    }
    fork = node["children"][0]["children"][0]
    assert [child["id"] for child in fork["children"]] == ["e4", "e7"]
    assert fork["children"][0]["label"] == "A-start"
    flat = await call(client, "pi/getTree", {"format": "flat"})
    assert flat["format"] == "flat" and flat["rootIds"] == ["e1"] and flat["leafId"] == "e17"
    assert [n["id"] for n in flat["nodes"]] == [
        "e1",
        "e2",
        "e3",
        "e4",
        "e5",
        "e6",
        "e7",
        *[f"e{i}" for i in range(8, 18)],
    ]
    assert flat["nodes"][2]["childIds"] == ["e4", "e7"] and "children" not in flat["nodes"][0]
    assert (await call_error(client, "pi/getTree", {"format": "xml"})).code == -32602


async def test_set_leaf_and_navigate(client: LanguageClient, tmp_path: Path) -> None:
    state = await open_fixture(client, tmp_path)
    assert await call(client, "pi/setLeaf", {"id": "e5"}) == {"leafId": "e5"}
    assert await call(client, "pi/setLeaf", {"id": None}) == {"leafId": None}
    assert (await call_error(client, "pi/setLeaf", {})).code == -32602
    assert (await call_error(client, "pi/setLeaf", {"id": "nope"})).code == -32002
    # a user message goes back to the editor; the leaf moves to its parent
    result = await call(client, "pi/navigate", {"targetId": "e7"})
    assert result == {"leafId": "e3", "editorText": "actually, approach B"}
    # the root user message: leaf before the first entry
    assert await call(client, "pi/navigate", {"targetId": "e1"}) == {"leafId": None, "editorText": "hello"}
    # anything else becomes the leaf; navigating to the leaf is a no-op
    assert await call(client, "pi/navigate", {"targetId": "e5"}) == {"leafId": "e5"}
    before = len(changes(client))
    assert await call(client, "pi/navigate", {"targetId": "e5", "label": "ignored"}) == {"leafId": "e5"}
    # a label is attached to the target and the label entry becomes the leaf
    labelled = await call(client, "pi/navigate", {"targetId": "e2", "label": "checkpoint"})
    label_entry = (await call(client, "pi/getEntry", {"id": labelled["leafId"]}))["entry"]
    assert (
        label_entry["type"] == "label" and label_entry["targetId"] == "e2" and label_entry["parentId"] == "e2"
    )
    await wait_until(lambda: len(changes(client)) >= before + 1)
    assert changes(client)[-1] == {
        "sessionId": state["sessionId"],
        "leafId": labelled["leafId"],
        "appendedIds": [labelled["leafId"]],
        "reason": "navigate",
    }
    assert (await call_error(client, "pi/navigate", {"targetId": "nope"})).code == -32002
    # with summarize the abandoned part (here only the label entry: no messages) is summarised as pi
    # does ("No content to summarize") under the new leaf; tests/server/test_branch_summary.py has more
    summary = await call(client, "pi/navigate", {"targetId": "e6", "summarize": True})
    written = (await call(client, "pi/getEntry", {"id": summary["summaryEntryId"]}))["entry"]
    assert written["type"] == "branch_summary" and written["parentId"] == "e6" and written["fromId"] == "e6"
    assert written["summary"] == "No content to summarize" and summary["leafId"] == summary["summaryEntryId"]


async def test_labels_and_names(client: LanguageClient, tmp_path: Path) -> None:
    await open_fixture(client, tmp_path)
    labelled = await call(client, "pi/setLabel", {"targetId": "e6", "label": "A-end"})
    tree = await call(client, "pi/getTree", {"format": "flat"})
    assert {n["id"]: n.get("label") for n in tree["nodes"]}["e6"] == "A-end" and tree["leafId"] == labelled[
        "id"
    ]
    await call(client, "pi/setLabel", {"targetId": "e6", "label": None})
    tree = await call(client, "pi/getTree", {"format": "flat"})
    assert "label" not in {n["id"]: n for n in tree["nodes"]}["e6"]
    assert (await call_error(client, "pi/setLabel", {"targetId": "nope", "label": "x"})).code == -32002
    await call(client, "pi/setSessionName", {"name": "  Renamed "})
    assert (await call(client, "pi/getSessionState", {}))["name"] == "Renamed"
    await call(client, "pi/setSessionName", {"name": ""})
    assert (await call(client, "pi/getSessionState", {}))["name"] is None  # an empty name clears it
    assert (await call_error(client, "pi/setSessionName", {"name": None})).message == "name is required"


async def test_build_context_equals_pi(client: LanguageClient, tmp_path: Path) -> None:
    await open_fixture(client, tmp_path)
    entries = [json.loads(line) for line in FIXTURE.read_text().splitlines()[1:]]
    for leaf in ("e17", "e6", "e9", "e12", "e1"):
        context = await call(client, "pi/buildContext", {"leafId": leaf})
        expected = build_session_context(entries, leaf)
        assert context["messages"] == expected["messages"], leaf
        assert context["thinkingLevel"] == expected["thinkingLevel"] and context["model"] == expected["model"]
    current = await call(client, "pi/buildContext", {})
    assert current["messages"][0]["role"] == "compactionSummary" and current["model"]["modelId"] == "gpt-5"
    assert await call(client, "pi/buildContext", {"leafId": None}) == {
        "messages": [],
        "thinkingLevel": "off",
        "model": None,
        "usage": {
            "tokens": 0,
            "usageTokens": 0,
            "trailingTokens": 0,
            "contextWindow": 1000000,  # the next run's model: pi's default (gpt-5 is not Anthropic's)
            "percent": 0.0,
            "shouldCompact": False,
        },
    }
    assert (await call_error(client, "pi/buildContext", {"leafId": "nope"})).code == -32002
    assert (await call(client, "pi/getSessionState", {}))[
        "leafId"
    ] == "e17"  # buildContext never moves the leaf


async def test_get_branch_pages_from_the_leaf_back(client: LanguageClient, tmp_path: Path) -> None:
    await open_fixture(client, tmp_path)
    whole = [e["id"] for e in (await call(client, "pi/getBranch", {}))["entries"]]
    assert len(whole) == 14
    pages: list[list[str]] = []
    params: dict[str, Any] = {"limit": 5}
    while True:
        page = await call(client, "pi/getBranch", params)
        pages.append([e["id"] for e in page["entries"]])
        if not page["hasMore"]:
            break
        params = {"limit": 5, "beforeId": pages[-1][0]}
    assert [len(ids) for ids in pages] == [5, 5, 4]
    assert [i for ids in reversed(pages) for i in ids] == whole
    page = await call(client, "pi/getBranch", {"fromId": "e6", "limit": 2})
    assert [e["id"] for e in page["entries"]] == ["e5", "e6"] and page["hasMore"] is True
    page = await call(client, "pi/getBranch", {"beforeId": "e3"})
    assert [e["id"] for e in page["entries"]] == ["e1", "e2"] and page["hasMore"] is False
    page = await call(client, "pi/getBranch", {"beforeId": "e1", "limit": 3})
    assert page == {"entries": [], "hasMore": False}
    page = await call(client, "pi/getBranch", {"fromId": None, "limit": 3})
    assert page == {"entries": [], "hasMore": False}
    assert "hasMore" not in await call(client, "pi/getBranch", {})  # the unpaged shape is unchanged


async def test_get_branch_paging_errors(client: LanguageClient, tmp_path: Path) -> None:
    await open_fixture(client, tmp_path)
    for bad in (0, -3, "10", 1.5, True):
        error = await call_error(client, "pi/getBranch", {"limit": bad})
        assert error.code == -32602 and error.message.startswith("limit must be"), bad
    error = await call_error(client, "pi/getBranch", {"beforeId": 7})
    assert error.code == -32602 and error.message == "beforeId must be a string"
    assert (await call_error(client, "pi/getBranch", {"beforeId": "nope", "limit": 2})).code == -32002


async def test_tree_children_on_demand_match_the_full_tree(client: LanguageClient, tmp_path: Path) -> None:
    await open_fixture(client, tmp_path)
    await call(client, "pi/setLeaf", {"id": "e3"})
    await call(client, "pi/appendEntry", {"entry": user("a third branch at e3")})
    flat = await call(client, "pi/getTree", {"format": "flat"})
    by_id = {node["id"]: node for node in flat["nodes"]}

    def expected(ids: list[str]) -> list[dict[str, Any]]:
        return [
            {
                **{k: v for k, v in by_id[i].items() if k != "childIds"},
                "childCount": len(by_id[i]["childIds"]),
            }
            for i in ids
        ]

    roots = await call(client, "pi/getTree", {"parentId": None})
    assert roots == {"leafId": flat["leafId"], "parentId": None, "children": expected(flat["rootIds"])}
    for node in flat["nodes"]:
        level = await call(client, "pi/getTree", {"parentId": node["id"], "format": "flat"})
        assert level["parentId"] == node["id"] and level["children"] == expected(node["childIds"])
    assert len(by_id["e3"]["childIds"]) == 3  # the appended entry is indexed as a child at once
    assert (await call(client, "pi/getTree", {"parentId": "e3"}))["children"][0]["label"] == "A-start"


async def test_tree_children_errors(client: LanguageClient, tmp_path: Path) -> None:
    await open_fixture(client, tmp_path)
    assert (await call_error(client, "pi/getTree", {"parentId": "nope"})).code == -32002
    error = await call_error(client, "pi/getTree", {"parentId": 3})
    assert error.code == -32602 and error.message == "parentId must be a string or null"


def _without(node: dict[str, Any], key: str) -> dict[str, Any]:
    return {k: v for k, v in node.items() if k != key}


async def _check_fold(client: LanguageClient) -> list[dict[str, Any]]:
    """``fold`` against the flat tree of the same moment; returns the segments."""
    flat = await call(client, "pi/getTree", {"format": "flat"})
    by_id = {node["id"]: node for node in flat["nodes"]}
    folded = await call(client, "pi/getTree", {"fold": True})
    assert folded["format"] == "folded" and folded["rootIds"] == flat["rootIds"]
    assert folded["leafId"] == flat["leafId"]
    covered: list[str] = []
    for segment in folded["segments"]:
        chain = [segment["id"]]
        while len(by_id[chain[-1]]["childIds"]) == 1:
            chain.append(by_id[chain[-1]]["childIds"][0])
        parent = segment["parentId"]
        assert segment["id"] in flat["rootIds"] or len(by_id[parent]["childIds"]) > 1
        assert segment["length"] == len(chain) and segment["childIds"] == by_id[chain[-1]]["childIds"]
        assert segment["first"] == _without(by_id[chain[0]], "childIds")
        assert segment["last"] == _without(by_id[chain[-1]], "childIds")
        labels = [{"id": i, "label": by_id[i]["label"]} for i in chain if "label" in by_id[i]]
        assert segment["labels"] == labels
        if flat["leafId"] in chain:
            assert folded["leafSegmentId"] == segment["id"]
        covered += chain
    assert covered == [node["id"] for node in flat["nodes"]]  # every entry once, depth-first
    segments: list[dict[str, Any]] = folded["segments"]
    return segments


async def test_tree_folded_into_linear_segments(client: LanguageClient, tmp_path: Path) -> None:
    await open_fixture(client, tmp_path)
    await call(client, "pi/setLeaf", {"id": "e3"})
    await call(client, "pi/appendEntry", {"entry": user("a third branch at e3")})
    segments = await _check_fold(client)
    assert len(segments) == 4 and any(s["labels"] for s in segments)
    # The segments are kept on append from here on: grow a chain, branch off the middle of one
    # (splitting it), label inside a chain, start a new root.
    longest = max(segments, key=lambda segment: segment["length"])
    assert longest["length"] >= 3  # so its last entry's parent is inside it
    for text in ("one", "two", "three"):
        await call(client, "pi/appendEntry", {"entry": user(text)})
    await _check_fold(client)
    branch = await call(client, "pi/getBranch", {"fromId": longest["last"]["id"]})
    middle = [entry["id"] for entry in branch["entries"]][-2]
    await call(client, "pi/navigate", {"targetId": middle})
    await call(client, "pi/appendEntry", {"entry": user("off the middle")})
    after_split = await _check_fold(client)
    assert len(after_split) > len(segments)
    await call(client, "pi/setLabel", {"targetId": middle, "label": "here"})
    assert any({"id": middle, "label": "here"} in s["labels"] for s in await _check_fold(client))
    await call(client, "pi/setLeaf", {"id": None})
    await call(client, "pi/appendEntry", {"entry": user("a new root")})
    assert len((await call(client, "pi/getTree", {"fold": True}))["rootIds"]) == 2
    await _check_fold(client)
    assert (await call_error(client, "pi/getTree", {"fold": "yes"})).message == "fold must be a boolean"


async def test_tree_nodes_say_which_assistant_messages_pi_leaves_out(client: LanguageClient) -> None:
    """``noText`` (additive): an assistant message without non-blank text that stopped on ``stop``
    or ``toolUse`` (or says nothing) is one pi's tree view leaves out unless it is the leaf."""
    await call(client, "pi/newSession", {})
    await call(client, "pi/appendEntry", {"entry": user("go")})
    call_only = assistant("", {"id": "c1", "name": "read", "arguments": {"path": "a.py"}})
    call_only["message"]["content"] = call_only["message"]["content"][1:]
    call_only["message"]["stopReason"] = "toolUse"
    thinking = assistant(" \n\ufeff")
    thinking["message"]["content"].append({"type": "thinking", "thinking": "hmm"})
    aborted = assistant("")
    aborted["message"]["stopReason"] = "aborted"
    cases = [
        (call_only, True),
        (tool_result("c1", "print(1)"), False),
        (thinking, True),  # blank text counts as none (JS trim: U+FEFF too)
        (aborted, False),  # an abort, an error or the length limit is shown
        (assistant("done"), False),
    ]
    ids = [(await call(client, "pi/appendEntry", {"entry": entry}))["id"] for entry, _ in cases]
    flat = await call(client, "pi/getTree", {"format": "flat"})
    no_text = {node["id"]: node.get("noText", False) for node in flat["nodes"]}
    assert [no_text[entry_id] for entry_id in ids] == [expected for _, expected in cases]
    nested = await call(client, "pi/getTree", {})
    assert nested["roots"][0]["children"][0]["noText"] is True
