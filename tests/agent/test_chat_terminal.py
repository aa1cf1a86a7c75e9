"""``pi-lsp chat`` on a real pseudo-terminal: Ctrl-C is typed, the line discipline makes it SIGINT.

The chat is the session leader of a fresh pty (its controlling terminal), so ``\\x03`` written to
the master reaches the terminal's foreground process group, as when a user presses Ctrl-C. The
server the chat started must not be in that group: a Ctrl-C aborts the run, the chat goes on.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
import signal
import subprocess
import sys
import termios
import time
from collections.abc import AsyncIterator
from typing import Any

from tests.agent.chat_support import MODEL, Workspace
from tests.llm.fake_anthropic import FakeAnthropic, Reply, Text, ToolUse, assistant_stream
from tests.pi.pi_rpc import write_agent_dir

CTRL_C, CTRL_D = b"\x03", b"\x04"


def _take_terminal() -> None:
    """In the child, after setsid: the pty on stdin becomes its controlling terminal."""
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


class PtyChat:
    """``pi-lsp chat`` running on a pty; its output collected from the master side."""

    def __init__(self, ws: Workspace, base_url: str, args: list[str]) -> None:
        self.master, slave = os.openpty()
        env = ws.server_env(base_url, PI_CODING_AGENT_SESSION_DIR=str(ws.sessions))
        self.process = subprocess.Popen(
            [sys.executable, "-m", "pi_lsp", "chat", "--cwd", str(ws.cwd), "--model", MODEL, *args],
            stdin=slave, stdout=slave, stderr=slave, env=env,
            start_new_session=True, preexec_fn=_take_terminal,
        )  # fmt: skip
        os.close(slave)
        self.output = bytearray()
        self._changed = asyncio.Event()
        self._loop = asyncio.get_running_loop()
        self._loop.add_reader(self.master, self._read)

    def _read(self) -> None:
        try:
            data = os.read(self.master, 65536)
        except OSError:  # EIO: every slave side is closed
            data = b""
        if not data:
            self._loop.remove_reader(self.master)
        self.output += data
        self._changed.set()

    def text(self) -> str:
        return self.output.decode(errors="replace")

    def write(self, data: bytes) -> None:
        os.write(self.master, data)

    async def wait_for(self, needle: str, *, start: int = 0, timeout: float = 30) -> int:
        """Where ``needle`` first appears in the output after ``start`` (it must appear)."""

        async def wait() -> int:
            while (at := self.text().find(needle, start)) < 0:
                self._changed.clear()
                await self._changed.wait()
            return at + len(needle)

        try:
            return await asyncio.wait_for(wait(), timeout)
        except TimeoutError:
            raise AssertionError(f"{needle!r} never appeared in:\n{self.text()}") from None

    def server_pids(self) -> list[int]:
        """The chat's child processes (the server it started)."""
        children = []
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                with contextlib.suppress(OSError), open(f"/proc/{entry}/stat") as file:
                    stat = file.read()
                    if int(stat.rsplit(")", 1)[1].split()[1]) == self.process.pid:
                        children.append(int(entry))
        return children

    async def exit_code(self, timeout: float = 30) -> int:
        deadline = time.monotonic() + timeout
        while (code := self.process.poll()) is None:
            assert time.monotonic() < deadline, f"the chat did not exit:\n{self.text()}"
            await asyncio.sleep(0.05)
        return code

    def hang_up(self) -> None:
        """Close the master side, as closing the terminal window does (SIGHUP to the chat)."""
        if self.master >= 0:
            with contextlib.suppress(ValueError, OSError):
                self._loop.remove_reader(self.master)
            os.close(self.master)
            self.master = -1

    def close(self) -> None:
        self.hang_up()
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()


def alive(pid: int) -> bool:
    """Whether ``pid`` is a live process (a zombie counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


async def gone(pid: int, timeout: float = 15) -> bool:
    deadline = time.monotonic() + timeout
    while alive(pid):
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(0.05)
    return True


@contextlib.asynccontextmanager
async def chat_on_pty(
    replies: list[Reply], args: list[str] | None = None
) -> AsyncIterator[tuple[PtyChat, FakeAnthropic, Workspace]]:
    ws = Workspace({"hello.txt": "hi\n"})
    try:
        async with FakeAnthropic(replies) as fake:
            write_agent_dir(ws.agent_dir, fake.url, ws.settings)
            chat = PtyChat(ws, fake.url, args or [])
            try:
                await chat.wait_for("> ")
                yield chat, fake, ws
            finally:
                chat.close()
    finally:
        ws.cleanup()


def _messages(ws: Workspace, role: str) -> list[dict[str, Any]]:
    messages = [e["message"] for e in ws.entries() if e["type"] == "message"]
    return [m for m in messages if m["role"] == role]


SECOND = Reply(events=assistant_stream(Text("Second answer."), message_id="m2"))


async def test_ctrl_c_mid_reply_aborts_the_run_and_the_chat_goes_on() -> None:
    # The first reply streams "Partial" and then stalls, connection open, as a slow model does.
    slow = Reply(events=assistant_stream(Text("Partial reply", chunks=2), message_id="m1"), stall_after=4)
    async with chat_on_pty([slow, SECOND]) as (chat, _, ws):
        [server] = chat.server_pids()
        chat.write(b"first question\n")
        at = await chat.wait_for("Partial")
        chat.write(CTRL_C)
        at = await chat.wait_for("[aborted]", start=at)
        at = await chat.wait_for("> ", start=at)
        assert alive(server), chat.text()
        chat.write(b"second question\n")
        at = await chat.wait_for("Second answer.", start=at)
        await chat.wait_for("> ", start=at)
        first, second = _messages(ws, "assistant")
        assert first["stopReason"] == "aborted" and first["content"] == [{"type": "text", "text": "Partial"}]
        assert second["stopReason"] == "stop"
        chat.write(CTRL_D)
        assert await chat.exit_code() == 0, chat.text()
        assert await gone(server)
        assert "Traceback" not in chat.text()


async def test_ctrl_c_before_the_model_answers_and_at_the_prompt() -> None:
    async with chat_on_pty([Reply(kind="hang"), SECOND]) as (chat, fake, ws):
        [server] = chat.server_pids()
        chat.write(b"first question\n")
        deadline = time.monotonic() + 30
        while not fake.requests:  # the model was asked and has not answered
            assert time.monotonic() < deadline
            await asyncio.sleep(0.02)
        chat.write(CTRL_C)
        at = await chat.wait_for("[aborted]")
        at = await chat.wait_for("> ", start=at)
        chat.write(b"second question\n")
        at = await chat.wait_for("Second answer.", start=at)
        await chat.wait_for("> ", start=at)
        assert [m["stopReason"] for m in _messages(ws, "assistant")] == ["aborted", "stop"]
        chat.write(CTRL_C)  # at the prompt: quits
        assert await chat.exit_code() == 0, chat.text()
        assert await gone(server)
        assert "Traceback" not in chat.text()


async def test_ctrl_c_at_an_approval_question_denies_and_aborts() -> None:
    ask = Reply(events=assistant_stream(ToolUse("t1", "bash", {"command": "touch made-it"}), message_id="m1"))
    async with chat_on_pty([ask, SECOND], ["--approval", "ask"]) as (chat, _, ws):
        [server] = chat.server_pids()
        chat.write(b"first question\n")
        at = await chat.wait_for("[N]o: ")
        chat.write(CTRL_C)
        at = await chat.wait_for("the user denied permission to run bash", start=at)
        at = await chat.wait_for("> ", start=at)
        assert alive(server)
        # The question's unanswered read must not swallow the next line.
        chat.write(b"second question\n")
        at = await chat.wait_for("Second answer.", start=at)
        await chat.wait_for("> ", start=at)
        assert not (ws.cwd / "made-it").exists()
        assert [r["isError"] for r in _messages(ws, "toolResult")] == [True]
        chat.write(CTRL_D)
        assert await chat.exit_code() == 0, chat.text()
        assert await gone(server)


async def test_sigterm_hangup_and_sigkill_end_the_server_too() -> None:
    slow = Reply(events=assistant_stream(Text("Partial reply", chunks=2), message_id="m1"), stall_after=4)
    # SIGKILL cannot be handled: the server sees its stdin close and exits by itself.
    expected = {"SIGTERM": 128 + signal.SIGTERM, "hangup": 128 + signal.SIGHUP, "SIGKILL": -signal.SIGKILL}
    for how, status in expected.items():
        async with chat_on_pty([slow]) as (chat, _, _ws):
            [server] = chat.server_pids()
            chat.write(b"first question\n")
            await chat.wait_for("Partial")
            if how == "hangup":  # the terminal window is closed
                chat.hang_up()
            else:
                chat.process.send_signal(getattr(signal, how))
            assert await chat.exit_code() == status, how
            assert await gone(server), how


class _WireRecorder:
    """Stands in for the chat's JSON-RPC client: records what goes out, in order."""

    def __init__(self) -> None:
        self.notifications: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.wire: list[tuple[str, Any]] = []
        self.futures: list[asyncio.Future[Any]] = []

    def send(self, message: dict[str, Any]) -> None:
        self.wire.append(("response", message.get("result")))

    def request_future(self, method: str, params: Any) -> tuple[int, asyncio.Future[Any]]:
        self.wire.append((method, params))
        self.futures.append(asyncio.get_running_loop().create_future())
        return len(self.futures), self.futures[-1]

    def notify(self, method: str, params: Any) -> None:
        self.wire.append((method, params))

    async def close(self) -> None:
        pass


async def test_ctrl_c_at_a_question_sends_the_denial_before_the_stop() -> None:
    """The server must see "no" before "abort", or the tool is recorded as aborted, not denied."""
    import io

    from pi_lsp.client.chat_cli import LineReader, Renderer, TerminalChat

    rpc = _WireRecorder()
    typed, keyboard = os.pipe()  # nothing is ever typed: the question stays open
    chat = TerminalChat(rpc, Renderer(io.StringIO(), color=False), LineReader(typed))  # type: ignore[arg-type]
    try:
        run = asyncio.ensure_future(chat.send("first question"))
        await asyncio.sleep(0)
        approval = {"toolName": "bash", "toolCallId": "t1", "preview": {"command": "touch x"}}
        rpc.notifications.put_nowait({"method": "pi/requestApproval", "id": 7, "params": approval})
        while chat._question is None:
            await asyncio.sleep(0.01)
        chat.interrupt()
        while len(rpc.wire) < 3:
            await asyncio.sleep(0.01)
        assert [what for what, _ in rpc.wire] == ["pi/prompt", "response", "pi/abort"]
        assert rpc.wire[1][1]["decision"] == "deny"
        run.cancel()
    finally:
        await chat.close()
        os.write(keyboard, b"\n")  # the reader thread's pending read ends with a line, not EOF
        os.close(keyboard)
