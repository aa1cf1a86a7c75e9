"""Running agent conversations through our real server (stdio subprocess) and through pi itself.

A :class:`Workspace` is one temporary world: a project folder with files, pi's agent dir (its
``models.json`` re-routes the anthropic provider to the loopback fake, ``settings.json`` holds fast
retry settings) and a session folder. The same workspace path is used for pi and for our server,
so the system prompt (which names the cwd) and every path in the conversation are equal.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from pi_lsp.client.rpc_client import RpcClient, server_command
from tests.llm.fake_anthropic import FakeAnthropic, Recorded, Reply, Text, ToolUse, assistant_stream
from tests.pi.pi_rpc import PiRpc, pi_package_dir, write_agent_dir
from tests.server.network_support import start_network_server

API_KEY = "sk-ant-test-0123456789abcdef-secret"
MODEL = "claude-sonnet-4-5"
FAST_SETTINGS: dict[str, Any] = {"retry": {"baseDelayMs": 50, "provider": {"maxRetries": 0}}}


@dataclass
class Transcript:
    """What one conversation produced: events (pi's form), requests the fake got, the file."""

    events: list[dict[str, Any]]
    requests: list[dict[str, Any]]
    entries: list[dict[str, Any]]
    results: list[Any] = field(default_factory=list)
    stats: dict[str, Any] = field(default_factory=dict)


class Workspace:
    """A project folder, an agent dir and a session dir under one temporary root."""

    def __init__(
        self,
        files: dict[str, str] | None = None,
        settings: dict[str, Any] | None = None,
        tools: list[str] | None = None,
    ) -> None:
        self.tools = tools
        self.root = Path(tempfile.mkdtemp(prefix="pi-lsp-chat-"))
        self.cwd = self.root / "project"
        self.agent_dir = self.root / "agent"
        self.sessions = self.root / "sessions"
        self.files = dict(files or {})
        self.settings = {**FAST_SETTINGS, **(settings or {})}
        self.reset()

    def reset(self) -> None:
        """Fresh project files and an empty session folder (between pi's run and ours)."""
        shutil.rmtree(self.cwd, ignore_errors=True)
        shutil.rmtree(self.sessions, ignore_errors=True)
        self.cwd.mkdir(parents=True)
        self.sessions.mkdir(parents=True)
        for name, text in self.files.items():
            path = self.cwd / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)

    def cleanup(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)

    def session_files(self) -> list[Path]:
        return sorted(self.sessions.rglob("*.jsonl"))

    def entries(self) -> list[dict[str, Any]]:
        files = self.session_files()
        if not files:
            return []
        assert len(files) == 1, files
        return [json.loads(line) for line in files[0].read_text().splitlines() if line.strip()]

    def server_env(self, base_url: str, **extra: str) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PI_", "ANTHROPIC_"))}
        env.update(
            PI_CODING_AGENT_DIR=str(self.agent_dir),
            ANTHROPIC_API_KEY=API_KEY,
            ANTHROPIC_BASE_URL=base_url,
            PI_PACKAGE_DIR=str(pi_package_dir().resolve()),  # pi names its real path in the prompt
        )
        env.update(extra)
        return env


@contextlib.contextmanager
def workspace(
    files: dict[str, str] | None = None,
    settings: dict[str, Any] | None = None,
    tools: list[str] | None = None,
) -> Iterator[Workspace]:
    ws = Workspace(files, settings, tools)
    try:
        yield ws
    finally:
        ws.cleanup()


# ---------------------------------------------------------------------------------- our server


class ChatClient:
    """Our server over stdio, with ``pi/event`` collected and approval requests answered."""

    def __init__(self, rpc: RpcClient) -> None:
        self.rpc = rpc
        self.events: list[dict[str, Any]] = []  # pi/event params
        self.approval_requests: list[dict[str, Any]] = []
        self.answer_approval: Callable[[dict[str, Any]], Any] | None = None
        self._pump = asyncio.ensure_future(self._read())
        self._changed = asyncio.Event()

    @classmethod
    async def start(
        cls, ws: Workspace, base_url: str, *, approvals: bool = True, options: dict[str, Any] | None = None,
        env: dict[str, str] | None = None,
    ) -> ChatClient:  # fmt: skip
        rpc = await RpcClient.start(server_command(), env=ws.server_env(base_url, **(env or {})), quiet=True)
        return await cls.attach(rpc, ws, approvals=approvals, options=options)

    @classmethod
    async def attach(
        cls, rpc: RpcClient, ws: Workspace, *, approvals: bool = True, options: dict[str, Any] | None = None
    ) -> ChatClient:
        """Initialize a connection (stdio or TCP: ``options`` may carry the TCP ``token``)."""
        client = cls(rpc)
        params: dict[str, Any] = {
            "processId": os.getpid(),
            "rootUri": ws.cwd.as_uri(),
            "workspaceFolders": [{"uri": ws.cwd.as_uri(), "name": "project"}],
            "capabilities": {"experimental": {"pi": {"approvals": True}}} if approvals else {},
            "initializationOptions": {"pi": options or {}},
        }
        await rpc.request("initialize", params)
        rpc.notify("initialized", {})
        return client

    async def _read(self) -> None:
        while True:
            message = await self.rpc.notifications.get()
            method = message.get("method")
            if method == "pi/event":
                self.events.append(message["params"])
            elif method == "pi/requestApproval" and "id" in message:
                self.approval_requests.append(message["params"])
                answer = self.answer_approval(message["params"]) if self.answer_approval else None
                if answer is Ellipsis:  # hold: never answer
                    pass
                elif answer is not None:
                    self.rpc.send({"jsonrpc": "2.0", "id": message["id"], "result": answer})
                else:
                    self.rpc.send(
                        {"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32603, "message": "no"}}
                    )
            self._changed.set()

    async def wait_event(
        self, predicate: Callable[[dict[str, Any]], bool], timeout: float = 30
    ) -> dict[str, Any]:
        async def wait() -> dict[str, Any]:
            while True:
                for params in self.events:
                    if predicate(params["event"]):
                        return params["event"]
                self._changed.clear()
                await self._changed.wait()

        return await asyncio.wait_for(wait(), timeout)

    def event_list(self) -> list[dict[str, Any]]:
        return [params["event"] for params in self.events]

    async def new_session(self, ws: Workspace) -> dict[str, Any]:
        state: dict[str, Any] = await self.rpc.request(
            "pi/newSession", {"cwd": str(ws.cwd), "sessionDir": str(ws.sessions)}
        )
        return state

    async def close(self) -> None:
        """Shut the connection down (once: a test may close it early, its helper at the end)."""
        if self._pump.cancelled():
            return
        self._pump.cancel()
        await self.rpc.close()


# ---------------------------------------------------------------------------------- chats

HELLO = {"hello.txt": "line one\n"}


def text_turn(text: str) -> Reply:
    return Reply(events=assistant_stream(Text(text), message_id="m_" + text.split()[0]))


def bash_turn(command: str, call_id: str = "toolu_B") -> Reply:
    return Reply(
        events=assistant_stream(ToolUse(call_id, "bash", {"command": command}), message_id="m_" + call_id)
    )


def tool_turn(*calls: tuple[str, str, dict[str, Any]]) -> Reply:
    """One assistant turn calling ``(call id, tool name, arguments)`` in a batch."""
    blocks = [ToolUse(call_id, name, args) for call_id, name, args in calls]
    return Reply(events=assistant_stream(*blocks, message_id="m_" + calls[0][0]))


async def no_process_left(marker: str) -> bool:
    """True once no process's command line holds ``marker``: a SIGKILLed group may take a moment
    to be gone on a loaded machine, so this looks again for up to 5 s (it never passes while one lives)."""
    for _ in range(250):
        if subprocess.run(["pgrep", "-f", marker], capture_output=True).stdout == b"":
            return True
        await asyncio.sleep(0.02)
    return False


class Chat:
    """A workspace, a fake model and one connected client with a fresh session."""

    def __init__(self, ws: Workspace, fake: FakeAnthropic, client: ChatClient) -> None:
        self.ws, self.fake, self.client = ws, fake, client

    async def prompt(self, text: str, **extra: Any) -> Any:
        return await self.client.rpc.request("pi/prompt", {"text": text, **extra})

    async def request(self, method: str, **params: Any) -> Any:
        return await self.client.rpc.request(method, params)

    def messages(self) -> list[dict[str, Any]]:
        """The messages of the session file (file order)."""
        return [e["message"] for e in self.ws.entries() if e["type"] == "message"]

    async def entries(self) -> list[dict[str, Any]]:
        """The session's entries (file order) as the server holds them (a new file is written once
        it has an assistant message, as pi writes it)."""
        result = await self.request("pi/getEntries")
        return list(result["entries"])

    async def checkpoints(self) -> list[dict[str, Any]]:
        return [e for e in await self.entries() if e.get("customType") == "pi-lsp/checkpoint"]

    def events(self, kind: str) -> list[dict[str, Any]]:
        return [event for event in self.client.event_list() if event.get("type") == kind]


async def open_chat(
    replies: list[Reply], *, files: dict[str, str] | None = None, options: dict[str, Any] | None = None,
    approvals: bool = True, env: dict[str, str] | None = None, inside: bool = False,
) -> AsyncIterator[Chat]:  # fmt: skip
    """One server over stdio with a fresh session on ``files`` (:data:`HELLO` if not given),
    answering with ``replies``; used as ``async for chat in open_chat(...)``, cleaned up after.
    ``inside``: pi's agent dir and the session folder inside the project (``.pi-agent/``,
    ``.pi/sessions/``); ``env``: more variables for the server process."""
    ws = Workspace(HELLO if files is None else files)
    if inside:
        ws.agent_dir, ws.sessions = ws.cwd / ".pi-agent", ws.cwd / ".pi" / "sessions"
        ws.sessions.mkdir(parents=True)
    fake = FakeAnthropic(replies)
    await fake.__aenter__()
    write_agent_dir(ws.agent_dir, fake.url, ws.settings)
    client = await ChatClient.start(
        ws, fake.url, approvals=approvals, options={"model": MODEL, **(options or {})}, env=env
    )
    try:
        await client.new_session(ws)
        yield Chat(ws, fake, client)
    finally:
        await client.close()
        await fake.__aexit__(None, None, None)
        ws.cleanup()


@dataclass
class TwoConnections:
    """One TCP server and two editors connected to it, with auto-approval, no session yet."""

    ws: Workspace
    fake: FakeAnthropic
    first: ChatClient
    second: ChatClient


@contextlib.asynccontextmanager
async def two_connections(tmp_path: Path, replies: list[Reply]) -> AsyncIterator[TwoConnections]:
    """A shared server (``--tcp``) on a :data:`HELLO` workspace and two connections to it; both
    connections, the server and the workspace are gone afterwards."""
    ws = Workspace(HELLO)
    try:
        async with FakeAnthropic(replies) as fake:
            write_agent_dir(ws.agent_dir, fake.url, ws.settings)
            server = await start_network_server(tmp_path, "--tcp", **ws.server_env(fake.url))
            options = {"model": MODEL, "approval": "auto", "token": server.token}
            clients: list[ChatClient] = []
            try:
                for _ in range(2):
                    rpc = await RpcClient.connect(server.host, server.port)
                    clients.append(await ChatClient.attach(rpc, ws, options=options))
                yield TwoConnections(ws, fake, clients[0], clients[1])
            finally:
                for client in clients:
                    await client.close()
                server.process.kill()
                await server.process.wait()
    finally:
        ws.cleanup()


# ---------------------------------------------------------------------------------- comparing

_VOLATILE = ("id", "parentId", "timestamp")


def normalise_entries(entries: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Entries without ids and timestamps, with the tree shape kept as "parent is the previous"."""
    out = []
    previous: str | None = None
    position = {entry.get("id"): number for number, entry in enumerate(entries) if "id" in entry}
    for entry in entries:
        copy = {k: v for k, v in entry.items() if k not in _VOLATILE}
        for key in ("firstKeptEntryId", "targetId", "fromId"):  # references: by position
            if key in copy:
                copy[key] = f"#{position.get(copy[key], copy[key])}"
        if entry.get("type") == "session":
            copy.pop("cwd", None)
        else:
            copy["parentIsPrevious"] = entry.get("parentId") == previous
            previous = entry.get("id")
        message = copy.get("message")
        if isinstance(message, dict):
            copy["message"] = {k: v for k, v in message.items() if k != "timestamp"}
        out.append(copy)
    return out


def key_order(entries: Sequence[dict[str, Any]]) -> list[list[str]]:
    """The key order of every entry and message (pi's JSON field order)."""
    return [[*e, "|", *(e.get("message") or {})] for e in entries]


def event_outline(events: Sequence[dict[str, Any]]) -> list[str]:
    """The order of events, each named with what identifies it (role, tool call, delta kind).

    Tools of one batch run in parallel, so the order in which they end (and send updates) is a
    race; runs of such events are compared sorted."""
    outline: list[str] = []
    batch: list[str] = []
    for event in events:
        kind = str(event.get("type"))
        if kind == "queue_update":
            kind += f"({len(event.get('steering', []))},{len(event.get('followUp', []))})"
        if kind in ("message_start", "message_end"):
            kind += f"({event['message'].get('role')})"
        elif kind == "message_update":
            kind += f"({event['assistantMessageEvent']['type']})"
        elif kind.startswith("tool_execution"):
            kind += f"({event.get('toolCallId')})"
        if kind.startswith(("tool_execution_end", "tool_execution_update")):
            batch.append(kind)
            continue
        outline += [*sorted(batch), kind]
        batch = []
    return outline + sorted(batch)


def normalise_request(body: dict[str, Any]) -> dict[str, Any]:
    """A request body with the texts that are ours by design (tool and parameter descriptions,
    written in our own words) replaced; everything else must be pi's."""
    copy = json.loads(json.dumps(body))
    for tool in copy.get("tools") or []:
        tool["description"] = "<description>"
        _drop_descriptions(tool.get("input_schema"))
    return copy


def _drop_descriptions(schema: Any) -> None:
    if isinstance(schema, dict):
        if isinstance(schema.get("description"), str):
            schema["description"] = "<description>"
        for value in schema.values():
            _drop_descriptions(value)
    elif isinstance(schema, list):
        for value in schema:
            _drop_descriptions(value)


# ---------------------------------------------------------------------------------- running both


EventTest = Callable[[dict[str, Any]], bool]


@dataclass
class Script:
    """One conversation: the fake's replies (or a router), the prompts, and when to abort."""

    replies: list[Reply] = field(default_factory=list)
    prompts: Sequence[str] = ("Go",)
    route: Callable[[Recorded], Reply] | None = None
    abort_when: EventTest | None = None  # abort the first prompt once an event matches
    queue_when: EventTest | None = None  # then queue ``queued`` ((streamingBehavior, text) pairs)
    queued: Sequence[tuple[str, str]] = ()


def _fake(script: Script) -> FakeAnthropic:
    return FakeAnthropic(script.replies, route=script.route)


async def run_pi(ws: Workspace, script: Script) -> Transcript:
    """The conversation as pi runs it (``pi --mode rpc``)."""
    ws.reset()
    async with _fake(script) as fake:
        write_agent_dir(ws.agent_dir, fake.url, ws.settings)
        pi = await PiRpc.start(ws.cwd, ws.agent_dir, ws.sessions, MODEL, tools=ws.tools)
        try:
            for number, prompt in enumerate(script.prompts):
                count = sum(e.get("type") == "agent_end" for e in pi.events)
                response = await pi.command("prompt", message=prompt)
                assert response.get("success"), response
                if number == 0 and script.queue_when is not None:
                    await pi.wait_for(partial(_seen, script.queue_when))
                    for behavior, text in script.queued:
                        queued = await pi.command("prompt", message=text, streamingBehavior=behavior)
                        assert queued.get("success"), queued
                if number == 0 and script.abort_when is not None:
                    await pi.wait_for(partial(_seen, script.abort_when))
                    await pi.command("abort")
                await pi.wait_for(
                    lambda events, n=count: sum(e.get("type") == "agent_end" for e in events) > n
                )
                await pi.wait_idle()
            stats = (await pi.command("get_session_stats"))["data"]
        finally:
            await pi.close()
        events = [_pi_wire(event) for event in pi.events]
        return Transcript(events, [r.body for r in fake.requests], ws.entries(), stats=stats)


async def run_ours(ws: Workspace, script: Script) -> Transcript:
    """The same conversation through our server's ``pi/prompt``."""
    ws.reset()
    async with _fake(script) as fake:
        write_agent_dir(ws.agent_dir, fake.url, ws.settings)
        options: dict[str, Any] = {"model": MODEL, "approval": "auto"}  # pi never asks
        if ws.tools is not None:
            options["tools"] = ws.tools
        client = await ChatClient.start(ws, fake.url, options=options)
        results = []
        try:
            await client.new_session(ws)
            for number, prompt in enumerate(script.prompts):
                pending = asyncio.ensure_future(client.rpc.request("pi/prompt", {"text": prompt}))
                if number == 0 and script.queue_when is not None:
                    await client.wait_event(script.queue_when)
                    for behavior, text in script.queued:
                        queued = {"text": text, "streamingBehavior": behavior}
                        assert await client.rpc.request("pi/prompt", queued) == {"queued": behavior}
                if number == 0 and script.abort_when is not None:
                    await client.wait_event(script.abort_when)
                    assert await client.rpc.request("pi/abort", {}) == {"aborted": True}
                results.append(await pending)
            stats = await client.rpc.request("pi/getSessionStats", {})
        finally:
            await client.close()
        # pi has no checkpoints: comparisons leave their entries and events out (contract v3)
        entries, dropped = without_checkpoints(ws.entries())
        events = [e for e in client.event_list() if e.get("type") not in CHECKPOINT_EVENTS]
        for result in results:
            if isinstance(result, dict) and "entryIds" in result:
                result["entryIds"] = [i for i in result["entryIds"] if i not in dropped]
        return Transcript(events, [r.body for r in fake.requests], entries, results, stats)


CHECKPOINT_EVENTS = ("checkpoint", "checkpoint_skipped")


def without_checkpoints(entries: Sequence[dict[str, Any]]) -> tuple[list[dict[str, Any]], set[str]]:
    """The entries without ``pi-lsp/checkpoint`` entries, their children re-parented past them, and
    the ids dropped."""
    parent = {e.get("id"): e.get("parentId") for e in entries}
    dropped = {e["id"] for e in entries if e.get("customType") == "pi-lsp/checkpoint"}
    kept = [{**e, "parentId": skip_dropped(e.get("parentId"), parent, dropped)} if "parentId" in e else e
            for e in entries if e.get("id") not in dropped]  # fmt: skip
    return kept, dropped


def skip_dropped(entry_id: str | None, parent: dict[Any, Any], dropped: set[str]) -> str | None:
    """``entry_id``, or its nearest ancestor that was not dropped."""
    while entry_id in dropped:
        entry_id = parent[entry_id]
    return entry_id


def _seen(test: EventTest, events: list[dict[str, Any]]) -> bool:
    return any(test(_pi_wire(event)) for event in events)


def _pi_wire(event: dict[str, Any]) -> dict[str, Any]:
    """pi's RPC event in the contract's ``pi/event`` form (what our server is specified to send)."""
    kind = event.get("type")
    if kind == "message_update":
        update = {k: v for k, v in event["assistantMessageEvent"].items() if k != "partial"}
        return {"type": kind, "assistantMessageEvent": update}
    if kind == "agent_end":
        messages = event.get("messages") or []
        last = next((m for m in reversed(messages) if m.get("role") == "assistant"), {})
        return {"type": kind, "stopReason": last.get("stopReason")}
    return event
