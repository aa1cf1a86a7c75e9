"""``pi-lsp chat``: a plain terminal chat over the real server (a client like any editor).

It starts the server over stdio, opens a session (new, ``--session FILE`` or ``--continue``) and sends
each line as ``pi/prompt``: replies stream as they arrive, tool calls and results show as short lines,
``pi/requestApproval`` is asked on the terminal, Ctrl-C aborts a run (a second Ctrl-C, or one between
runs, quits). A line starting with ``!`` runs a shell command of your own (``pi/bash``). With a PROMPT
argument it answers that one prompt and exits.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sys
import threading
from collections.abc import Callable
from typing import Any, TextIO

from pi_lsp.server.rpc_client import RpcClient, RpcError, server_command

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


class TerminalChat:
    """One chat: the server connection, the session and the terminal."""

    def __init__(self, rpc: RpcClient, renderer: Renderer, ask: Callable[[str], str]) -> None:
        self.rpc = rpc
        self.renderer = renderer
        self.ask = ask
        self.running: asyncio.Future[Any] | None = None
        self._running_id: Any = None
        self.interrupts = 0
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

    async def _approval(self, request: dict[str, Any]) -> dict[str, Any]:
        preview = request.get("preview") or {}
        what = preview.get("command") or preview.get("path") or _short(request.get("args"))
        if preview.get("diff"):
            self.renderer.line(preview["diff"])
        where = " (outside the workspace)" if preview.get("outsideWorkspace") else ""
        if preview.get("cwdOutsideWorkspace"):
            where += f" (the session's folder {request.get('cwd')} is outside the workspace)"
        question = f"Allow {request.get('toolName')} {what}{where}? [y]es / [a]lways / [N]o: "
        self.renderer.line("")
        try:
            reply = (await read_line(self.ask, question)).strip().lower()
        except EOFError:
            reply = ""
        if reply in ("y", "yes"):
            return {"decision": "allow"}
        if reply in ("a", "always"):
            return {"decision": "allowAlways"}
        return {"decision": "deny", "reason": "The user said no at the terminal."}

    def interrupt(self) -> None:
        """Ctrl-C: abort the run; a second one (or one between runs) quits."""
        self.interrupts += 1
        if self.running is not None and not self.running.done() and self.interrupts == 1:
            self.renderer.line("[aborting; Ctrl-C again to quit]")
            self.rpc.notify("$/cancelRequest", {"id": self._running_id})
            return
        raise KeyboardInterrupt

    async def send(self, text: str) -> Any:
        self.interrupts = 0
        if text.startswith("!"):
            exclude = text.startswith("!!")
            command = text[2:] if exclude else text[1:]
            result = await self.rpc.request(
                "pi/bash", {"command": command, "excludeFromContext": exclude}, timeout=3600
            )
            self.renderer.write(result["output"])
            self.renderer.line(f"[exit {result['exitCode']}]")
            return result
        self._running_id, future = self.rpc.request_future("pi/prompt", {"text": text})
        self.running = future
        try:
            body = await future
        finally:
            self.running = None
        message = json.loads(body)
        if "error" in message:
            raise RpcError(
                message["error"].get("code"), message["error"].get("message"), message["error"].get("data")
            )
        self.renderer.line("")
        return message["result"]

    async def close(self) -> None:
        self._pump.cancel()
        await self.rpc.close()


async def read_line(ask: Callable[[str], str], prompt: str) -> str:
    """One line from the terminal, read in a daemon thread (a pending read never blocks exit)."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[str] = loop.create_future()

    def read() -> None:
        try:
            text = ask(prompt)
        except BaseException as error:  # EOFError, KeyboardInterrupt in the thread
            loop.call_soon_threadsafe(_settle, future, None, error)
            return
        loop.call_soon_threadsafe(_settle, future, text, None)

    threading.Thread(target=read, daemon=True, name="pi-lsp-chat-input").start()
    return await future


def _settle(future: asyncio.Future[str], value: str | None, error: BaseException | None) -> None:
    if future.done():
        return
    if error is not None:
        future.set_exception(error if isinstance(error, Exception) else EOFError())
    else:
        future.set_result(value or "")


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
    rpc = await RpcClient.start(server_command(), quiet=True)
    init = {
        "processId": os.getpid(),
        "rootUri": "file://" + cwd,
        "workspaceFolders": [{"uri": "file://" + cwd, "name": os.path.basename(cwd)}],
        "capabilities": {"experimental": {"pi": {"approvals": True}}},
        "initializationOptions": {"pi": options or {}},
    }
    await rpc.request("initialize", init)
    rpc.notify("initialized", {})
    chat = TerminalChat(rpc, Renderer(out, out.isatty()), input)
    loop = asyncio.get_running_loop()
    with contextlib.suppress(NotImplementedError, RuntimeError):
        loop.add_signal_handler(signal.SIGINT, chat.interrupt)
    try:
        state = await _open(rpc, cwd, session, continue_recent)
        chat.renderer.line(f"[session {state['sessionId']} · {state.get('file') or 'not saved yet'}]")
        if prompt is not None:
            result = await chat.send(prompt)
            return 0 if result.get("stopReason") not in ("error",) else 1
        while True:
            try:
                text = await read_line(input, "> ")
            except EOFError:
                return 0
            if text.strip():
                try:
                    await chat.send(text)
                except RpcError as error:
                    chat.renderer.line(f"[error {error.code}] {error.message}")
    except RpcError as error:
        chat.renderer.line(f"pi-lsp: error: {error.message}")
        return 1
    finally:
        with contextlib.suppress(Exception):
            loop.remove_signal_handler(signal.SIGINT)
        await chat.close()
