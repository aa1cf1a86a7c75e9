"""``pi-lsp chat``: a plain terminal chat over the real server (a client like any editor).

It starts the server over stdio, opens a session (new, ``--session FILE`` or ``--continue``) and sends
each line as ``pi/prompt``: replies stream as they arrive, tool calls and results show as short lines,
``pi/requestApproval`` is asked on the terminal. A line starting with ``!`` runs a shell command of
your own (``pi/bash``). With a PROMPT argument it answers that one prompt and exits.

Keys: Ctrl-C during a run aborts it (``pi/abort``; an open approval question is answered no) and the
chat goes on; Ctrl-C again before it has stopped, Ctrl-C at the prompt, or Ctrl-D quits. The server
runs in a session of its own, so the terminal's signals reach only the chat, which ends the server
whenever it exits (also on SIGTERM and SIGHUP).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import os
import signal
import sys
import threading
from collections.abc import Callable
from typing import Any, TextIO

from pi_lsp.client.rpc_client import RpcClient, RpcError, decode_response, server_command
from pi_lsp.framing import Body

DIM, BOLD, RESET = "\x1b[2m", "\x1b[1m", "\x1b[0m"
_TOOL_LINE = 100


def _short(value: Any, width: int = _TOOL_LINE) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def _result_text(result: Any) -> str:
    blocks = result.get("content") if isinstance(result, dict) else None
    texts = [b.get("text", "") for b in blocks or [] if isinstance(b, dict) and b.get("type") == "text"]
    return "\n".join(texts)


class Renderer:
    """Turns ``pi/event`` notifications into terminal output."""

    def __init__(self, out: TextIO, color: bool) -> None:
        self.out = out
        self.color = color
        self.in_thinking = False
        self.at_line_start = True

    def _style(self, text: str, style: str) -> str:
        return f"{style}{text}{RESET}" if self.color else text

    def write(self, text: str) -> None:
        if text:
            # A terminal that is gone (hung up) loses the output, not the chat's cleanup.
            with contextlib.suppress(OSError):
                self.out.write(text)
                self.out.flush()
            self.at_line_start = text.endswith("\n")

    def line(self, text: str) -> None:
        if not self.at_line_start:
            self.write("\n")
        self.write(text + "\n")

    def event(self, event: dict[str, Any]) -> None:
        kind = event.get("type")
        if kind == "message_update":
            update = event.get("assistantMessageEvent") or {}
            delta = update.get("delta")
            if update.get("type") == "thinking_delta" and isinstance(delta, str):
                self.write(self._style(delta, DIM))
            elif update.get("type") == "text_delta" and isinstance(delta, str):
                self.write(delta)
            elif update.get("type") in ("thinking_end", "text_end"):
                self.line("")
        elif kind == "tool_execution_start":
            self.line(self._style(f"⏺ {event.get('toolName')} {_short(event.get('args'))}", BOLD))
        elif kind == "tool_execution_end":
            text = _result_text(event.get("result"))
            first = text.strip().splitlines()[0] if text.strip() else "(no output)"
            mark = "✗" if event.get("isError") else "⎿"
            more = (
                f" (+{len(text.strip().splitlines()) - 1} lines)"
                if len(text.strip().splitlines()) > 1
                else ""
            )
            self.line(self._style(f"  {mark} {_short(first)}{more}", DIM))
        elif kind == "message_end":
            message = event.get("message") or {}
            if message.get("role") == "assistant" and message.get("stopReason") in ("error", "aborted"):
                self.line(f"[{message.get('stopReason')}] {message.get('errorMessage', '')}")
        elif kind == "auto_retry_start":
            delay = event.get("delayMs", 0) / 1000
            self.line(f"[retry {event.get('attempt')}/{event.get('maxAttempts')} in {delay:g} s]")
        elif kind == "compaction_start":
            self.line(f"[compacting the session ({event.get('reason')})]")
        elif kind == "compaction_end" and event.get("errorMessage"):
            self.line(f"[{event['errorMessage']}]")
        elif kind == "queue_update" and (event.get("steering") or event.get("followUp")):
            steer, follow = len(event.get("steering", [])), len(event.get("followUp", []))
            self.line(f"[queued: {steer} steer, {follow} follow-up]")


class LineReader:
    """Lines typed at the terminal, read from the file descriptor by one daemon thread at a time.

    The thread never holds a lock of ``sys.stdin`` (a read pending at exit cannot block it). A read
    the chat stops waiting for (Ctrl-C at an approval question) stays pending and its line goes
    to the next read, so two threads never compete for the terminal's lines."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self._buffer = b""
        self._pending: asyncio.Future[str] | None = None

    async def read(self) -> str:
        """The next line without its newline; EOFError at the end of input (Ctrl-D)."""
        if self._pending is None:
            loop = asyncio.get_running_loop()
            self._pending = loop.create_future()
            thread = threading.Thread(
                target=self._read, args=(loop, self._pending), daemon=True, name="pi-lsp-chat-input"
            )
            thread.start()
        pending = self._pending
        try:
            return await asyncio.shield(pending)
        finally:
            if pending.done():
                self._pending = None

    def _read(self, loop: asyncio.AbstractEventLoop, future: asyncio.Future[str]) -> None:
        try:
            while b"\n" not in self._buffer:
                data = os.read(self.fd, 4096)
                if not data:
                    break
                self._buffer += data
            line, newline, self._buffer = self._buffer.partition(b"\n")
            result: str | BaseException = line.decode(errors="replace")
            if not newline and not line:
                result = EOFError()
        except OSError as error:  # the terminal is gone
            result = EOFError(str(error))
        with contextlib.suppress(RuntimeError):  # the loop has closed: nobody waits
            loop.call_soon_threadsafe(_settle, future, result)


def _settle(future: asyncio.Future[str], result: str | BaseException) -> None:
    if future.done():
        return
    if isinstance(result, BaseException):
        future.set_exception(result)
    else:
        future.set_result(result)


class TerminalChat:
    """One chat: the server connection, the session and the terminal."""

    def __init__(self, rpc: RpcClient, renderer: Renderer, reader: LineReader) -> None:
        self.rpc = rpc
        self.renderer = renderer
        self.reader = reader
        self.running: asyncio.Future[Any] | None = None
        self._running_id: Any = None
        self._running_method = ""
        self.stopping = False  # Ctrl-C has asked the current run to stop
        self._question: asyncio.Future[str] | None = None  # an open approval question
        self._stop_after_answer = False  # Ctrl-C came during a question: stop once it is answered
        self.quit_status: int | None = None
        self.main_task: asyncio.Task[Any] | None = None
        self._closing = False
        self._pump = asyncio.ensure_future(self._notifications())

    async def _notifications(self) -> None:
        while True:
            message = await self.rpc.notifications.get()
            method = message.get("method")
            if method == "pi/event":
                self.renderer.event(message["params"]["event"])
            elif method == "pi/requestApproval" and "id" in message:
                answer = await self._approval(message["params"])
                self.rpc.send({"jsonrpc": "2.0", "id": message["id"], "result": answer})
                if self._stop_after_answer:
                    # The denial goes out first, so the run records "denied", then the stop.
                    self._stop_after_answer = False
                    self._stop_run()

    async def _approval(self, request: dict[str, Any]) -> dict[str, Any]:
        preview = request.get("preview") or {}
        what = preview.get("command") or preview.get("path") or _short(request.get("args"))
        if preview.get("diff"):
            self.renderer.line(preview["diff"])
        where = " (outside the workspace)" if preview.get("outsideWorkspace") else ""
        if preview.get("cwdOutsideWorkspace"):
            where += f" (the session's folder {request.get('cwd')} is outside the workspace)"
        self.renderer.line("")
        self.renderer.write(f"Allow {request.get('toolName')} {what}{where}? [y]es / [a]lways / [N]o: ")
        self._question = question = asyncio.ensure_future(self.reader.read())
        try:
            await asyncio.wait([question])  # Ctrl-C cancels the question, not this task
        finally:
            self._question = None
        if question.cancelled():
            return {"decision": "deny", "reason": "The user stopped the run at the terminal."}
        reply = question.result().strip().lower() if question.exception() is None else ""
        if reply in ("y", "yes"):
            return {"decision": "allow"}
        if reply in ("a", "always"):
            return {"decision": "allowAlways"}
        return {"decision": "deny", "reason": "The user said no at the terminal."}

    def interrupt(self) -> None:
        """Ctrl-C: stop the run (an open approval question is answered no); again, or at the prompt, quit."""
        if self.running is None or self.running.done():
            self.renderer.line("")
            self.quit(0)
        elif self.stopping:
            self.quit(130)
        else:
            self.stopping = True
            self.renderer.line("[stopping; Ctrl-C again to quit]")
            if self._question is not None:
                self._question.cancel()
                self._stop_after_answer = True
            else:
                self._stop_run()

    def _stop_run(self) -> None:
        if self._running_method == "pi/prompt":
            self._fire_and_forget("pi/abort", {})
        else:  # pi/bash: cancelling the request stops the command
            self.rpc.notify("$/cancelRequest", {"id": self._running_id})

    def quit(self, status: int) -> None:
        """End the chat with ``status``: the main task is cancelled, its cleanup ends the server."""
        if self.quit_status is None and not self._closing:
            self.quit_status = status
            if self.main_task is not None:
                self.main_task.cancel()

    def _fire_and_forget(self, method: str, params: dict[str, Any]) -> None:
        with contextlib.suppress(ConnectionError):
            _, future = self.rpc.request_future(method, params)
            future.add_done_callback(lambda done: done.cancelled() or done.exception())

    async def send(self, text: str) -> Any:
        self.stopping = False
        if text.startswith("!"):
            exclude = text.startswith("!!")
            command = text[2:] if exclude else text[1:]
            params = {"command": command, "excludeFromContext": exclude}
            body = await self._request("pi/bash", params)
            result = decode_response(body)
            self.renderer.write(result["output"])
            self.renderer.line(f"[exit {result['exitCode']}]")
            return result
        result = decode_response(await self._request("pi/prompt", {"text": text}))
        self.renderer.line("")
        return result

    async def _request(self, method: str, params: dict[str, Any]) -> Body:
        """A request that Ctrl-C can stop while it runs (a prompt's run, a user's shell command)."""
        self._running_id, future = self.rpc.request_future(method, params)
        self._running_method, self.running = method, future
        try:
            return await future
        finally:
            self.running = None

    async def close(self) -> None:
        self._closing = True
        self._pump.cancel()
        await self.rpc.close()


async def _open(rpc: RpcClient, cwd: str, session: str | None, continue_recent: bool) -> dict[str, Any]:
    if session is not None:
        result: dict[str, Any] = await rpc.request("pi/openSession", {"path": os.path.abspath(session)})
    elif continue_recent:
        result = await rpc.request("pi/continueRecent", {"cwd": cwd})
    else:
        result = await rpc.request("pi/newSession", {"cwd": cwd})
    return result


async def chat_main(
    prompt: str | None,
    *,
    session: str | None = None,
    continue_recent: bool = False,
    cwd: str | None = None,
    options: dict[str, Any] | None = None,
    out: TextIO = sys.stdout,
) -> int:
    cwd = os.path.abspath(cwd or os.getcwd())
    rpc = await RpcClient.start(server_command(), quiet=True, own_session=True)
    chat = TerminalChat(rpc, Renderer(out, out.isatty()), LineReader(sys.stdin.fileno()))
    chat.main_task = asyncio.current_task()
    loop = asyncio.get_running_loop()
    handlers: dict[signal.Signals, Callable[[], None]] = {
        signal.SIGINT: chat.interrupt,
        signal.SIGTERM: functools.partial(chat.quit, 128 + signal.SIGTERM),
        signal.SIGHUP: functools.partial(chat.quit, 128 + signal.SIGHUP),
    }
    for signum, handler in handlers.items():
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(signum, handler)
    try:
        return await _converse(chat, cwd, prompt, session, continue_recent, options or {})
    except asyncio.CancelledError:
        if chat.quit_status is None:
            raise
        if chat.main_task is not None:
            chat.main_task.uncancel()
        return chat.quit_status
    finally:
        await chat.close()  # ends the server, whatever ended the chat
        for signum in handlers:
            with contextlib.suppress(Exception):
                loop.remove_signal_handler(signum)


async def _converse(
    chat: TerminalChat,
    cwd: str,
    prompt: str | None,
    session: str | None,
    continue_recent: bool,
    options: dict[str, Any],
) -> int:
    init = {
        "processId": os.getpid(),
        "rootUri": "file://" + cwd,
        "workspaceFolders": [{"uri": "file://" + cwd, "name": os.path.basename(cwd)}],
        "capabilities": {"experimental": {"pi": {"approvals": True}}},
        "initializationOptions": {"pi": options},
    }
    try:
        await chat.rpc.request("initialize", init)
        chat.rpc.notify("initialized", {})
        state = await _open(chat.rpc, cwd, session, continue_recent)
        chat.renderer.line(f"[session {state['sessionId']} · {state.get('file') or 'not saved yet'}]")
        if prompt is not None:
            result = await chat.send(prompt)
            return {"error": 1, "aborted": 130}.get(result.get("stopReason"), 0)
        while True:
            chat.renderer.write("> ")
            try:
                text = await chat.reader.read()
            except EOFError:
                chat.renderer.line("")
                return 0
            if text.strip():
                try:
                    await chat.send(text)
                except RpcError as error:
                    chat.renderer.line(f"[error {error.code}] {error.message}")
    except RpcError as error:
        chat.renderer.line(f"pi-lsp: error: {error.message}")
        return 1
