"""Blocking benchmarks: work that must not stall the server, measured through the real server.

* **Offline compaction of a big session**: ``pi/compact`` (summariser ``offline``) on a session of
  ``--messages`` entries from ``gen_sessions.py`` (tool-heavy, no compaction yet), once the
  server's start-up is over, while cheap requests (``pi/getSessionState`` of another session) are
  sent back to back until a second after its answer; p50/p99/max of their waits (the max is how
  long the server stopped answering).
* **A very long line**: ``read_lines`` of a session whose one entry is a ``--line-mb`` MB line.

Run: ``python benchmarks/bench_blocking.py [--messages 60000] [--line-mb 400]`` (``--smoke``: 300
messages and a 1 MB line, only to check that it still runs). Files go to a temporary folder; nothing
touches ``~/.pi``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from gen_sessions import write_session  # noqa: E402

from pi_lsp.client.rpc_client import RpcClient  # noqa: E402
from pi_lsp.session.loader import read_lines  # noqa: E402

WARM_UP_S = 2.0  # the server's start-up (pygls imported once nothing waits) is not the compaction's
AFTER_S = 1.0  # what the compaction leaves behind (a collector pass over its garbage) counts too


async def compaction_stall(folder: Path, messages: int) -> tuple[float, list[float]]:
    """(seconds pi/compact took, each wait for a cheap request on another session meanwhile and
    for ``AFTER_S`` after its answer)."""
    big = folder / "big.jsonl"
    write_session(big, seed=7, count=messages, compactions=())  # tool-heavy, realistic line sizes
    env = dict(os.environ, PI_CODING_AGENT_DIR=str(folder / "agent"))
    env.pop("ANTHROPIC_API_KEY", None)
    client = await RpcClient.start(env=env, quiet=True)
    try:
        await client.initialize(str(folder), {"pi": {"summarizer": "offline"}})
        other = await client.request("pi/newSession", {"sessionDir": str(folder / "other")})
        state = await client.request("pi/openSession", {"path": str(big)})
        await asyncio.sleep(WARM_UP_S)
        compaction = asyncio.ensure_future(
            client.request("pi/compact", {"session": state["sessionId"]}, timeout=600)
        )
        started = time.perf_counter()
        waits: list[float] = []
        ended: float | None = None
        while ended is None or time.perf_counter() - ended < AFTER_S:
            sent = time.perf_counter()
            await client.request("pi/getSessionState", {"session": other["sessionId"]}, timeout=600)
            waits.append(time.perf_counter() - sent)
            if ended is None and compaction.done():
                ended = time.perf_counter()
        await compaction
        assert ended is not None
        return ended - started, waits
    finally:
        await client.close()


def _ms(waits: list[float], q: float) -> float:
    ordered = sorted(waits)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))] * 1000


def long_line_read(folder: Path, megabytes: int) -> float:
    header = {
        "type": "session",
        "version": 3,
        "id": "long",
        "timestamp": "2026-01-01T00:00:00.000Z",
        "cwd": str(folder),
    }
    entry = {
        "type": "message",
        "id": "a1",
        "parentId": None,
        "timestamp": "2026-01-01T00:00:00.000Z",
        "message": {"role": "user", "content": "x" * (megabytes << 20), "timestamp": 1},
    }
    path = folder / "long.jsonl"
    path.write_bytes(orjson.dumps(header) + b"\n" + orjson.dumps(entry) + b"\n")
    del entry
    started = time.perf_counter()
    result = read_lines(path)
    elapsed = time.perf_counter() - started
    assert [record.id for record in result.records] == ["a1"]
    path.unlink()
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--messages", type=int, default=60_000)
    parser.add_argument("--line-mb", type=int, default=400)
    parser.add_argument("--smoke", action="store_true", help="300 messages, a 1 MB line: still runs?")
    args = parser.parse_args()
    if args.smoke:
        args.messages, args.line_mb = 300, 1
    with tempfile.TemporaryDirectory(prefix="pi-lsp-bench-blocking-") as temp:
        folder = Path(temp)
        took, waits = asyncio.run(compaction_stall(folder, args.messages))
        print(
            f"offline pi/compact of {args.messages} messages: {took:.2f} s; another session's"
            f" pi/getSessionState meanwhile and {AFTER_S:.0f} s after ({len(waits)} requests):"
            f" p50 {_ms(waits, 0.5):.1f} ms, p99 {_ms(waits, 0.99):.1f} ms, max {_ms(waits, 1):.1f} ms"
        )
        if args.line_mb:
            print(f"read_lines of one {args.line_mb} MB line: {long_line_read(folder, args.line_mb):.2f} s")


if __name__ == "__main__":
    main()
