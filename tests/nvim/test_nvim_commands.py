"""The plugin's commands in a real headless Neovim against the real server and the loopback fake
Messages API (``commands_e2e.lua``): thinking and tool output folded, bash output live, retries and
automatic compaction notified, :PiCompact after showing what it would do, follow-ups queued, jumping
between messages, yanking a code block, edit & resend on a new branch, a new session from a message,
:PiModel, :PiSystemPrompt, :PiFork, :PiBranch, :PiOpen asking before creating a file, the tree's
filters, a branch appended by another program, navigate-with-summary, the statusline and
:checkhealth pi. Quitting leaves no traceback in Neovim's LSP log."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from tests.agent.chat_support import API_KEY, MODEL, Workspace
from tests.llm.fake_anthropic import (
    FakeAnthropic,
    Reply,
    Text,
    Thinking,
    ToolUse,
    assistant_stream,
    error_reply,
)
from tests.nvim.headless import lsp_log, run_lua
from tests.pi.pi_rpc import write_agent_dir

SCRIPT = Path(__file__).with_name("commands_e2e.lua")


CODE_REPLY = "Here:\n```lua\nprint('hi')\n```\nBye."


def _text(reply: str, message_id: str, **usage: int) -> Reply:
    return Reply(events=assistant_stream(Text(reply), message_id=message_id, **usage))


def _replies() -> list[Reply]:
    bash = ToolUse("toolu_1", "bash", {"command": "echo one; sleep 1; echo two"})
    slow = assistant_stream(Text("Slow reply, word by word.", chunks=8), message_id="m_slow")
    return [
        Reply(
            events=assistant_stream(
                Thinking("I should greet.\nWith code."), Text(CODE_REPLY), message_id="m_1"
            )
        ),
        Reply(events=assistant_stream(bash, message_id="m_2")),
        _text("Ran it.", "m_3"),
        error_reply(529, "overloaded_error", "Overloaded"),
        _text("After retry.", "m_4"),
        Reply(events=slow, event_delay=0.15),
        _text("Follow-up answered.", "m_5", input_tokens=190_000),  # over the threshold: auto-compaction
        _text("Second branch.", "m_6"),
    ]


async def _run(nvim: str, tmp_path: Path, ws: Workspace) -> tuple[dict[str, Any], list[Any], str]:
    async with FakeAnthropic(_replies()) as fake:
        write_agent_dir(ws.agent_dir, fake.url, ws.settings)
        settings = {
            "model": MODEL,
            "sessionDir": str(ws.sessions),
            "approval": "auto",
            "summarizer": "offline",
            "compaction": {"keepRecentTokens": 5},
        }
        (tmp_path / "fresh").mkdir()
        new_path = str(tmp_path / "fresh" / "new-session.jsonl")
        env = ws.server_env(fake.url)
        seen = await run_lua(nvim, SCRIPT, tmp_path, ws.cwd, env, settings, 150, new_session_path=new_path)
        requests = list(fake.requests)
    return seen, requests, lsp_log(tmp_path)


def _entries(path: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]


async def test_every_command_in_a_real_neovim(tmp_path: Path, nvim: str) -> None:
    ws = Workspace({"AGENTS.md": "Answer briefly.\n"})
    try:
        seen, requests, log = await _run(nvim, tmp_path, ws)
        main = _entries(seen["session_file"])
    finally:
        ws.cleanup()

    # thinking folded; the reply's text and code shown
    first = seen["first"]
    assert first[:4] == ["## You", "", "hello", ""] and "## Assistant" in first
    assert "┆ thinking" in first and "┆ I should greet." in first and "print('hi')" in first
    assert seen["thinking_folded"] is True
    # bash: a short line, its output folded, and the output shown while the command ran
    assert seen["live_seen"] is True and seen["running_left"] is False
    assert seen["output_folded"] is True
    assert seen["output_fold_lines"] == ["┆ output", "┆ one", "┆ two"]
    assert re.fullmatch(r"pi \d+(\.\d)?k?/200k \d+%", seen["statusline"]), seen["statusline"]
    # `!cmd` in the prompt is the user's own command, stored as pi's bashExecution message
    messages = [e["message"] for e in main if e["type"] == "message"]
    bash_runs = [m for m in messages if m["role"] == "bashExecution"]
    assert [(b["command"], b["output"].strip()) for b in bash_runs] == [("echo typed-by-me", "typed-by-me")]
    # a retried overload is notified on one line
    assert seen["retry_message"].startswith("pi: retry 1/"), seen["retry_message"]
    # :PiCompact said what it would do before doing it
    assert re.match(
        r"pi: compact\? \S+ tokens now; summarise \d+ messages, keep from ", seen["compact_question"]
    )
    assert seen["compact_items"] == ["Compact", "Cancel"]
    preview = seen["compact_preview"]
    assert (
        preview[0].startswith("# Compaction: ")
        and "## Summarised" in preview
        and "## Kept as it is" in preview
    )
    assert any(line.startswith("- user: hello") for line in preview), preview
    # no message below the stock question (it would wait for Enter): only the one-line result
    assert [m for m in seen["compact_messages"] if m.startswith("pi: compact")] == [seen["compacted"]]
    assert "(offline)" in seen["compacted"]
    compactions = [e for e in main if e["type"] == "compaction"]
    assert len(compactions) == 2  # :PiCompact, then the automatic one after the big reply
    # follow-up queued during the slow reply, delivered after it; auto-compaction notified
    assert seen["queued_message"].startswith("pi: queued as follow-up")
    users = [
        e["message"]["content"] for e in main if e["type"] == "message" and e["message"]["role"] == "user"
    ]
    # (users in file order: hello, run it, retry please, slow one, and then this, branch from elsewhere,
    # hello again)
    texts = [c if isinstance(c, str) else "".join(b.get("text", "") for b in c) for c in users]
    assert texts.index("and then this") == texts.index("slow one") + 1
    assert seen["auto_started"] == "pi: compacting the session (threshold)..."
    assert seen["auto_ended"].startswith("pi: compacted (threshold): ")
    assert seen["statusline_after_compaction"].startswith("pi ?/200k")
    # jumps and yank
    assert seen["jump_next"] == "## Assistant" and seen["jump_back_row"] == seen["jump_next_row"]
    assert seen["yanked"] == "print('hi')\n"
    # tree: labels / session_info hidden by default, shown with `a`; another program's branch shown
    assert not any("session_info" in line for line in seen["tree_default"])
    assert any("session_info: tree test" in line for line in seen["tree_all"])
    external = "\n".join(seen["tree_external"])
    assert "branch from elsewhere" in external and "├─ " in external
    assert "found 3 matches" in external and "grep" not in external.replace("found 3 matches", "")
    assert any("branch_summary" in line and "leaf" in line for line in seen["tree_summary"])
    navigated = "\n".join(seen["chat_after_navigate"])
    assert "Bye." in navigated and "Ran it." not in navigated and "┆ branch summary" in navigated
    summaries = [e for e in main if e["type"] == "branch_summary"]
    assert len(summaries) == 1
    # edit & resend: the message came back to the prompt; the new one is a sibling of the old
    user_entries = [e for e in main if e["type"] == "message" and e["message"]["role"] == "user"]
    hello = next(e for e, text in zip(user_entries, texts, strict=True) if text == "hello")
    again = next(e for e, text in zip(user_entries, texts, strict=True) if text == "hello again")
    assert again["parentId"] == hello["parentId"]
    assert "Second branch." in seen["edited"] and "Bye." not in seen["edited"]
    # a new session from the message under the cursor, in its own chat
    assert seen["fork_session"] != seen["main_session"]
    assert (
        "hello again" in seen["fork_chat"]
        and "Second branch." in seen["fork_chat"]
        and "hello" not in seen["fork_chat"]
    )
    # :PiModel (two pickers), :PiSystemPrompt, :PiFork, :PiBranch
    assert seen["model_message"] == "pi: model claude-sonnet-4-5, thinking low"
    prompt = "\n".join(seen["system_prompt"])
    assert (
        prompt.startswith("# System prompt: ")
        and "- agents `AGENTS.md`: " in prompt
        and "Answer briefly." in prompt
    )
    assert seen["forked"].startswith("pi: forked to ") and seen["branched"].startswith("pi: branched to ")
    # :PiOpen on a missing file asks first; Cancel leaves the active session as it was
    assert seen["cancel_kept_session"] is True
    assert seen["open_question"].startswith("pi: no such file; start a new session there? ")
    assert seen["open_items"] == ["Create", "Cancel"]
    # :checkhealth pi
    health = "\n".join(seen["health"])
    assert "pi-lsp " in health and "protocol 3" in health
    assert "API key found (ANTHROPIC_API_KEY)" in health and API_KEY not in health
    assert "tokenizer tiktoken" in health and "watched: AGENTS.md" in health
    assert "model calls go to http://127.0.0.1:" in health  # the fake's ANTHROPIC_BASE_URL
    assert "model anthropic/claude-sonnet-4-5, thinking" in health and "session " in health
    # every message fit one line; the model was asked exactly as scripted; quitting logged no error
    assert all("\n" not in m for m in seen["messages"])
    assert len(requests) == 8
    assert "Traceback" not in log and "RuntimeError" not in log, log[-3000:]
    # the server logs to its own file (--log-file), not to stderr, which Neovim copies in at ERROR
    assert '"stderr"' not in log, log[-3000:]
    assert (tmp_path / "cache" / "nvim" / "pi-lsp.log").exists()
