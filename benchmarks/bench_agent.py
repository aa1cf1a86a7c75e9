"""Agent-run benchmark: our server's ``pi/prompt`` against pi's own ``pi --mode rpc``, same script.

Run: ``.venv/bin/python benchmarks/bench_agent.py [--turns 200] [--deltas 200] [--no-pi]``

A loopback fake Messages API in this process plays the script and notes when it wrote each frame;
the events are read from the agent's output (``pi/event`` notifications for ours, RPC event lines for
pi) and stamped on arrival with the same clock. So the latencies below are what each agent adds
between the model's bytes and the editor: SDK parsing, the loop, persistence, encoding, the pipe.

* **stream**: one reply of ``--deltas`` text deltas, 3 ms apart: time to the first streamed token and
  per delta (arrival − send), p50/p90 over the deltas (first token: over ``--repeat`` prompts);
* **long run**: one prompt whose reply calls ``read`` ``--turns`` times in a row (one tool call per
  model call), then answers: CPU seconds of the agent process per turn, and its RSS after the first
  tenth of the turns and at the end.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pi_lsp.server.rpc_client import RpcClient, server_command  # noqa: E402
from tests.llm.fake_anthropic import Text, ToolUse, assistant_stream  # noqa: E402
from tests.pi.pi_rpc import PiRpc, pi_package_dir, write_agent_dir  # noqa: E402

MODEL = "claude-sonnet-4-5"
KEY = "sk-ant-api03-bench-0000000000000000"
SETTINGS = {"retry": {"provider": {"maxRetries": 0}}, "compaction": {"enabled": False}}


SSE_HEAD = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"


class TimingFake:
    """Serves one script per request (chosen by ``pick``) and records each frame's send time."""

    def __init__(self, pick: Callable[[dict[str, Any], int], tuple[list[str], float]]) -> None:
        self.pick = pick
        self.sent: list[list[float]] = []  # per request: send time of every frame
        self.requests = 0
        self._server: asyncio.Server | None = None
        self.url = ""

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.url = f"http://127.0.0.1:{self._server.sockets[0].getsockname()[1]}"

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = next(
                    int(line.split(b":", 1)[1])
                    for line in head.split(b"\r\n")
                    if line.lower().startswith(b"content-length:")
                )
                body = json.loads(await reader.readexactly(length))
                frames, gap = self.pick(body, self.requests)
                self.requests += 1
                stamps: list[float] = []
                self.sent.append(stamps)
                writer.write(SSE_HEAD)
                for frame in frames:
                    data = frame.encode()
                    writer.write(b"%x\r\n%b\r\n" % (len(data), data))
                    await writer.drain()
                    stamps.append(time.perf_counter())
                    if gap:
                        await asyncio.sleep(gap)
                writer.write(b"0\r\n\r\n")
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()


def text_frames(deltas: int) -> list[str]:
    return assistant_stream(Text("w " * deltas, chunks=deltas), ping=False)


def delta_frame_indexes(frames: list[str]) -> list[int]:
    return [i for i, frame in enumerate(frames) if '"text_delta"' in frame]


# --------------------------------------------------------------------------------------- agents


class Agent:
    """Common face of our server and pi: send a prompt, receive (arrival time, event)."""

    name = ""

    def __init__(self) -> None:
        self.events: asyncio.Queue[tuple[float, dict[str, Any]]] = asyncio.Queue()
        self.pid = 0

    async def prompt(self, text: str) -> None:
        raise NotImplementedError

    async def close(self) -> None:
        raise NotImplementedError

    async def until(self, kind: str, seen: Callable[[float, dict[str, Any]], None] | None = None) -> None:
        while True:
            stamp, event = await asyncio.wait_for(self.events.get(), 600)
            if seen is not None:
                seen(stamp, event)
            if event.get("type") == kind:
                return


class Ours(Agent):
    name = "pi-lsp"

    @classmethod
    async def start(cls, root: Path, url: str) -> Ours:
        self = cls()
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PI_", "ANTHROPIC_"))}
        env.update(PI_CODING_AGENT_DIR=str(root / "agent"), ANTHROPIC_API_KEY=KEY, ANTHROPIC_BASE_URL=url)
        self.rpc = await RpcClient.start(server_command(), env=env, quiet=True)
        self.pid = self.rpc.process.pid
        options = {"pi": {"model": MODEL, "approval": "auto", "tools": ["read"]}}
        await self.rpc.request("initialize", {"processId": os.getpid(), "capabilities": {},
                                              "initializationOptions": options})  # fmt: skip
        self.rpc.notify("initialized", {})
        await self.rpc.request(
            "pi/newSession", {"cwd": str(root / "project"), "sessionDir": str(root / "s1")}
        )
        self._pump = asyncio.ensure_future(self._read())
        return self

    async def _read(self) -> None:
        while True:
            message = await self.rpc.notifications.get()
            if message.get("method") == "pi/event":
                self.events.put_nowait((time.perf_counter(), message["params"]["event"]))

    async def prompt(self, text: str) -> None:
        self._pending = asyncio.ensure_future(self.rpc.request("pi/prompt", {"text": text}, timeout=3600))

    async def close(self) -> None:
        self._pump.cancel()
        await self.rpc.close()


class Pi(Agent):
    name = "pi"

    @classmethod
    async def start(cls, root: Path, url: str) -> Pi:
        self = cls()
        self.pi = await PiRpc.start(root / "project", root / "agent", root / "s2", MODEL, tools=["read"])
        self.pid = self.pi.process.pid
        self._seen = 0
        self._pump = asyncio.ensure_future(self._read())
        return self

    async def _read(self) -> None:
        while True:
            while self._seen < len(self.pi.events):
                event = self.pi.events[self._seen]
                self._seen += 1
                self.events.put_nowait((time.perf_counter(), event))
            await asyncio.sleep(0)  # PiRpc stamps nothing itself: poll its list right away

    async def prompt(self, text: str) -> None:
        await self.pi.command("prompt", message=text)

    async def close(self) -> None:
        self._pump.cancel()
        await self.pi.close()


# --------------------------------------------------------------------------------------- measures


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _note_delta(arrivals: list[float], stamp: float, event: dict[str, Any]) -> None:
    update = event.get("assistantMessageEvent") or {}
    if event.get("type") == "message_update" and update.get("type") == "text_delta":
        arrivals.append(stamp)


async def bench_stream(agent_cls: Any, root: Path, deltas: int, repeat: int) -> dict[str, float]:
    frames = text_frames(deltas)
    indexes = delta_frame_indexes(frames)
    fake = TimingFake(lambda body, n: (frames, 0.003))
    await fake.start()
    write_agent_dir(root / "agent", fake.url, SETTINGS)
    agent = await agent_cls.start(root, fake.url)
    firsts: list[float] = []
    per_delta: list[float] = []
    try:
        for _ in range(repeat + 1):  # the first prompt warms up (SDK import, connections)
            arrivals: list[float] = []
            seen = partial(_note_delta, arrivals)

            before = len(fake.sent)
            await agent.prompt("stream")
            await agent.until("agent_end", seen)
            sent = [fake.sent[before][i] for i in indexes]
            if len(arrivals) != len(sent):
                raise RuntimeError(f"{agent.name}: {len(arrivals)} deltas arrived, {len(sent)} sent")
            if before == 0:
                continue
            firsts.append((arrivals[0] - sent[0]) * 1000)
            per_delta += [(a - s) * 1000 for a, s in zip(arrivals[1:], sent[1:], strict=True)]
    finally:
        await agent.close()
        await fake.close()
    return {
        "first_p50": statistics.median(firsts),
        "first_max": max(firsts),
        "delta_p50": statistics.median(per_delta),
        "delta_p90": pct(per_delta, 0.9),
    }


async def bench_long_run(agent_cls: Any, root: Path, turns: int) -> dict[str, float]:
    def pick(body: dict[str, Any], number: int) -> tuple[list[str], float]:
        if number < turns:
            call = ToolUse(f"toolu_{number:04d}", "read", {"path": "hello.txt"})
            return assistant_stream(Text(f"Step {number}."), call, message_id=f"msg_{number}"), 0.0
        return assistant_stream(Text("All steps done."), message_id="msg_end"), 0.0

    fake = TimingFake(pick)
    await fake.start()
    write_agent_dir(root / "agent", fake.url, SETTINGS)
    agent = await agent_cls.start(root, fake.url)
    marks: dict[str, float] = {}
    tenth = max(1, turns // 10)
    ends = 0

    def seen(stamp: float, event: dict[str, Any]) -> None:
        nonlocal ends
        if event.get("type") == "turn_end":
            ends += 1
            if ends == tenth:
                marks["cpu_tenth"] = cpu_seconds(agent.pid)
                marks["rss_tenth"] = rss_mb(agent.pid)
                marks["wall_tenth"] = time.perf_counter()

    try:
        cpu_start = cpu_seconds(agent.pid)
        wall = time.perf_counter()
        await agent.prompt("Do all the steps.")
        await agent.until("agent_end", seen)
        cpu_end, rss_end = cpu_seconds(agent.pid), rss_mb(agent.pid)
        wall = time.perf_counter() - wall
    finally:
        await agent.close()
        await fake.close()
    rest = turns + 1 - tenth
    return {
        "cpu_ms_per_turn": (cpu_end - cpu_start) * 1000 / (turns + 1),
        "cpu_ms_per_turn_late": (cpu_end - marks["cpu_tenth"]) * 1000 / rest,
        "rss_tenth": marks["rss_tenth"],
        "rss_end": rss_end,
        "wall_s": wall,
        "requests": fake.requests,
    }


async def main_async(args: argparse.Namespace) -> dict[str, Any]:
    results: dict[str, Any] = {}
    agents: list[Any] = [Ours] if args.no_pi else [Ours, Pi]
    for agent_cls in agents:
        root = Path(tempfile.mkdtemp(prefix="bench-agent-"))
        try:
            (root / "project").mkdir()
            (root / "project" / "hello.txt").write_text("line one\nline two\n")
            stream = await bench_stream(agent_cls, root, args.deltas, args.repeat)
            run = await bench_long_run(agent_cls, root, args.turns)
        finally:
            shutil.rmtree(root, ignore_errors=True)
        results[agent_cls.name] = {"stream": stream, "run": run}
        print(agent_cls.name, json.dumps(results[agent_cls.name], indent=1), flush=True)
    return results


def report(results: dict[str, Any], args: argparse.Namespace) -> str:
    command = f"python benchmarks/bench_agent.py --turns {args.turns} --deltas {args.deltas}"
    lines = [
        f"`{command} --repeat {args.repeat}`",
        "",
        "| measure | pi-lsp | pi | pi-lsp / pi |",
        "|---|---:|---:|---:|",
    ]
    rows = [
        ("first streamed token, p50 ms (added)", "stream", "first_p50"),
        ("first streamed token, max ms", "stream", "first_max"),
        ("per delta, p50 ms (added)", "stream", "delta_p50"),
        ("per delta, p90 ms", "stream", "delta_p90"),
        (f"CPU per turn, ms ({args.turns} turns)", "run", "cpu_ms_per_turn"),
        ("CPU per turn after the first tenth, ms", "run", "cpu_ms_per_turn_late"),
        ("RSS after the first tenth, MB", "run", "rss_tenth"),
        ("RSS at the end, MB", "run", "rss_end"),
        ("wall time of the run, s", "run", "wall_s"),
    ]
    ours, theirs = results.get("pi-lsp", {}), results.get("pi", {})
    for label, part, key in rows:
        a = ours.get(part, {}).get(key)
        b = theirs.get(part, {}).get(key)
        ratio = f"{a / b:.2f}" if a is not None and b else "–"
        lines.append(
            f"| {label} | {a:.2f} | {b:.2f} | {ratio} |"
            if b is not None
            else f"| {label} | {a:.2f} | – | – |"
        )
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=200)
    parser.add_argument("--deltas", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--no-pi", action="store_true", help="measure our server only")
    args = parser.parse_args()
    if not args.no_pi and not (pi_package_dir() / "dist" / "cli.js").exists():
        print("pi is not installed (make oracle); use --no-pi", file=sys.stderr)
        return 1
    results = asyncio.run(main_async(args))
    print()
    print(report(results, args))
    return 0


if __name__ == "__main__":
    sys.exit(main())
