"""Agent-run benchmark: our server's ``pi/prompt`` against pi's own ``pi --mode rpc``, same script.

Run: ``.venv/bin/python benchmarks/bench_agent.py [--turns 200] [--deltas 200] [--no-pi] [--rounds 3]``
(``--smoke``: tiny sizes, a few seconds; ``tests/agent/test_bench_agent.py`` runs it so it keeps working)

A loopback fake Messages API in this process plays the script and notes when it wrote each frame;
the events are read from the agent's output (``pi/event`` notifications for ours, RPC event lines for
pi) and stamped on arrival with the same clock. So the latencies below are what each agent adds
between the model's bytes and the editor: SDK parsing, the loop, persistence, encoding, the pipe.

* **stream**: one reply of ``--deltas`` text deltas, 3 ms apart: time to the first streamed token and
  per delta (arrival − send), p50/p90 over the deltas (first token: over ``--repeat`` prompts);
* **long run**: one prompt whose reply calls ``read`` ``--turns`` times in a row (one tool call per
  model call), then answers: CPU seconds of the agent process per turn, and its RSS after the first
  tenth of the turns and at the end;
* **mix** (closer to real use): ``--prompts`` prompts in one session; every third makes the model read
  a ``--file-kb`` KB file first, every reply is ``--reply-chars`` characters in ``--reply-deltas``
  deltas (``--gap-ms`` apart): CPU seconds of the agent process and wall time for the whole mix.
  ``--rounds`` alternates ours and pi (order swapped every round) so that the ratios of a round are
  measured under the same load (the load average is printed with each round).
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

from pi_lsp.client.rpc_client import RpcClient, server_command  # noqa: E402
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

    async def idle(self) -> None:
        """Until the prompt's run has really finished (its persistence included)."""

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
    checkout: Path | None = None  # the server of another checkout (``--baseline``), else this one

    @classmethod
    async def start(cls, root: Path, url: str) -> Ours:
        self = cls()
        # PI_ settings left out: the server as it ships (the warm-up on, service/warm_up.py)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PI_", "ANTHROPIC_"))}
        env.update(PI_CODING_AGENT_DIR=str(root / "agent"), ANTHROPIC_API_KEY=KEY, ANTHROPIC_BASE_URL=url)
        cwd = None
        if self.checkout is not None:
            env["PYTHONPATH"] = str(self.checkout)
            cwd = str(self.checkout)  # ``-m pi_lsp`` imports from the working directory first
        self.rpc = await RpcClient.start(server_command(), env=env, cwd=cwd, quiet=True)
        self._pending: asyncio.Future[Any] | None = None
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
        if self._pending is not None:  # a run ends a moment after its agent_end: one at a time
            await self._pending
        self._pending = asyncio.ensure_future(self.rpc.request("pi/prompt", {"text": text}, timeout=3600))

    async def idle(self) -> None:
        await self._pending

    async def close(self) -> None:
        self._pump.cancel()
        await self.rpc.close()


class Before(Ours):
    """Our server at another version (``--baseline DIR``, a checkout), measured in the same rounds."""

    name = "before"


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

    async def idle(self) -> None:
        await self.pi.wait_idle(600)

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
    cpu_per_delta: list[float] = []
    try:
        for _ in range(repeat + 1):  # the first prompt warms up (SDK import, connections)
            arrivals: list[float] = []
            seen = partial(_note_delta, arrivals)

            before = len(fake.sent)
            cpu_start = cpu_seconds(agent.pid)
            await agent.prompt("stream")
            await agent.until("agent_end", seen)
            cpu = cpu_seconds(agent.pid) - cpu_start
            sent = [fake.sent[before][i] for i in indexes]
            if len(arrivals) != len(sent):
                raise RuntimeError(f"{agent.name}: {len(arrivals)} deltas arrived, {len(sent)} sent")
            if before == 0:
                continue
            cpu_per_delta.append(cpu * 1e6 / len(sent))
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
        # The whole prompt's CPU (the loop, persistence, the reply's entry) over its deltas.
        "cpu_us_per_delta": statistics.median(cpu_per_delta),
    }


async def bench_first_prompt(agent_cls: Any, root: Path, typing: float, starts: int) -> dict[str, float]:
    """A user's first prompt to a fresh agent, sent ``typing`` seconds after it is ready (the time
    it takes to type it): wait for its first token, and CPU of the process from its start to the
    reply's end (start-up included), the medians of ``starts`` fresh processes."""
    frames = text_frames(20)
    latencies: list[float] = []
    cpu_prompt: list[float] = []
    cpu_total: list[float] = []
    for _ in range(starts):
        fake = TimingFake(lambda body, n: (frames, 0.0))
        await fake.start()
        write_agent_dir(root / "agent", fake.url, SETTINGS)
        agent = await agent_cls.start(root, fake.url)
        arrivals: list[float] = []
        try:
            await asyncio.sleep(typing)
            cpu_start = cpu_seconds(agent.pid)
            sent = time.perf_counter()
            await agent.prompt("stream")
            await agent.until("agent_end", partial(_note_delta, arrivals))
            cpu_end = cpu_seconds(agent.pid)
        finally:
            await agent.close()
            await fake.close()
        latencies.append((arrivals[0] - sent) * 1000)
        cpu_prompt.append((cpu_end - cpu_start) * 1000)
        cpu_total.append(cpu_end)
    return {
        "first_token_ms": statistics.median(latencies),
        "cpu_ms": statistics.median(cpu_prompt),
        "cpu_total_s": statistics.median(cpu_total),
    }


async def bench_long_run(agent_cls: Any, root: Path, turns: int, typing: float = 0.0) -> dict[str, float]:
    def pick(body: dict[str, Any], number: int) -> tuple[list[str], float]:
        if number < turns:
            call = ToolUse(f"toolu_{number:04d}", "read", {"path": "hello.txt"})
            return assistant_stream(Text(f"Step {number}."), call, message_id=f"msg_{number}"), 0.0
        return assistant_stream(Text("All steps done."), message_id="msg_end"), 0.0

    fake = TimingFake(pick)
    await fake.start()
    write_agent_dir(root / "agent", fake.url, SETTINGS)
    agent = await agent_cls.start(root, fake.url)
    await asyncio.sleep(typing)  # the user types the prompt
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
        "cpu_s_with_start": cpu_end,
        "cpu_ms_per_turn_late": (cpu_end - marks["cpu_tenth"]) * 1000 / rest,
        "rss_tenth": marks["rss_tenth"],
        "rss_end": rss_end,
        "wall_s": wall,
        "requests": fake.requests,
    }


MIX_FILE = "notes.txt"


def mix_file_text(size_kb: int) -> str:
    """A text file of about ``size_kb`` KB: numbered lines of prose, as a source file reads."""
    line = "the quick brown fox jumps over the lazy dog, then checks the result twice\n"
    count = max(1, size_kb * 1024 // (len(line) + 6))
    return "".join(f"{n:4d}: {line}" for n in range(count))


def reply_text(chars: int, number: int) -> str:
    words = f"Reply {number}: " + "a considered sentence about the code in question. " * (chars // 40 + 1)
    return words[:chars]


def _last_prompt_number(body: dict[str, Any]) -> tuple[int, bool]:
    """(number of the prompt this request answers, whether it follows a tool result)."""
    last = body["messages"][-1]
    content = last["content"]
    blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
    if any(block.get("type") == "tool_result" for block in blocks):
        previous = body["messages"][-3]["content"]
        text = previous if isinstance(previous, str) else previous[-1]["text"]
        return int(text.split()[-1]), True
    return int(blocks[-1]["text"].split()[-1]), False


async def bench_mix(agent_cls: Any, root: Path, args: argparse.Namespace) -> dict[str, float]:
    """``--prompts`` prompts in one session, every third reading the file first (see the top)."""

    def pick(body: dict[str, Any], request: int) -> tuple[list[str], float]:
        if request == 0:  # the warm-up prompt
            return assistant_stream(Text("Ready."), message_id="msg_warm"), 0.0
        number, after_tool = _last_prompt_number(body)
        if number % 3 == 0 and not after_tool:
            call = ToolUse(f"toolu_{number:04d}", "read", {"path": MIX_FILE})
            return assistant_stream(Text("Let me look."), call, message_id=f"msg_r{number}"), 0.0
        text = Text(reply_text(args.reply_chars, number), chunks=args.reply_deltas)
        return assistant_stream(text, message_id=f"msg_{number}", ping=False), args.gap_ms / 1000

    fake = TimingFake(pick)
    await fake.start()
    write_agent_dir(root / "agent", fake.url, SETTINGS)
    agent = await agent_cls.start(root, fake.url)
    try:
        await agent.prompt("Warm up")  # imports (the SDK, the tools) are not what is measured
        await agent.until("agent_end")
        await agent.idle()
        cpu_start, wall = cpu_seconds(agent.pid), time.perf_counter()
        for number in range(args.prompts):
            await agent.prompt(f"Tell me about prompt {number}")
            await agent.until("agent_end")
            await agent.idle()
        cpu = cpu_seconds(agent.pid) - cpu_start
        wall = time.perf_counter() - wall
        rss = rss_mb(agent.pid)
    finally:
        await agent.close()
        await fake.close()
    expected = 1 + args.prompts + (args.prompts + 2) // 3
    if fake.requests != expected:
        raise RuntimeError(f"{agent_cls.name}: {fake.requests} model calls, {expected} expected")
    return {"cpu_s": cpu, "cpu_ms_per_prompt": cpu * 1000 / args.prompts, "wall_s": wall, "rss_end": rss}


def _fresh_root(args: argparse.Namespace) -> Path:
    root = Path(tempfile.mkdtemp(prefix="bench-agent-"))
    (root / "project").mkdir()
    (root / "project" / "hello.txt").write_text("line one\nline two\n")
    (root / "project" / MIX_FILE).write_text(mix_file_text(args.file_kb))
    return root


def load_average() -> str:
    return Path("/proc/loadavg").read_text().split(" ", 3)[0] if Path("/proc/loadavg").exists() else "?"


async def main_async(args: argparse.Namespace) -> dict[str, Any]:
    results: dict[str, Any] = {}
    agents: list[Any] = [Ours] if args.no_pi else [Ours, Pi]
    if args.baseline is not None:
        Before.checkout = args.baseline.resolve()
        agents.insert(1, Before)
    if not args.mix_only:
        for agent_cls in agents:
            root = _fresh_root(args)
            try:
                first = await bench_first_prompt(agent_cls, root, args.typing, args.starts)
                stream = await bench_stream(agent_cls, root, args.deltas, args.repeat)
                run = await bench_long_run(agent_cls, root, args.turns, args.typing)
            finally:
                shutil.rmtree(root, ignore_errors=True)
            results[agent_cls.name] = {"first": first, "stream": stream, "run": run}
            print(agent_cls.name, json.dumps(results[agent_cls.name], indent=1), flush=True)
    rounds: list[dict[str, Any]] = []
    for number in range(args.rounds):
        order = agents if number % 2 == 0 else agents[::-1]
        measured: dict[str, Any] = {"load": load_average()}
        for agent_cls in order:
            root = _fresh_root(args)
            try:
                measured[agent_cls.name] = await bench_mix(agent_cls, root, args)
            finally:
                shutil.rmtree(root, ignore_errors=True)
        rounds.append(measured)
        print("mix round", number + 1, json.dumps(measured), flush=True)
    results["mix"] = rounds
    return results


def report(results: dict[str, Any], args: argparse.Namespace) -> str:
    lines: list[str] = []
    ours, theirs = results.get("pi-lsp", {}), results.get("pi", {})
    if ours:
        command = f"python benchmarks/bench_agent.py --turns {args.turns} --deltas {args.deltas}"
        lines += [
            f"`{command} --repeat {args.repeat} --typing {args.typing:g} --starts {args.starts}`",
            "",
            "| measure | pi-lsp | pi | pi-lsp / pi |",
            "|---|---:|---:|---:|",
        ]
        rows = [
            (
                f"fresh agent, first prompt {args.typing:g} s after start: first token, ms",
                "first",
                "first_token_ms",
            ),
            ("fresh agent, first prompt: CPU from the prompt to its end, ms", "first", "cpu_ms"),
            ("fresh agent: CPU from process start to the first reply's end, s", "first", "cpu_total_s"),
            ("first streamed token, p50 ms (added)", "stream", "first_p50"),
            ("first streamed token, max ms", "stream", "first_max"),
            ("per delta, p50 ms (added)", "stream", "delta_p50"),
            ("per delta, p90 ms", "stream", "delta_p90"),
            (f"CPU per streamed delta ({args.deltas}-delta prompts), µs", "stream", "cpu_us_per_delta"),
            (f"CPU per turn, ms ({args.turns} turns)", "run", "cpu_ms_per_turn"),
            ("CPU per turn after the first tenth, ms", "run", "cpu_ms_per_turn_late"),
            ("RSS after the first tenth, MB", "run", "rss_tenth"),
            ("RSS at the end, MB", "run", "rss_end"),
            ("wall time of the run, s", "run", "wall_s"),
            ("CPU from process start to the run's end, s", "run", "cpu_s_with_start"),
        ]
        for label, part, key in rows:
            a = ours.get(part, {}).get(key)
            b = theirs.get(part, {}).get(key)
            lines.append(_row(label, a, b))
    rounds = results.get("mix", [])
    if rounds:
        lines += [
            "",
            f"mix: {args.prompts} prompts, every third reads {args.file_kb} KB, replies of"
            f" {args.reply_chars} characters in {args.reply_deltas} deltas {args.gap_ms:g} ms apart",
            "",
            "| round (load) | measure | pi-lsp | pi | pi-lsp / pi |",
            "|---|---|---:|---:|---:|",
        ]
        for number, measured in enumerate(rounds, 1):
            for label, key in (("CPU, s", "cpu_s"), ("wall, s", "wall_s"), ("RSS at the end, MB", "rss_end")):
                a = measured.get("pi-lsp", {}).get(key)
                b = measured.get("pi", {}).get(key)
                lines.append(f"| {number} ({measured['load']}) " + _row(label, a, b))
                if "before" in measured:
                    before = measured["before"].get(key)
                    lines.append(f"| {number} ({measured['load']}) " + _row(f"{label}, before", before, b))
    return "\n".join(lines)


def _row(label: str, ours: float | None, theirs: float | None) -> str:
    a = f"{ours:.2f}" if ours is not None else "–"
    b = f"{theirs:.2f}" if theirs is not None else "–"
    ratio = f"{ours / theirs:.2f}" if ours is not None and theirs else "–"
    return f"| {label} | {a} | {b} | {ratio} |"


SMOKE = {"turns": 3, "deltas": 5, "repeat": 1, "typing": 0.0, "starts": 1, "prompts": 4, "file_kb": 2,
         "reply_chars": 150, "reply_deltas": 6, "gap_ms": 0.0, "rounds": 1}  # fmt: skip
"""``--smoke``: every scenario at tiny sizes, a few seconds (it checks that the benchmark works)."""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=200)
    parser.add_argument("--deltas", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument(
        "--typing",
        type=float,
        default=3.0,
        help="seconds between a fresh agent's start and its first prompt (a user typing it)",
    )
    parser.add_argument("--starts", type=int, default=3, help="fresh agents for the first-prompt rows")
    parser.add_argument("--prompts", type=int, default=60, help="mix: prompts in the session")
    parser.add_argument("--file-kb", type=int, default=20, help="mix: size of the file every third reads")
    parser.add_argument("--reply-chars", type=int, default=1500, help="mix: characters per reply")
    parser.add_argument("--reply-deltas", type=int, default=60, help="mix: deltas per reply")
    parser.add_argument("--gap-ms", type=float, default=1.0, help="mix: time between a reply's deltas")
    parser.add_argument("--rounds", type=int, default=1, help="mix: alternating rounds (0: no mix)")
    parser.add_argument("--mix-only", action="store_true", help="only the mix (no stream, no long run)")
    parser.add_argument("--no-pi", action="store_true", help="measure our server only")
    parser.add_argument("--baseline", type=Path, help="a checkout of another version, measured alongside")
    parser.add_argument("--smoke", action="store_true", help="tiny sizes, a few seconds")
    args = parser.parse_args()
    if args.smoke:
        for name, value in SMOKE.items():
            setattr(args, name, value)
    if not args.no_pi and not (pi_package_dir() / "dist" / "cli.js").exists():
        print("pi is not installed (make oracle); use --no-pi", file=sys.stderr)
        return 1
    print(f"load average before: {load_average()}", flush=True)
    results = asyncio.run(main_async(args))
    print()
    print(report(results, args))
    return 0


if __name__ == "__main__":
    sys.exit(main())
