"""``pi-lsp chat``: the terminal chat over the real server, against the loopback fake model."""

from __future__ import annotations

import asyncio
import sys

from tests.agent.chat_support import MODEL, Workspace
from tests.llm.fake_anthropic import FakeAnthropic, Reply, Text, Thinking, ToolUse, assistant_stream
from tests.pi.pi_rpc import write_agent_dir


async def run_chat(ws: Workspace, base_url: str, args: list[str], stdin: bytes) -> tuple[int, str, str]:
    env = ws.server_env(base_url, PI_CODING_AGENT_SESSION_DIR=str(ws.sessions))
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "pi_lsp", "chat", "--cwd", str(ws.cwd), "--model", MODEL, *args,
        env=env, stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, err = await asyncio.wait_for(process.communicate(stdin), 60)
    assert process.returncode is not None
    return process.returncode, out.decode(), err.decode()


async def test_one_prompt_streams_the_reply_and_asks_before_bash() -> None:
    ws = Workspace({"hello.txt": "hi\n"})
    replies = [
        Reply(
            events=assistant_stream(Thinking("Checking."), ToolUse("t1", "bash", {"command": "echo ran-it"}))
        ),
        Reply(events=assistant_stream(Text("The command printed ran-it."), message_id="m2")),
    ]
    try:
        async with FakeAnthropic(replies) as fake:
            write_agent_dir(ws.agent_dir, fake.url, ws.settings)
            code, out, err = await run_chat(ws, fake.url, ["run it"], b"y\n")
        assert code == 0, err
        assert "Allow bash echo ran-it? [y]es / [a]lways / [N]o:" in out
        assert "⏺ bash" in out and "⎿ ran-it" in out
        assert "The command printed ran-it." in out
        assert len(ws.session_files()) == 1
    finally:
        ws.cleanup()


async def test_interactive_lines_and_user_bash_then_continue() -> None:
    ws = Workspace()
    replies = [Reply(events=assistant_stream(Text("First answer."), message_id="m1")),
               Reply(events=assistant_stream(Text("Second answer."), message_id="m2"))]  # fmt: skip
    try:
        async with FakeAnthropic(replies) as fake:
            write_agent_dir(ws.agent_dir, fake.url, ws.settings)
            code, out, _ = await run_chat(ws, fake.url, [], b"!echo mine\nfirst question\n")
            assert code == 0 and "mine" in out and "[exit 0]" in out and "First answer." in out
            code, out, _ = await run_chat(ws, fake.url, ["--continue", "second question"], b"")
            assert code == 0 and "Second answer." in out
        roles = [e["message"]["role"] for e in ws.entries() if e["type"] == "message"]
        assert roles == ["bashExecution", "user", "assistant", "user", "assistant"]
    finally:
        ws.cleanup()


async def test_without_a_key_it_says_how_to_set_one() -> None:
    ws = Workspace()
    try:
        async with FakeAnthropic([]) as fake:
            write_agent_dir(ws.agent_dir, fake.url, ws.settings)
            process = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "pi_lsp", "chat", "--cwd", str(ws.cwd), "hello",
                env={**ws.server_env(fake.url), "ANTHROPIC_API_KEY": ""},
                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
            )  # fmt: skip
            out, _ = await asyncio.wait_for(process.communicate(), 60)
        assert process.returncode == 1 and b"ANTHROPIC_API_KEY" in out
    finally:
        ws.cleanup()
