"""Concurrency benchmark: how long another client waits while many sessions stream at once.

One real server process (``--tcp``), a loopback fake Messages API in this process that streams
``--deltas`` text deltas per reply (``--gap`` seconds apart), and two connections: the first opens
``--sessions`` sessions and runs a ``pi/prompt`` on each, all at once (each streams its deltas as
``pi/event`` notifications to that connection); the second connection, another editor, sends
``pi/getRunState`` on one of those sessions back to back meanwhile and times each round trip.
The p50/p99/max of those round trips is how long the event loop was busy with the streams
(encoding and fanning out notifications, appending messages, per-delta work). Goal: p99 < 100 ms.

Run: ``.venv/bin/python benchmarks/bench_concurrency.py [--sessions 50] [--deltas 400]``;
``--smoke`` runs tiny sizes in a few seconds (``tests/benchmarks/test_bench_smoke.py`` runs it, so
the benchmark cannot rot).
"""

from __future__ import annotations

import argparse
import asyncio
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_agent import KEY, MODEL, TimingFake, text_frames  # noqa: E402

from pi_lsp.client.rpc_client import RpcClient  # noqa: E402
from tests.server.network_support import start_network_server  # noqa: E402


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def run(sessions: int, deltas: int, gap: float) -> dict[str, Any]:
    """Stream ``sessions`` prompts at once; time another connection's ``pi/getRunState`` meanwhile."""
    frames = text_frames(deltas)
    fake = TimingFake(lambda body, number: (frames, gap))
    await fake.start()
    with tempfile.TemporaryDirectory(prefix="pi-lsp-bench-concurrency-") as folder:
        root = Path(folder)
        (root / "project").mkdir()
        server = await start_network_server(
            root, "--tcp", HOME=str(root / "home"), ANTHROPIC_API_KEY=KEY, ANTHROPIC_BASE_URL=fake.url
        )
        options = {"pi": {"model": MODEL, "approval": "auto", "tools": ["read"],
                          "sessionDir": str(root / "sessions")}}  # fmt: skip
        streams = await RpcClient.connect(server.host, server.port, server.token)
        other = await RpcClient.connect(server.host, server.port, server.token)
        try:
            await streams.initialize(str(root / "project"), options)
            await other.initialize(str(root / "project"), options)
            ids = [
                (await streams.request("pi/newSession", {"cwd": str(root / "project")}))["sessionId"]
                for _ in range(sessions)
            ]
            watched = ids[-1]
            await other.request("pi/getRunState", {"session": watched})
            started = time.perf_counter()
            prompts = [
                asyncio.ensure_future(
                    streams.request("pi/prompt", {"session": sid, "text": "stream"}, timeout=600)
                )
                for sid in ids
            ]
            waits: list[float] = []
            while not all(p.done() for p in prompts):
                sent = time.perf_counter()
                await other.request("pi/getRunState", {"session": watched}, timeout=600)
                waits.append(time.perf_counter() - sent)
            results = await asyncio.gather(*prompts)
            took = time.perf_counter() - started
            streams.drain_notifications()
            assert fake.requests == sessions, (fake.requests, sessions)
            assert all(isinstance(r, dict) for r in results), results
        finally:
            await other.close()
            await streams.close()
            await server.stop()
            await fake.close()
    return {
        "sessions": sessions,
        "deltas": deltas,
        "seconds": took,
        "requests": len(waits),
        "p50_ms": statistics.median(waits) * 1000,
        "p99_ms": pct(waits, 0.99) * 1000,
        "max_ms": max(waits) * 1000,
    }


def table(row: dict[str, Any]) -> str:
    return "\n".join(
        [
            "| sessions streaming | deltas each | `pi/getRunState` p50 ms | p99 ms | max ms"
            " | requests | all runs took |",
            "|---:|---:|---:|---:|---:|---:|---:|",
            f"| {row['sessions']} | {row['deltas']} | {row['p50_ms']:.1f} | {row['p99_ms']:.1f} |"
            f" {row['max_ms']:.1f} | {row['requests']} | {row['seconds']:.1f} s |",
        ]
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sessions", type=int, default=50)
    parser.add_argument("--deltas", type=int, default=400)
    parser.add_argument("--gap", type=float, default=0.005, help="seconds between two frames of a reply")
    parser.add_argument("--smoke", action="store_true", help="tiny sizes: checks the benchmark still runs")
    args = parser.parse_args(argv)
    if args.smoke:
        args.sessions, args.deltas, args.gap = 3, 20, 0.001
    row = asyncio.run(run(args.sessions, args.deltas, args.gap))
    with open("/proc/loadavg") as loadavg:
        load = loadavg.read().split()[:3]
    print(f"{platform.machine()}, Python {platform.python_version()}, load average {' '.join(load)}")
    print(table(row))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
