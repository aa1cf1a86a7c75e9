"""The demo's chat step: ``pi/prompt`` against a scripted model on a loopback port.

No key and no network: a tiny HTTP server on 127.0.0.1 answers the Messages API calls with scripted
server-sent events (first a reply that asks for ``read`` and ``bash``, then a final answer), and a
second pi-lsp server is pointed at it with ``ANTHROPIC_BASE_URL``. Everything else is real: the
server's agent loop, the tools, the approval request (answered here, as an editor would), the events
and the session file.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pi_lsp.client.rpc_client import RpcClient

if TYPE_CHECKING:
    from pi_lsp.client.demo import Demo

DEMO_KEY = "demo-key-for-the-loopback-model"  # the scripted model accepts anything
SCRIPT_MODEL = "claude-sonnet-4-5"


def _sse(event: str, data: dict[str, Any]) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data)}\n\n".encode()


def reply(message_id: str, blocks: list[dict[str, Any]], stop_reason: str) -> list[bytes]:
    """The SSE frames of one scripted reply (text and tool_use blocks)."""
    message: dict[str, Any] = {
        "id": message_id,
        "type": "message",
        "role": "assistant",
        "model": SCRIPT_MODEL,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": 900, "output_tokens": 1},
    }
    frames = [_sse("message_start", {"type": "message_start", "message": message})]
    for index, block in enumerate(blocks):
        start: dict[str, Any]
        deltas: list[dict[str, Any]]
        if block["type"] == "text":
            start = {"type": "text", "text": ""}
            deltas = [{"type": "text_delta", "text": word + " "} for word in block["text"].split(" ")]
        else:
            start = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
            deltas = [{"type": "input_json_delta", "partial_json": json.dumps(block["input"])}]
        opening = {"type": "content_block_start", "index": index, "content_block": start}
        frames.append(_sse("content_block_start", opening))
        for delta in deltas:
            frames.append(
                _sse("content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta})
            )
        frames.append(_sse("content_block_stop", {"type": "content_block_stop", "index": index}))
    ending = {"type": "message_delta", "delta": {"stop_reason": stop_reason, "stop_sequence": None},
              "usage": {"output_tokens": 60}}  # fmt: skip
    frames += [_sse("message_delta", ending), _sse("message_stop", {"type": "message_stop"})]
    return frames


SCRIPT = [
    reply(
        "msg_demo_1",
        [
            {"type": "text", "text": "Let me look at the code and run it."},
            {"type": "tool_use", "id": "toolu_demo_read", "name": "read", "input": {"path": "main.py"}},
            {
                "type": "tool_use",
                "id": "toolu_demo_bash",
                "name": "bash",
                "input": {"command": "python3 main.py"},
            },
        ],
        "tool_use",
    ),
    reply(
        "msg_demo_2",
        [{"type": "text", "text": "main.py prints hello, and running it confirms that."}],
        "end_turn",
    ),
]


HEAD = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"


class ScriptedModel:
    """A loopback HTTP server that plays ``script`` (default :data:`SCRIPT`), one reply per request."""

    def __init__(self, script: list[list[bytes]] | None = None) -> None:
        self.script = script or SCRIPT
        self.requests = 0
        self.port = 0
        self._server: asyncio.Server | None = None

    async def start(self) -> str:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return f"http://127.0.0.1:{self.port}"

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), 1)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in head.decode("latin-1").split("\r\n")[1:]:
                    name, _, value = line.partition(":")
                    if name.strip().lower() == "content-length":
                        length = int(value.strip())
                await reader.readexactly(length)
                frames = self.script[min(self.requests, len(self.script) - 1)]
                self.requests += 1
                writer.write(HEAD)
                for frame in frames:
                    writer.write(b"%x\r\n%b\r\n" % (len(frame), frame))
                    await writer.drain()
                    await asyncio.sleep(0.01)  # a visible stream
                writer.write(b"0\r\n\r\n")
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError, ValueError):
            pass
        finally:
            writer.close()


async def start_server(demo: Demo, url: str) -> RpcClient:
    """A second server whose Anthropic endpoint is the scripted model at ``url``."""
    project, sessions = demo.root / "project", demo.root / "sessions"
    env = dict(os.environ, PI_CODING_AGENT_DIR=str(demo.root / "agent"), HOME=str(demo.root / "home"))
    env.update(ANTHROPIC_BASE_URL=url, ANTHROPIC_API_KEY=DEMO_KEY)
    client = await RpcClient.start(env=env, cwd=str(demo.root), quiet=True)
    await client.request(
        "initialize",
        {
            "processId": os.getpid(),
            "rootUri": project.as_uri(),
            "capabilities": {"experimental": {"pi": {"approvals": True}}},
            "initializationOptions": {"pi": {"model": SCRIPT_MODEL, "sessionDir": str(sessions)}},
        },
    )
    client.notify("initialized", {})
    return client


async def chat(demo: Demo) -> None:
    """pi/prompt on a fresh session, with the scripted loopback model standing in for Anthropic."""
    project = demo.root / "project"
    (project / "main.py").write_text("print('hello')\n")
    model = ScriptedModel()
    url = await model.start()
    demo.out(f"scripted model (not Anthropic: canned replies, no key, no network) on {url}")
    client = await start_server(demo, url)
    try:
        state = await client.request("pi/newSession", {"cwd": str(project)})
        demo.out(f'new session {state["sessionId"]}; pi/prompt "What does main.py print?"')
        pending = asyncio.ensure_future(client.request("pi/prompt", {"text": "What does main.py print?"}))
        await show_events(demo, client)
        result = await pending
        written = len(result["entryIds"])
        demo.out(f"pi/prompt answered: stopReason {result['stopReason']}, {written} entries written")
        demo.out(f"chat stored (pi can --continue it) in {Path(state['file'] or '').relative_to(demo.root)}")
    finally:
        await client.close()
        await model.close()


async def show_events(demo: Demo, client: RpcClient) -> None:
    """Print the run's pi/event stream compactly and answer the approval request."""
    text: list[str] = []
    while True:
        try:
            message = await asyncio.wait_for(client.notifications.get(), 30)
        except TimeoutError:
            return
        method = message.get("method")
        if method == "pi/requestApproval":
            params = message["params"]
            demo.out(f"  approval asked for {params['toolName']} `{params['args'].get('command')}` → allow")
            client.send({"jsonrpc": "2.0", "id": message["id"], "result": {"decision": "allow"}})
            continue
        if method != "pi/event":
            continue
        event = message["params"]["event"]
        kind = event["type"]
        if kind == "message_update" and event["assistantMessageEvent"]["type"] == "text_delta":
            text.append(event["assistantMessageEvent"]["delta"])
        elif kind == "message_end" and event["message"]["role"] == "assistant":
            demo.out("  assistant: " + "".join(text).strip())
            text.clear()
        elif kind == "tool_execution_end":
            output = event["result"]["content"][0]["text"].strip().splitlines()
            demo.out(f"  {event['toolName']} → {output[0] if output else ''}")
        elif kind in ("agent_start", "agent_end"):
            demo.out(f"  [{kind}]")
            if kind == "agent_end":
                return
