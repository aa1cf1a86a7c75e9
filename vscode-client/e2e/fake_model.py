"""The scripted model behind the VS Code end-to-end tests: the loopback fake Messages API
(tests/llm/fake_anthropic.py) with one answer per kind of prompt the test sends.

Run from the repository root: ``python vscode-client/e2e/fake_model.py REQUEST_LOG``. It prints
``listening on http://127.0.0.1:PORT`` once ready, serves until stdin closes (so it never outlives
the test that started it), and writes every request it got (method, path, JSON body) to REQUEST_LOG
as JSON lines. The reply is chosen from the request itself, not from the order of requests, so a
retried or reloaded step gets the same answer, except for the failure steps, whose point is the order:
a rate limit that lasts one series of retries, a connection cut twice before the reply comes through.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root, for tests.llm

from tests.llm.fake_anthropic import (
    FakeAnthropic,
    Recorded,
    Reply,
    Text,
    ToolUse,
    assistant_stream,
    error_reply,
    message_json,
)

# The prompts the e2e test types (keep in step with vscode.e2e.test.ts) and what the model says.
HELLO_REPLY = "Hello from the **fake model**: this reply streamed in twelve small pieces."
RESEND_REPLY = "A second answer, on a new branch."
EDIT_DONE_REPLY = "I replaced the second line of notes.txt."
STALLED_REPLY = "I will think about this for a very long time"
STORY_WORDS = [f"word{n}" for n in range(1, 81)]
CHAPTERS = [f"chapter{n}" for n in range(1, 201)]
# rewind.e2e.test.ts: two changes far apart in long.txt (reviewed hunk by hunk), files on two branches.
TWO_CHANGES = [
    {"oldText": "line 2\n", "newText": "line two\n"},
    {"oldText": "line 18\n", "newText": "line eighteen\n"},
]
WRITTEN_REPLY = "{path} is written."
# The failure steps (vscode.e2e.test.ts runs with pi.retry.maxRetries 2 and the SDK's own retries off).
RATE_LIMITED = "Rate limit me"
RATE_LIMITED_TRIES = 3  # the first attempt and its 2 retries are refused: one series ending in an error card
RATE_LIMIT_REPLY = "Through at last, after the rate limit."
CUT_OFF = "Cut me off"
CUT_TRIES = 2  # cut mid-reply twice, then whole
CUT_REPLY = "This reply came through whole on the third attempt."
SUMMARY = "## Goal\nTry the pi extension end to end.\n\n## Progress\nGreeted, edited notes.txt, told a story."


def _last_user_text(body: dict[str, Any]) -> tuple[str, bool]:
    """The text of the request's last user message, and whether it carries a tool result."""
    messages = body.get("messages") or []
    if not messages:
        return "", False
    content = messages[-1].get("content")
    if isinstance(content, str):
        return content, False
    parts = content if isinstance(content, list) else []
    texts = [p.get("text", "") for p in parts if isinstance(p, dict) and p.get("type") == "text"]
    tool_result = any(isinstance(p, dict) and p.get("type") == "tool_result" for p in parts)
    return "\n".join(texts), tool_result


def _last_tool_path(body: dict[str, Any]) -> str:
    """The ``path`` argument of the tool call the request's last assistant message made ("" if none)."""
    for message in reversed(body.get("messages") or []):
        if message.get("role") != "assistant" or not isinstance(message.get("content"), list):
            continue
        for part in message["content"]:
            if isinstance(part, dict) and part.get("type") == "tool_use":
                return str((part.get("input") or {}).get("path", ""))
        return ""
    return ""


def _rewind_answer(text: str, tool_result: bool, body: dict[str, Any]) -> Reply | None:
    """The replies of the rewind and review test (None: not one of its prompts)."""
    if tool_result and _last_tool_path(body) in ("alpha.txt", "beta.txt"):
        reply = WRITTEN_REPLY.format(path=_last_tool_path(body))
        return Reply(events=assistant_stream(Text(reply), message_id="msg_written"))
    for name in ("alpha.txt", "beta.txt"):
        if f"Write {name}" in text:
            stem = name.removesuffix(".txt")
            write = ToolUse(f"toolu_write_{stem}", "write", {"path": name, "content": f"{stem}\n"})
            return Reply(events=assistant_stream(Text(f"Writing {name}."), write, message_id=f"msg_{stem}"))
    if "Make two changes" in text:
        edit = ToolUse("toolu_two_changes", "edit", {"path": "long.txt", "edits": TWO_CHANGES})
        return Reply(events=assistant_stream(Text("Changing long.txt."), edit, message_id="msg_two"))
    return None


_asked: dict[str, int] = {}


def _failing_answer(text: str) -> Reply | None:
    """The failure steps' replies, by how often that prompt was asked (None: not one of them)."""
    for prompt in (RATE_LIMITED, CUT_OFF):
        if prompt in text:
            _asked[prompt] = asked = _asked.get(prompt, 0) + 1
            break
    else:
        return None
    if prompt == RATE_LIMITED:
        if asked <= RATE_LIMITED_TRIES:
            return error_reply(429, "rate_limit_error", "Too many requests: your per-minute rate limit")
        return Reply(events=assistant_stream(Text(RATE_LIMIT_REPLY, chunks=4), message_id="msg_limited"))
    frames = assistant_stream(Text(CUT_REPLY, chunks=8), message_id=f"msg_cut_{asked}")
    return Reply(events=frames, cut_after=6 if asked <= CUT_TRIES else None, event_delay=0.1)


def answer(request: Recorded) -> Reply:
    """The scripted reply for one Messages API request."""
    body = request.body if isinstance(request.body, dict) else {}
    text, tool_result = _last_user_text(body)
    failing = None if tool_result else _failing_answer(text)
    if failing is not None:
        return failing
    if "<conversation>" in text:  # a compaction summary request
        if body.get("stream"):
            return Reply(events=assistant_stream(Text(SUMMARY), message_id="msg_summary"))
        return Reply(kind="json", body=message_json(SUMMARY))
    rewind = _rewind_answer(text, tool_result, body)
    if rewind is not None:
        return rewind
    if tool_result:
        return Reply(events=assistant_stream(Text(EDIT_DONE_REPLY), message_id="msg_edit_done"))
    if "Edit notes.txt" in text:
        edit = ToolUse(
            "toolu_edit_notes",
            "edit",
            {"path": "notes.txt", "edits": [{"oldText": "second line", "newText": "second line, edited"}]},
        )
        return Reply(events=assistant_stream(Text("Editing notes.txt."), edit, message_id="msg_edit"))
    if "Take your time" in text:  # streams a little, then holds the connection open: only Stop ends it
        frames = assistant_stream(Text(STALLED_REPLY, chunks=4), message_id="msg_stall")
        return Reply(events=frames, stall_after=5, event_delay=0.2)
    if "Tell a longer story" in text:  # 60 s of streaming: time to reload the window in the middle
        saga = " ".join(CHAPTERS) + "."
        frames = assistant_stream(Text(saga, chunks=200), message_id="msg_saga")
        return Reply(events=frames, event_delay=0.3)
    if "Tell a long story" in text:  # 20 s of streaming: time to close and reopen the chat
        story = " ".join(STORY_WORDS) + "."
        frames = assistant_stream(Text(story, chunks=80), message_id="msg_story")
        return Reply(events=frames, event_delay=0.25)
    if "again" in text:
        return Reply(events=assistant_stream(Text(RESEND_REPLY, chunks=4), message_id="msg_resend"))
    frames = assistant_stream(Text(HELLO_REPLY, chunks=12), message_id="msg_hello", input_tokens=1200)
    return Reply(events=frames, event_delay=0.15)  # about 2 s: the test sees it part-way


async def serve(log_path: Path) -> None:
    with log_path.open("a") as log:

        def recorded_then_answered(request: Recorded) -> Reply:
            record = {"method": request.method, "path": request.path, "body": request.body}
            log.write(json.dumps(record) + "\n")
            log.flush()
            return answer(request)

        async with FakeAnthropic(route=recorded_then_answered) as fake:
            print(f"listening on {fake.url}", flush=True)
            stdin = asyncio.StreamReader()
            loop = asyncio.get_running_loop()
            await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(stdin), sys.stdin)
            while await stdin.read(1024):
                pass


if __name__ == "__main__":
    asyncio.run(serve(Path(sys.argv[1])))
