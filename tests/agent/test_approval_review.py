"""Reviewing an edit before it is written, through the real server and the fake model: the approval
preview carries the change's hunks and the whole new file; an answer may apply only some hunks or
write the user's own text, and the tool result tells the model exactly what was written."""

from __future__ import annotations

from typing import Any

from tests.agent.approval_support import batch, chat, result_text, tool_results
from tests.llm.fake_anthropic import ToolUse

ASK = {"approval": "ask"}
LINES = "".join(f"line {n}\n" for n in range(1, 31))
THREE_EDITS = [
    {"oldText": "line 2\n", "newText": "LINE TWO\n"},
    {"oldText": "line 15\n", "newText": "LINE FIFTEEN\n"},
    {"oldText": "line 28\n", "newText": "LINE TWENTY-EIGHT\n"},
]


def previews(requests: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {request["toolCallId"]: request["preview"] for request in requests}


async def test_an_edit_answered_with_some_hunks_writes_exactly_those_and_names_the_rest() -> None:
    """A 3-hunk edit answered ``hunks: [0, 2]`` changes lines 2 and 28 only; its result names hunk 1
    with its diff (and details.diff is the change written). A whole allow in the same batch keeps
    pi's result text. The hunks apply to the text that was shown: a file saved while its approval
    was open is not overwritten (the fingerprint check), whatever hunks were chosen."""
    calls = (
        ToolUse("e_part", "edit", {"path": "many.txt", "edits": THREE_EDITS}),
        ToolUse("e_all", "edit", {"path": "hello.txt", "edits": [{"oldText": "one", "newText": "uno"}]}),
        ToolUse("e_saved", "edit", {"path": "saved.txt", "edits": THREE_EDITS}),
    )

    def answer(request: dict[str, Any]) -> dict[str, Any]:
        call = request["toolCallId"]
        if call == "e_saved":
            (ws.cwd / "saved.txt").write_text(LINES + "saved by the user\n")
        return {"decision": "allow", "hunks": [0, 2]} if call != "e_all" else {"decision": "allow"}

    async with chat(lambda ws: batch(*calls), options=ASK) as (ws, client):
        (ws.cwd / "many.txt").write_text(LINES)
        (ws.cwd / "saved.txt").write_text(LINES)
        client.answer_approval = answer
        await client.new_session(ws)
        await client.rpc.request("pi/prompt", {"text": "go"})
        preview = previews(client.approval_requests)["e_part"]
        hunks = preview["hunks"]
        assert [hunk["index"] for hunk in hunks] == [0, 1, 2]
        assert preview["newContent"] == LINES.replace("line 2\n", "LINE TWO\n", 1).replace(
            "line 15\n", "LINE FIFTEEN\n"
        ).replace("line 28\n", "LINE TWENTY-EIGHT\n")
        assert hunks[1]["header"] == "@@ -12,7 +12,7 @@" and "-line 15\n+LINE FIFTEEN\n" in hunks[1]["diff"]
        written = (ws.cwd / "many.txt").read_text()
        assert written == LINES.replace("line 2\n", "LINE TWO\n", 1).replace(
            "line 28\n", "LINE TWENTY-EIGHT\n"
        )
        results = tool_results(ws)
        partial = results["e_part"]
        assert partial["isError"] is False
        text = result_text(partial)
        assert "only part of this edit to many.txt" in text
        assert "hunks 0, 2 of 3 written; hunk 1 rejected" in text
        assert hunks[1]["diff"].rstrip("\n") in text and "LINE TWO" not in text
        diff = partial["details"]["diff"]
        assert "+ 2 LINE TWO" in diff and "+28 LINE TWENTY-EIGHT" in diff and "FIFTEEN" not in diff
        whole = results["e_all"]
        assert result_text(whole) == "Successfully replaced 1 block(s) in hello.txt."
        assert whole["details"]["diff"] == "-1 line one\n+1 line uno"
        assert (ws.cwd / "hello.txt").read_text() == "line uno\n"
        saved = results["e_saved"]
        assert saved["isError"] is True
        assert "changed on disk after the user was shown this edit" in result_text(saved)
        assert (ws.cwd / "saved.txt").read_text() == LINES + "saved by the user\n"


async def test_an_answer_with_content_writes_the_users_text_and_the_result_has_the_diff() -> None:
    """``content`` is the file as the user edited it: that is written, and the result says the
    user modified the change, with the diff from the proposal to what was written. A ``content``
    equal to the proposal is a whole allow (pi's text)."""
    calls = (
        ToolUse("e_mine", "edit", {"path": "hello.txt", "edits": [{"oldText": "one", "newText": "uno"}]}),
        ToolUse("w_mine", "write", {"path": "new.txt", "content": "model\n"}),
        ToolUse("w_same", "write", {"path": "same.txt", "content": "as proposed\n"}),
    )
    users = {"e_mine": "line eins\nand more\n", "w_mine": "user\n"}

    def answer(request: dict[str, Any]) -> dict[str, Any]:
        call = request["toolCallId"]
        content = users.get(call, request.get("preview", {}).get("newContent"))
        return {"decision": "allow", "content": content}

    async with chat(lambda ws: batch(*calls), options=ASK) as (ws, client):
        client.answer_approval = answer
        await client.new_session(ws)
        await client.rpc.request("pi/prompt", {"text": "go"})
        assert (ws.cwd / "hello.txt").read_text() == users["e_mine"]
        assert (ws.cwd / "new.txt").read_text() == users["w_mine"]
        assert (ws.cwd / "same.txt").read_text() == "as proposed\n"
        results = tool_results(ws)
        edit_text = result_text(results["e_mine"])
        assert (
            "The user modified this edit before it was written: hello.txt now holds the user's version"
            in edit_text
        )
        real = str((ws.cwd / "hello.txt").resolve())
        assert f"--- {real} (proposed)\n+++ {real} (written)\n" in edit_text
        assert "-line uno\n+line eins\n+and more" in edit_text
        assert results["e_mine"]["details"]["diff"] == "-1 line one\n+1 line eins\n+2 and more"
        write_text = result_text(results["w_mine"])
        assert "The user modified this write" in write_text and "-model\n+user" in write_text
        assert result_text(results["w_same"]) == "Successfully wrote 12 bytes to same.txt"
        assert not any(results[c.id]["isError"] for c in calls)


async def test_a_new_file_is_one_hunk_taken_whole_or_refused() -> None:
    """A ``write`` of a new file previews one hunk; ``hunks: [0]`` is the whole write (pi's text),
    ``hunks: []`` rejects all of it: nothing is written and the model is told why."""
    calls = (
        ToolUse("w_take", "write", {"path": "a/new.txt", "content": "one\ntwo\n"}),
        ToolUse("w_drop", "write", {"path": "b/new.txt", "content": "one\ntwo\n"}),
    )
    async with chat(lambda ws: batch(*calls), options=ASK) as (ws, client):
        client.answer_approval = lambda request: {
            "decision": "allow", "hunks": [0] if request["toolCallId"] == "w_take" else [],
        }  # fmt: skip
        await client.new_session(ws)
        await client.rpc.request("pi/prompt", {"text": "go"})
        preview = previews(client.approval_requests)["w_take"]
        assert preview["hunks"] == [
            {"index": 0, "header": "@@ -0,0 +1,2 @@", "diff": "@@ -0,0 +1,2 @@\n+one\n+two\n"}
        ]
        assert preview["newContent"] == "one\ntwo\n"
        results = tool_results(ws)
        assert result_text(results["w_take"]) == "Successfully wrote 8 bytes to a/new.txt"
        assert (ws.cwd / "a" / "new.txt").read_text() == "one\ntwo\n"
        dropped = results["w_drop"]
        assert dropped["isError"] is True and dropped["details"] == {}
        assert result_text(dropped) == (
            "Tool call blocked: the user rejected every hunk of this write to b/new.txt. Nothing was written."
            " The rejected change:\n\n@@ -0,0 +1,2 @@\n+one\n+two"
        )
        assert not (ws.cwd / "b").exists()


async def test_bad_answers_refuse_the_call_and_say_why() -> None:
    """Indices out of range or not integers, non-string content, both at once, ``allowAlways`` with
    hunks, hunks for a command or for an edit that would fail: each refuses its call (nothing
    written), says why, and the run goes on."""
    edit = {"path": "hello.txt", "edits": [{"oldText": "one", "newText": "uno"}]}
    answers: dict[str, tuple[dict[str, Any], str]] = {
        "range": ({"hunks": [0, 1]}, "hunk 1 is not one of this change's 1 hunks (indices 0 to 0)"),
        "negative": ({"hunks": [-1]}, "hunk -1 is not one of this change's 1 hunks"),
        "strings": ({"hunks": ["0"]}, "hunks must be a list of hunk indices (integers)"),
        "bools": ({"hunks": [True]}, "hunks must be a list of hunk indices (integers)"),
        "not_list": ({"hunks": 0}, "hunks must be a list of hunk indices (integers)"),
        "number": ({"content": 5}, "content must be a string (the whole file)"),
        "both": ({"hunks": [0], "content": "x"}, "hunks and content were both given"),
        "always": (
            {"decision": "allowAlways", "hunks": [0]},
            "answer \"allow\" with them, not 'allowAlways'",
        ),
        "failing": ({"hunks": [0]}, "this call's preview has no hunks or newContent to choose from"),
        "bash": ({"content": "x"}, "this call's preview has no hunks or newContent to choose from"),
    }
    calls = [
        ToolUse(name, "edit", edit) for name in answers if name not in ("failing", "bash")
    ] + [
        ToolUse("failing", "edit", {"path": "hello.txt", "edits": [{"oldText": "absent", "newText": "x"}]}),
        ToolUse("bash", "bash", {"command": "touch ran.txt"}),
    ]  # fmt: skip

    def answer(request: dict[str, Any]) -> dict[str, Any]:
        return {"decision": "allow", **answers[request["toolCallId"]][0]}

    async with chat(lambda ws: batch(*calls), options=ASK) as (ws, client):
        client.answer_approval = answer
        await client.new_session(ws)
        result = await client.rpc.request("pi/prompt", {"text": "go"})
        assert result["stopReason"] == "stop"
        results = tool_results(ws)
        for name, (_answer, why) in answers.items():
            tool = "bash" if name == "bash" else "edit"
            text = result_text(results[name])
            assert results[name]["isError"] is True, name
            assert text.startswith(
                f"Tool call blocked: the editor's approval answer for {tool} could not be applied ("
            ), text
            assert why in text and text.endswith("). Nothing was run."), text
        assert (ws.cwd / "hello.txt").read_text() == "line one\n"
        assert not (ws.cwd / "ran.txt").exists()
        refusals = [e for e in client.event_list() if e["type"] == "approval_result"]
        assert {e["decision"] for e in refusals} == {"deny"} and len(refusals) == len(answers)
        # allowAlways with hunks allowed nothing for later calls: the next edit asks again
        assert len(client.approval_requests) == len(answers)
