"""ACP benchmark: what ``pi-lsp acp`` adds over the language server's ``pi/prompt``, same script.

Run: ``.venv/bin/python benchmarks/bench_acp.py [--deltas 400] [--repeat 3]``
(``--smoke``: tiny sizes, a few seconds; ``tests/test_benchmarks_smoke.py`` runs it so it keeps working)

The loopback fake Messages API of ``bench_agent.py`` plays the script in this process and notes when
it wrote each frame; the agent's messages are stamped on arrival with the same clock. Both doors run
the same services, so the difference between the two columns is the ACP layer (translation to
``session/update``, its framing and its outbox):

* **stream**: one reply of ``--deltas`` text deltas, 3 ms apart: per delta, arrival − send, of
  ``pi/event`` ``message_update`` (LSP) and ``agent_message_chunk`` (ACP), p50/p90; the first
  delta's latency (median over ``--repeat`` prompts after a warm-up);
* **write**: one ``write`` call whose ~210 KB ``content`` arrives in 4000 ``input_json_delta``s
  (``bench_llm_stream.py``'s tool case) and is written: wall ms from the first frame sent to the
  tool's end (``tool_execution_end`` / ``tool_call_update`` completed) and agent CPU ms per prompt.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.bench_agent import KEY, MODEL, TimingFake, cpu_seconds, pct  # noqa: E402
from pi_lsp.client.rpc_client import RpcClient, server_command  # noqa: E402
from tests.llm.fake_anthropic import Text, ToolUse, assistant_stream  # noqa: E402
from tests.pi.pi_rpc import write_agent_dir  # noqa: E402

SETTINGS = {"retry": {"provider": {"maxRetries": 0}}, "compaction": {"enabled": False},
            "model": MODEL, "approval": "auto", "tools": ["read", "write"]}  # fmt: skip
Event = tuple[float, str, dict[str, Any]]  # arrival, "delta" | "tool_end" | "end", payload


def _env(root: Path, url: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PI_", "ANTHROPIC_"))}
    env.update(PI_CODING_AGENT_DIR=str(root / "agent"), ANTHROPIC_API_KEY=KEY, ANTHROPIC_BASE_URL=url)
    return env


class Lsp:
    """The language server: ``pi/prompt``, events from ``pi/event``."""

    name = "LSP pi/prompt"

    def __init__(self) -> None:
        self.events: asyncio.Queue[Event] = asyncio.Queue()

    async def start(self, root: Path, url: str) -> None:
        self.rpc = await RpcClient.start(server_command(), env=_env(root, url), quiet=True)
        self.pid = self.rpc.process.pid
        await self.rpc.request("initialize", {"processId": os.getpid(), "capabilities": {}})
        self.rpc.notify("initialized", {})
        await self.rpc.request("pi/newSession", {"cwd": str(root / "project")})
        self._pump = asyncio.ensure_future(self._read())

    async def _read(self) -> None:
        while True:
            message = await self.rpc.notifications.get()
            stamp = time.perf_counter()
            if message.get("method") != "pi/event":
                continue
            event = message["params"]["event"]
            if (
                event.get("type") == "message_update"
                and event["assistantMessageEvent"].get("type") == "text_delta"
            ):
                self.events.put_nowait((stamp, "delta", event))
            elif event.get("type") == "tool_execution_end":
                self.events.put_nowait((stamp, "tool_end", event))

    async def prompt(self, text: str) -> None:
        await self.rpc.request("pi/prompt", {"text": text}, timeout=600)
        self.events.put_nowait((time.perf_counter(), "end", {}))

    async def close(self) -> None:
        self._pump.cancel()
        await self.rpc.close()


class Acp:
    """``pi-lsp acp``: ``session/prompt``, updates from ``session/update``."""

    name = "ACP session/prompt"

    def __init__(self) -> None:
        self.events: asyncio.Queue[Event] = asyncio.Queue()
        self.answers: dict[int, asyncio.Future[Any]] = {}
        self.ids = 0

    async def start(self, root: Path, url: str) -> None:
        self.process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "pi_lsp", "acp", cwd=str(ROOT), env=_env(root, url), limit=1 << 26,
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL,
        )  # fmt: skip
        self.pid = self.process.pid
        self._pump = asyncio.ensure_future(self._read())
        await self.request("initialize", {"protocolVersion": 1})
        created = await self.request("session/new", {"cwd": str(root / "project"), "mcpServers": []})
        self.session_id = created["sessionId"]

    async def request(self, method: str, params: dict[str, Any]) -> Any:
        self.ids += 1
        future = self.answers[self.ids] = asyncio.get_running_loop().create_future()
        assert self.process.stdin is not None
        line = {"jsonrpc": "2.0", "id": self.ids, "method": method, "params": params}
        self.process.stdin.write(json.dumps(line).encode() + b"\n")
        return await asyncio.wait_for(future, 600)

    async def _read(self) -> None:
        assert self.process.stdout is not None
        while line := await self.process.stdout.readline():
            stamp = time.perf_counter()
            message = json.loads(line)
            if "id" in message and "method" not in message:
                self.answers.pop(message["id"]).set_result(message.get("result", message.get("error")))
                continue
            update = (message.get("params") or {}).get("update") or {}
            if update.get("sessionUpdate") == "agent_message_chunk":
                self.events.put_nowait((stamp, "delta", update))
            elif update.get("sessionUpdate") == "tool_call_update" and update.get("status") == "completed":
                self.events.put_nowait((stamp, "tool_end", update))

    async def prompt(self, text: str) -> None:
        await self.request(
            "session/prompt", {"sessionId": self.session_id, "prompt": [{"type": "text", "text": text}]}
        )
        self.events.put_nowait((time.perf_counter(), "end", {}))

    async def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        await asyncio.wait_for(self.process.wait(), 30)
        self._pump.cancel()


async def _run_prompt(agent: Any, text: str) -> list[Event]:
    """One prompt; the events that arrived for it, through its end."""
    task = asyncio.ensure_future(agent.prompt(text))
    seen: list[Event] = []
    while True:
        event = await asyncio.wait_for(agent.events.get(), 600)
        seen.append(event)
        if event[1] == "end":
            await task
            return seen


async def bench(agent_cls: Any, root: Path, deltas: int, repeat: int, scale: int) -> dict[str, float]:
    text_frames = assistant_stream(Text("w " * deltas, chunks=deltas), ping=False)
    delta_indexes = [i for i, frame in enumerate(text_frames) if '"text_delta"' in frame]
    content = "print('hello world')\n" * (10000 // scale)
    write_frames = assistant_stream(ToolUse("toolu_w", "write", {"path": "out.py", "content": content},
                                            chunks=4000 // scale), ping=False)  # fmt: skip
    done_frames = assistant_stream(Text("ok"), ping=False)

    def pick(body: dict[str, Any], number: int) -> tuple[list[str], float]:
        last = body["messages"][-1]
        first = last["content"][0] if isinstance(last["content"], list) else {}
        if last["role"] == "user" and first.get("type") == "tool_result":
            return done_frames, 0.0
        text = json.dumps(last)
        return (write_frames, 0.0) if "write it" in text else (text_frames, 0.003)

    fake = TimingFake(pick)
    await fake.start()
    write_agent_dir(root / "agent", fake.url, SETTINGS)
    (root / "project").mkdir(parents=True, exist_ok=True)
    agent = agent_cls()
    await agent.start(root, fake.url)
    firsts: list[float] = []
    per_delta: list[float] = []
    write_ms: list[float] = []
    write_cpu: list[float] = []
    try:
        for number in range(repeat + 1):  # the first round warms up
            before = len(fake.sent)
            arrivals = [stamp for stamp, kind, _ in await _run_prompt(agent, "stream") if kind == "delta"]
            sent = [fake.sent[before][i] for i in delta_indexes]
            if len(arrivals) != len(sent):
                raise RuntimeError(f"{agent.name}: {len(arrivals)} deltas arrived, {len(sent)} sent")
            cpu = cpu_seconds(agent.pid)
            before = len(fake.sent)
            events = await _run_prompt(agent, "write it")
            cpu = cpu_seconds(agent.pid) - cpu
            ended = [stamp for stamp, kind, _ in events if kind == "tool_end"]
            if number == 0:
                continue
            firsts.append((arrivals[0] - sent[0]) * 1000)
            per_delta += [(a - s) * 1000 for a, s in zip(arrivals[1:], sent[1:], strict=True)]
            write_ms.append((ended[0] - fake.sent[before][0]) * 1000)
            write_cpu.append(cpu * 1000)
    finally:
        await agent.close()
        await fake.close()
    return {
        "first_p50": statistics.median(firsts),
        "delta_p50": statistics.median(per_delta),
        "delta_p90": pct(per_delta, 0.9),
        "write_ms": statistics.median(write_ms),
        "write_cpu_ms": statistics.median(write_cpu),
    }


def report(results: dict[str, dict[str, float]], args: argparse.Namespace) -> str:
    lsp, acp = results["lsp"], results["acp"]
    rows = [
        ("first text delta, ms (p50)", "first_p50"),
        (f"per text delta, ms (p50 of {args.deltas})", "delta_p50"),
        ("per text delta, ms (p90)", "delta_p90"),
        ("210 KB write: first frame → tool end, ms", "write_ms"),
        ("210 KB write prompt: agent CPU ms", "write_cpu_ms"),
    ]
    header = "| measure | LSP `pi/prompt` | ACP `session/prompt` | ACP − LSP |"
    lines = [f"load average: {os.getloadavg()[0]:.2f}", "", header, "|---|---|---|---|"]
    for label, key in rows:
        lines.append(f"| {label} | {lsp[key]:.2f} | {acp[key]:.2f} | {acp[key] - lsp[key]:+.2f} |")
    return "\n".join(lines)


async def main_async(args: argparse.Namespace) -> dict[str, dict[str, float]]:
    results: dict[str, dict[str, float]] = {}
    for key, agent_cls in (("lsp", Lsp), ("acp", Acp)):
        root = Path(tempfile.mkdtemp(prefix=f"pi-lsp-bench-acp-{key}-"))
        results[key] = await bench(agent_cls, root, args.deltas, args.repeat, args.scale)
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--deltas", type=int, default=400)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--smoke", action="store_true", help="tiny sizes, a few seconds")
    args = parser.parse_args()
    args.scale = 1
    if args.smoke:
        args.deltas, args.repeat, args.scale = 20, 1, 20
    print(report(asyncio.run(main_async(args)), args))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
