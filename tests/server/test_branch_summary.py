"""``pi/navigate`` with ``summarize``: pi's ``navigateTree`` writing a ``branch_summary`` through the
real SDK and the fake Messages API, offline, cancelled (nothing written), and with nothing to do."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path

from pi_lsp.llm.offline import OFFLINE_LABEL
from pi_lsp.llm.prompts import BRANCH_SUMMARY_PREAMBLE
from tests.llm.fake_anthropic import FakeAnthropic, Reply, text_stream
from tests.server.compaction_support import (
    Script,
    assistant_entry,
    cancel,
    configure,
    events,
    lsp_server,
    prompt_of,
    send,
    user_entry,
)
from tests.server.support import call, wait_until


async def append(client: object, entry: dict[str, object]) -> str:
    result = await call(client, "pi/appendEntry", {"entry": entry})  # type: ignore[arg-type]
    return str(result["id"])


def edit_call() -> dict[str, object]:
    entry = assistant_entry("Editing the parser.", 200, stop="toolUse")
    entry["message"]["content"].append(  # type: ignore[index]
        {"type": "toolCall", "id": "call_1", "name": "edit", "arguments": {"path": "src/parser.py"}}
    )
    return entry


@dataclass
class Branch:
    """The session every test here navigates: u1 → a1 → u2 → edit call → tool result → a2 (leaf)."""

    file: Path
    u1: str
    a1: str
    u2: str


async def explored_branch(client: object) -> Branch:
    """A new session with a branch that explored (and edited) the parser, the leaf at its end."""
    state = await call(client, "pi/newSession", {})  # type: ignore[arg-type]
    u1 = await append(client, user_entry("Look at the project."))
    a1 = await append(client, assistant_entry("It has a parser and a lexer.", 300))
    u2 = await append(client, user_entry("Rewrite the parser with combinators."))
    await append(client, edit_call())
    await append(client, {"type": "message", "message": {"role": "toolResult", "toolCallId": "call_1",
                          "toolName": "edit", "content": [{"type": "text", "text": "TOOL OUTPUT"}],
                          "isError": False}})  # fmt: skip
    a2 = await append(client, assistant_entry("The parser now uses combinators.", 500))
    # its pi/sessionChanged follows the answer: wait for it, so tests counting changes from here
    # do not count it as theirs (it came late when the machine was busy)
    changes = lambda: events(client, "pi/sessionChanged")  # noqa: E731
    await wait_until(lambda: any(a2 in (change.get("appendedIds") or []) for change in changes()))
    return Branch(Path(state["file"]), u1, a1, u2)


async def test_a_summary_cancelled_while_the_model_streams_writes_nothing(tmp_path: Path) -> None:
    script = Script(then=Reply(events=text_stream("EXPLORED THE PARSER")))
    async with FakeAnthropic(route=script) as fake, lsp_server(tmp_path, base_url=fake.url) as client:
        branch = await explored_branch(client)
        file, a1 = branch.file, branch.a1
        # cancelled while the model streams: nothing is written, the leaf stays
        script.set(Reply(events=text_stream("slow"), stall_after=3))
        before = file.read_bytes()
        leaf = (await call(client, "pi/getSessionState", {}))["leafId"]
        msg_id, answer = send(client, "pi/navigate", {"targetId": a1, "summarize": True})
        await asyncio.wait_for(fake.first_frames_sent.wait(), 15)
        cancel(client, msg_id)
        (outcome,) = await asyncio.wait_for(asyncio.gather(answer, return_exceptions=True), 10)
        assert getattr(outcome, "code", None) == -32800
        assert file.read_bytes() == before
        assert (await call(client, "pi/getSessionState", {}))["leafId"] == leaf


async def test_navigate_with_a_branch_summary_writes_it_labelled_into_the_context(tmp_path: Path) -> None:
    script = Script(then=Reply(events=text_stream("EXPLORED THE PARSER")))
    async with FakeAnthropic(route=script) as fake, lsp_server(tmp_path, base_url=fake.url) as client:
        branch = await explored_branch(client)
        a1 = branch.a1
        # summarised: a branch_summary child of the new leaf, labelled, in the context
        fake.requests.clear()
        changes = len(events(client, "pi/sessionChanged"))
        result = await call(client, "pi/navigate", {"targetId": a1, "summarize": True,
                                                    "customInstructions": "Mention the tool.",
                                                    "label": "parser attempt"})  # fmt: skip
        summary_id = result["summaryEntryId"]
        summary = (await call(client, "pi/getEntry", {"id": summary_id}))["entry"]
        assert summary["type"] == "branch_summary" and summary["parentId"] == a1 and summary["fromId"] == a1
        assert summary["summary"].startswith(BRANCH_SUMMARY_PREAMBLE + "EXPLORED THE PARSER")
        assert summary["details"] == {"readFiles": [], "modifiedFiles": ["src/parser.py"]}
        assert summary["fromHook"] is False and "editorText" not in result
        label = (await call(client, "pi/getEntry", {"id": result["leafId"]}))["entry"]
        assert label["type"] == "label" and label["targetId"] == summary_id
        assert label["label"] == "parser attempt" and label["parentId"] == summary_id
        (request,) = fake.requests
        prompt = prompt_of(request)
        assert "Rewrite the parser with combinators." in prompt and "TOOL OUTPUT" not in prompt
        assert prompt.endswith("Additional focus: Mention the tool.") and request.body["max_tokens"] == 2048
        context = await call(client, "pi/buildContext", {})
        assert [m["role"] for m in context["messages"]] == ["user", "assistant", "branchSummary"]
        change = await wait_until(lambda: events(client, "pi/sessionChanged")[changes:])
        assert change[0]["reason"] == "navigate" and change[0]["appendedIds"] == [
            summary_id,
            result["leafId"],
        ]


async def test_user_message_and_root_targets_and_nothing_abandoned(tmp_path: Path) -> None:
    """Offline summaries: a user-message target gives its text back, the root one makes a new root,
    and a target that continues the branch is a plain navigation."""
    script = Script(then=Reply(events=text_stream("EXPLORED THE PARSER")))
    async with FakeAnthropic(route=script) as fake, lsp_server(tmp_path, base_url=fake.url) as client:
        branch = await explored_branch(client)
        u1, a1, u2 = branch.u1, branch.a1, branch.u2
        # a user-message target: the leaf goes to its parent and the text returns to the editor
        configure(client, {"summarizer": "offline"})
        back = await call(client, "pi/navigate", {"targetId": u2, "summarize": True})
        assert back["editorText"] == "Rewrite the parser with combinators."
        offline = (await call(client, "pi/getEntry", {"id": back["summaryEntryId"]}))["entry"]
        assert offline["parentId"] == a1 and offline["summary"].startswith(
            BRANCH_SUMMARY_PREAMBLE + OFFLINE_LABEL
        )
        assert back["leafId"] == back["summaryEntryId"]

        # the root user message as target: the summary becomes a new root ("root" as fromId)
        root = await call(client, "pi/navigate", {"targetId": u1, "summarize": True})
        assert root["editorText"] == "Look at the project." and root["leafId"] == root["summaryEntryId"]
        top = (await call(client, "pi/getEntry", {"id": root["summaryEntryId"]}))["entry"]
        assert top["parentId"] is None and top["fromId"] == "root"

        # nothing abandoned (the target continues the branch): a plain navigation
        await call(client, "pi/setLeaf", {"id": a1})
        forward = await call(client, "pi/navigate", {"targetId": offline["id"], "summarize": True})
        assert forward == {"leafId": offline["id"]}
        assert fake.requests == []  # the offline summaries made no requests
