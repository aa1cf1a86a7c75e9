"""What a user meets first in a real (headless) Neovim against the real server and the loopback fake
Messages API: buffers follow the agent's edits (``reload_e2e.lua``), the queue is shown and can be
taken back (``queue_e2e.lua``), and an error is shown whole with the typed text kept
(``error_e2e.lua``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.agent.chat_support import MODEL, Workspace
from tests.llm.fake_anthropic import FakeAnthropic, Reply, Text, ToolUse, assistant_stream
from tests.nvim.headless import run_lua
from tests.pi.pi_rpc import write_agent_dir

HERE = Path(__file__).parent


def _text(reply: str, message_id: str) -> Reply:
    return Reply(events=assistant_stream(Text(reply), message_id=message_id))


async def _run(
    nvim: str, tmp_path: Path, ws: Workspace, script: str, replies: list[Reply], **settings: Any
) -> dict[str, Any]:
    async with FakeAnthropic(replies) as fake:
        write_agent_dir(ws.agent_dir, fake.url, ws.settings)
        full = {"model": MODEL, "sessionDir": str(ws.sessions), **settings}
        return await run_lua(nvim, HERE / script, tmp_path, ws.cwd, ws.server_env(fake.url), full, 90)


async def test_agent_edits_reach_open_buffers(tmp_path: Path, nvim: str) -> None:
    edit = ToolUse(
        "toolu_E", "edit", {"path": "hello.txt", "edits": [{"oldText": "line one", "newText": "line 1"}]}
    )
    write = ToolUse("toolu_W", "write", {"path": "other.txt", "content": "written by the agent\n"})
    replies = [Reply(events=assistant_stream(edit, write, message_id="m_e")), _text("Edited.", "m_d")]
    ws = Workspace({"hello.txt": "line one\nline two\n", "other.txt": "old\n"})
    try:
        seen = await _run(nvim, tmp_path, ws, "reload_e2e.lua", replies, approval="auto")
        on_disk = (ws.cwd / "other.txt").read_text()
    finally:
        ws.cleanup()

    # the unmodified buffer shows the agent's edit, and is still unmodified (nothing to save)
    assert seen["hello"] == ["line 1", "line two"] and not seen["hello_modified"]
    # the buffer with unsaved changes keeps them, and the user is told what :w would do
    assert seen["other"] == ["typed by the user"] and seen["other_modified"]
    assert on_disk == "written by the agent\n"
    warnings = [m for m in seen["messages"] if "other.txt" in m]
    assert warnings and ":w overwrites" in warnings[0], seen["messages"]
    assert not [m for m in seen["messages"] if "hello.txt" in m], seen["messages"]


async def test_queue_is_shown_and_taken_back(tmp_path: Path, nvim: str) -> None:
    slow = assistant_stream(
        Text("Partial reply, word by word, that is stopped first", chunks=40), message_id="m_slow"
    )
    replies = [
        Reply(events=slow, event_delay=0.5),
        _text("Unrelated answer.", "m_u"),
        _text("Extra turn.", "m_x"),
    ]
    ws = Workspace()
    try:
        async with FakeAnthropic(replies) as fake:
            write_agent_dir(ws.agent_dir, fake.url, ws.settings)
            settings = {"model": MODEL, "sessionDir": str(ws.sessions)}
            seen = await run_lua(
                nvim, HERE / "queue_e2e.lua", tmp_path, ws.cwd, ws.server_env(fake.url), settings, 90
            )
            requests = len(fake.requests)
    finally:
        ws.cleanup()

    # queued with g<CR> during the run: shown above the prompt marker, and still after <C-c>
    assert seen["queued"][0] == "queued (follow-up): later please"
    assert seen["after_stop"] == seen["queued"]
    # :PiQueue put it back below what was typed; the server's queue is empty
    assert seen["prompt"] == ["typed meanwhile", "", "later please"]
    assert any("nothing is queued" in m for m in seen["messages"])
    # the next prompt went out alone: no extra turn for the dropped follow-up
    assert requests == 2
    assert "Extra turn." not in "\n".join(seen["final"])


async def test_error_is_shown_whole_and_the_text_kept(tmp_path: Path, nvim: str) -> None:
    ws = Workspace()
    try:
        async with FakeAnthropic([]) as fake:
            write_agent_dir(ws.agent_dir, fake.url, ws.settings)
            env = {k: v for k, v in ws.server_env(fake.url).items() if k != "ANTHROPIC_API_KEY"}
            settings = {"model": MODEL, "sessionDir": str(ws.sessions)}
            seen = await run_lua(nvim, HERE / "error_e2e.lua", tmp_path, ws.cwd, env, settings, 90)
    finally:
        ws.cleanup()

    server_error: str = seen["server_error"]
    assert len(server_error) > 60  # longer than the 60-column screen: a notification cuts it
    lines: list[str] = seen["lines"]
    marker = next(i for i, line in enumerate(lines) if line.startswith("---- prompt"))
    error_at = lines.index("## Error")
    assert "\n".join(lines[error_at + 2 : marker]).strip() == server_error.strip()
    assert lines[marker + 1 :] == ["a carefully typed prompt", "over two lines"]
    assert not seen["running"]
    assert any(m.endswith("...") for m in seen["messages"])  # the notification alone was cut
    assert seen["stored"][2:] == ["_(error: 400 invalid_request_error: " + "x" * 120, "second line)_", ""]


async def test_first_contact_with_the_chat(tmp_path: Path, nvim: str) -> None:
    replies = [
        Reply(
            events=assistant_stream(
                Text("First answer."), message_id="m_1", input_tokens=1200, output_tokens=35
            )
        ),
        _text("Second answer.", "m_2"),
        _text("Third answer.", "m_3"),
    ]
    files = {
        "notes.txt": "",
        ".pi/skills/demo/SKILL.md": "---\nname: demo\ndescription: A demo skill.\n---\nDo the demo.\n",
    }
    ws = Workspace(files)
    try:
        seen = await _run(nvim, tmp_path, ws, "chat_ux_e2e.lua", replies, approval="auto")
        first_file = sorted(ws.sessions.glob("*.jsonl"))[0]  # the fork wrote a second one
        lines = [json.loads(line) for line in first_file.read_text().splitlines()]
        messages = [e["message"] for e in lines if e["type"] == "message"]
        users = ["".join(b["text"] for b in m["content"]) for m in messages if m["role"] == "user"]
    finally:
        ws.cleanup()

    # the first :PiChat on a cold server: the message shown before the server even answered
    cold = seen["cold"]
    assert cold["ready"] is False and cold["lines"][:3] == ["## You", "", "hello cold"], cold
    assert "working" in cold["header"] and seen["windows_after_cold"] == 1
    assert seen["linebreak"] is True
    # sent, echoed before the server answered, a working indicator; insert mode kept
    assert seen["mode_after_send"] == "i"
    echoed = seen["echoed"]
    assert "hello there" in echoed and echoed[echoed.index("hello there") - 2] == "## You", echoed
    assert "working" in seen["header_working"] and "working" in seen["statusline_working"]
    assert "working" not in seen["header_done"] and "working" not in seen["statusline_done"]
    assert MODEL in seen["header_done"]
    first = seen["first"]
    assert first.count("hello there") == 1  # the echo was replaced by the stored message
    assert first[-1] == "world"  # the letter after <C-s> was not lost
    # each reply: model, tokens, cost
    footer = next(line for line in first if line.startswith("_" + MODEL))
    assert "1.2k in, 35 out" in footer and "$" in footer, footer
    # after a navigation the window shows the transcript's end, nothing past it
    nav = seen["after_nav"]
    assert nav["last_visible"] == nav["line_count"] and nav["top"] > 1, nav
    assert any("send" in line for line in seen["keys"]) and any("rewind" in line for line in seen["keys"])
    assert {"/compact", "/model", "/skill:demo"} <= set(seen["completions"]), seen["completions"]
    assert users[:2] == ["hello cold", "hello there"]
    assert "explain these" in users[2] and "`notes.txt` lines 2-3:" in users[2] and "beta\ngamma" in users[2]
    assert "alpha\nbeta\ngamma\ndelta" in seen["expanded"] and "`notes.txt`" in seen["expanded"]
    assert seen["windows_after_fork"] == 0 and seen["fork_chat_shown"]
