"""Memory of one server holding many big sessions open, against pi holding the same sessions.

Ten ~100 MB sessions (``gen_sessions.session_set``: realistic, tool-heavy, distinct seeds) are
opened in one real server process over stdio, as an editor would: ``pi/openSession``, then
``pi/buildContext`` and ``pi/getTree`` with ``fold`` for each, all kept open. The server's RSS
(``/proc/PID/status``) is read after start-up (imports done, a first ``pi/`` request answered), and
again with all ten open: the growth divided by the total file size is the figure (target < 1.5×).
The peak (``VmHWM``, reset before opening) is reported too.

pi: one node process opens the same files with pi's ``SessionManager.open`` and keeps each with
its built context (``pi_bench.mjs hold``); RSS growth after a full GC, and the peak.

    .venv/bin/python benchmarks/bench_memory.py                 # 10 × 40,000 entries (~100 MB each)
    .venv/bin/python benchmarks/bench_memory.py --files 2 --entries 5000   # short run
    .venv/bin/python benchmarks/bench_memory.py --smoke    # seconds: still runs? (make test)
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

from gen_sessions import DEFAULT_OUT, session_set  # noqa: E402

from pi_lsp.client.rpc_client import RpcClient  # noqa: E402

PI_BENCH = HERE / "pi_bench.mjs"


def _status(pid: int) -> dict[str, int]:
    """``VmRSS`` and ``VmHWM`` of process ``pid``, in bytes."""
    values: dict[str, int] = {}
    with open(f"/proc/{pid}/status") as handle:
        for line in handle:
            key, _, rest = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                values[key] = int(rest.split()[0]) * 1024
    return values


def _reset_peak(pid: int) -> None:
    """Make ``VmHWM`` start again from the current RSS (Linux ≥ 4.0; our own child process)."""
    try:
        with open(f"/proc/{pid}/clear_refs", "w") as handle:
            handle.write("5")
    except OSError:
        pass


async def ours(files: list[Path], work: Path) -> dict[str, Any]:
    env = dict(os.environ, PI_CODING_AGENT_DIR=str(work / "agent"))
    client = await RpcClient.start(env=env, quiet=True)
    try:
        await client.initialize(str(work))
        await client.request("pi/listSessions", {"cwd": str(work)})  # start-up finished
        pid = client.process.pid
        before = _status(pid)["VmRSS"]
        _reset_peak(pid)
        started = time.perf_counter()
        entries = 0
        for file in files:
            state = await client.request("pi/openSession", {"path": str(file)}, timeout=600)
            entries += state["entryCount"]
            await client.request_raw("pi/buildContext", {"session": state["sessionId"]}, timeout=600)
            await client.request_raw("pi/getTree", {"session": state["sessionId"], "fold": True}, timeout=600)
        open_ms = (time.perf_counter() - started) * 1000
        await asyncio.sleep(0.5)  # let the workers settle
        after = _status(pid)
        return {
            "entries": entries,
            "open_ms": open_ms,
            "retained_rss_bytes": after["VmRSS"] - before,
            "peak_rss_bytes": after["VmHWM"] - before,
        }
    finally:
        await client.close()


def pi(files: list[Path]) -> dict[str, Any] | None:
    oracle = Path(os.environ.get("PI_ORACLE_DIR", ROOT / ".pi-oracle"))
    if not (oracle / "node_modules" / "@mariozechner" / "pi-coding-agent").exists():
        print("pi is not installed (make oracle): no comparison", file=sys.stderr)
        return None
    command = ["node", "--expose-gc", "--max-old-space-size=16384", str(PI_BENCH), "hold", *map(str, files)]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        print(f"pi failed ({done.returncode}): {done.stderr[-2000:]}", file=sys.stderr)
        return None
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--files", type=int, default=10)
    parser.add_argument("--entries", type=int, default=40_000, help="entries per session (40,000 ≈ 100 MB)")
    parser.add_argument("--data", type=Path, help="generated data folder (default .bench-data/)")
    parser.add_argument("--no-pi", action="store_true", help="skip pi's side")
    parser.add_argument("--json", type=Path, help="write the raw results here")
    parser.add_argument(
        "--smoke", action="store_true", help="2 tiny sessions (temporary folder): does it still run?"
    )
    args = parser.parse_args(argv)
    if args.smoke and args.json:
        parser.error("--smoke numbers mean nothing: no --json")
    if args.smoke:
        args.files, args.entries = 2, 300
        if args.data is None:
            with tempfile.TemporaryDirectory(prefix="bench-memory-smoke-") as folder:
                args.data = Path(folder)
                return measure(args)
    args.data = args.data or DEFAULT_OUT
    return measure(args)


def measure(args: argparse.Namespace) -> int:
    """Open the sessions in our server and in pi, print the table (and write ``--json``)."""
    files = session_set(args.data, args.files, args.entries)
    total = sum(file.stat().st_size for file in files)
    with tempfile.TemporaryDirectory(prefix="pi-lsp-mem-") as folder:
        work = Path(folder)
        # The server may write a file's persisted leaf, never the sessions; still, open copies.
        copies = []
        for file in files:
            copy = work / file.name
            copy.write_bytes(file.read_bytes())
            copies.append(copy)
        print(f"ours: {len(files)} sessions, {total / 1e6:.0f} MB ...", file=sys.stderr)
        our = asyncio.run(ours(copies, work))
        print("pi ...", file=sys.stderr)
        their = None if args.no_pi else pi(copies)
    results = {"files": len(files), "file_bytes": total, "ours": our, "pi": their}
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    print(
        f"\n{len(files)} sessions × {args.entries:,} entries, {total / 1e6:.0f} MB in all; "
        f"{platform.machine()} {os.cpu_count()} CPUs, Python {platform.python_version()}"
        + (f", node {their['node']}, pi {their['pi_version']}" if their else "")
        + f", {time.strftime('%Y-%m-%d')}\n"
    )
    print("| measure | pi-lsp | pi | pi-lsp / pi |")
    print("|---|---:|---:|---:|")
    for key, label in (("retained_rss_bytes", "RSS growth, all open"), ("peak_rss_bytes", "peak RSS growth")):
        mine = our[key] / total
        other = their[key] / total if their else None
        ratio = f"{mine / other:.2f}" if other else "—"
        print(f"| {label} / file size | {mine:.2f}× | {f'{other:.2f}×' if other else '—'} | {ratio} |")
    other_ms = their["open_ms"] if their else None
    ratio = f"{our['open_ms'] / other_ms:.2f}" if other_ms else "—"
    print(f"| open all (ms) | {our['open_ms']:.0f} | {f'{other_ms:.0f}' if other_ms else '—'} | {ratio} |")
    print(f"\nentries: ours {our['entries']:,}" + (f", pi {their['entries']:,}" if their else ""))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
