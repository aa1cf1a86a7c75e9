"""Session-store benchmarks: pi-lsp's ``pi_lsp.session`` against pi's own ``SessionManager``.

One run times both implementations on the same generated files (``gen_sessions.py``) and prints
a table with the ratio ours / pi for each measurement:

* open + context of the 10k and 100k files, median of ``--runs`` runs, each in a fresh process:
  ours = ``SessionManager.open`` + ``context_view().message_json()`` (the context as the server
  sends it); also ours with the fully materialised ``build_session_context()``; pi =
  ``SessionManager.open`` + ``buildSessionContext()``. Both contexts are hashed to check they are
  byte-identical.
* the context again after one append (ours extends the view of the leaf; pi rebuilds), and
  append + context together;
* append throughput (entries/s, persisted, no fsync), once per size after the other operations,
  and alone on the smallest file in ``--append-rounds`` runs of ours and pi alternating;
* ``get_tree`` / ``getTree``;
* listing a folder of 1,000 session files (``list_sessions`` / ``SessionManager.list``);
* peak memory of open + context as a multiple of the file size (ours: ``ru_maxrss`` growth in the
  worker process and the ``tracemalloc`` peak; pi: ``maxRSS`` growth, node ``--expose-gc``).

    .venv/bin/python benchmarks/bench_session.py            # full run (10k + 100k, 1,000 files)
    .venv/bin/python benchmarks/bench_session.py --quick    # ~1 minute short run
    .venv/bin/python benchmarks/bench_session.py --smoke    # seconds: still runs? (make test)

Generated data lives in ``.bench-data/`` (git-ignored) and is reused across runs.
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Sequence
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

PI_BENCH = HERE / "pi_bench.mjs"
CWD = "/home/dev/projects/acme-webapp"
PAGE = os.sysconf("SC_PAGE_SIZE")


# =========================================================================== workers (ours)


def _rss() -> int:
    with open("/proc/self/statm") as handle:
        return int(handle.read().split()[1]) * PAGE


def _maxrss() -> int:
    """Peak RSS of this process: ``VmHWM`` where readable (resettable), else ``ru_maxrss``.

    ``ru_maxrss`` never drops below the peak RSS of the parent at fork (Linux keeps it in the
    signal struct across exec), so after a reset only ``VmHWM`` reflects the measured operation.
    """
    try:
        with open("/proc/self/status") as handle:
            for line in handle:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def _reset_peak_rss() -> None:
    """Make the peak RSS (``ru_maxrss``) start again from the current RSS (Linux ≥ 4.0)."""
    try:
        with open("/proc/self/clear_refs", "w") as handle:
            handle.write("5")
    except OSError:
        pass  # the peak then includes the interpreter's own earlier peak (subtracted below)


def emit(result: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(result) + "\n")
    sys.stdout.flush()


def _context_hash(parts: list[bytes]) -> str:
    digest = hashlib.sha256(b"[")
    for index, part in enumerate(parts):
        if index:
            digest.update(b",")
        digest.update(part)
    digest.update(b"]")
    return digest.hexdigest()


def worker_open(file: str, mode: str, check: bool) -> None:
    """Open + context in this fresh process; time and memory (``mode``: json, dicts, tracemalloc)."""
    from pi_lsp.session.store import SessionManager

    size = os.path.getsize(file)
    gc.collect()
    _reset_peak_rss()
    base_rss = _rss()
    base_max = max(_maxrss(), base_rss)
    result_base = {"base_rss_bytes": base_rss, "base_peak_bytes": base_max}
    if mode == "tracemalloc":
        tracemalloc.start()
    t0 = time.perf_counter()
    manager = SessionManager.open(file)
    t1 = time.perf_counter()
    messages: Any
    if mode == "dicts":
        messages = manager.build_session_context()["messages"]
    else:
        messages = manager.context_view().message_json()
    t2 = time.perf_counter()
    result: dict[str, Any] = {
        "op": f"open-{mode}",
        "file_bytes": size,
        "open_ms": (t1 - t0) * 1000,
        "context_ms": (t2 - t1) * 1000,
        "total_ms": (t2 - t0) * 1000,
        "entries": manager.entry_count,
        "messages": len(messages),
        **result_base,
    }
    if mode == "tracemalloc":
        current, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        result.update(tracemalloc_peak_bytes=peak, tracemalloc_current_bytes=current)
    else:
        result.update(peak_rss_bytes=_maxrss() - base_max, retained_rss_bytes=_rss() - base_rss)
    if check and mode == "json":
        view = manager.context_view()
        result.update(
            context_sha256=_context_hash(messages), thinking_level=view.thinking_level, model=view.model
        )
    emit(result)


def worker_ops(file: str, messages_file: str, appends: int) -> None:
    """get_tree, context after one append, append + context, append throughput (on a copy)."""
    from pi_lsp.session.store import SessionManager

    messages = json.loads(Path(messages_file).read_text())
    manager = SessionManager.open(file)
    manager.context_view().message_json()  # the server has sent the context once
    gc.collect()
    tree = []
    for _ in range(5):
        t0 = time.perf_counter()
        manager.get_tree()
        tree.append(time.perf_counter() - t0)
    view_ms, json_ms, both_ms, delta_ms = [], [], [], []
    for index in range(7):
        t0 = time.perf_counter()
        manager.append_message(messages[index % len(messages)])
        t1 = time.perf_counter()
        view = manager.context_view()
        last = view.items[-1]
        delta = last.message_json() if not isinstance(last, dict) else None
        t2 = time.perf_counter()
        view.message_json()
        t3 = time.perf_counter()
        assert delta is not None
        view_ms.append(t2 - t1)
        json_ms.append(t3 - t2 + (t2 - t1))
        both_ms.append(t2 - t0)
        delta_ms.append(t1 - t0)
    t0 = time.perf_counter()
    for index in range(appends):
        manager.append_message(messages[index % len(messages)])
    append_s = time.perf_counter() - t0
    emit(
        {
            "op": "ops",
            "get_tree_ms": statistics.median(tree) * 1000,
            "context_after_append_ms": statistics.median(view_ms) * 1000,
            "context_json_after_append_ms": statistics.median(json_ms) * 1000,
            "append_plus_context_ms": statistics.median(both_ms) * 1000,
            "appends": appends,
            "append_ms": append_s * 1000,
            "appends_per_s": appends / append_s,
        }
    )


def worker_appends(file: str, messages_file: str, appends: int) -> None:
    """Append throughput alone (50 appends to warm up, then ``appends`` timed), as pi_bench's."""
    from pi_lsp.session.store import SessionManager

    messages = json.loads(Path(messages_file).read_text())
    manager = SessionManager.open(file)
    for index in range(50):
        manager.append_message(messages[index % len(messages)])
    gc.collect()
    t0 = time.perf_counter()
    for index in range(appends):
        manager.append_message(messages[index % len(messages)])
    append_s = time.perf_counter() - t0
    rate = appends / append_s
    emit({"op": "appends", "appends": appends, "append_ms": append_s * 1000, "appends_per_s": rate})


def worker_list(directory: str, runs: int) -> None:
    from pi_lsp.session.listing import list_sessions

    times = []
    count = 0
    for _ in range(runs):
        t0 = time.perf_counter()
        count = len(list_sessions(CWD, directory))
        times.append((time.perf_counter() - t0) * 1000)
        gc.collect()
    emit({"op": "list", "list_ms": statistics.median(times), "runs": times, "sessions": count})


# =========================================================================== orchestration


class Runner:
    """Runs workers in fresh processes (ours: ``script --worker …``; pi: ``pi_bench.mjs …``)."""

    def __init__(self, work: Path, verbose: bool, script: Path | None = None) -> None:
        self.work = work
        self.verbose = verbose
        self.script = script or Path(__file__).resolve()
        self.env = dict(os.environ, PI_CODING_AGENT_DIR=str(work / "agent"), PYTHONHASHSEED="0")

    def _run(self, command: list[str]) -> dict[str, Any]:
        if self.verbose:
            print("  $", " ".join(command), file=sys.stderr)
        done = subprocess.run(command, capture_output=True, text=True, env=self.env, cwd=ROOT, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(command)} failed ({done.returncode}):\n{done.stderr[-4000:]}")
        line = done.stdout.strip().splitlines()[-1]
        result: dict[str, Any] = json.loads(line)
        return result

    def ours(self, *args: str) -> dict[str, Any]:
        return self._run([sys.executable, str(self.script), "--worker", *args])

    def pi(self, *args: str) -> dict[str, Any]:
        return self._run(["node", "--expose-gc", str(PI_BENCH), *args])


def _median(results: list[dict[str, Any]], key: str) -> float:
    return float(statistics.median(result[key] for result in results))


def append_messages(path: Path, count: int = 40) -> Path:
    """Realistic messages (user / assistant with tool calls / tool results) for the append runs."""
    from gen_sessions import SessionGen

    generator = SessionGen(seed=424242, count=count)
    messages = [entry["message"] for entry in generator.entries() if entry["type"] == "message"]
    path.write_text(json.dumps(messages))
    return path


def run(args: argparse.Namespace) -> dict[str, Any]:
    from gen_sessions import big_session, list_sessions_dir

    args.data.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="work-", dir=args.data))
    runner = Runner(work, args.verbose)
    results: dict[str, Any] = {"sizes": {}, "machine": machine(), "load_before": os.getloadavg()}
    try:
        messages = append_messages(work / "messages.json")
        for count in args.entries:
            file = big_session(args.data, count)
            size = file.stat().st_size
            print(f"[{count} entries, {size / 1e6:.0f} MB] open + context ...", file=sys.stderr)
            ours_json: list[dict[str, Any]] = []
            ours_dicts: list[dict[str, Any]] = []
            pi_open: list[dict[str, Any]] = []
            for i in range(args.runs):  # interleaved, so background load hits both sides alike
                check = ["--check"] if i == 0 else []
                ours_json.append(runner.ours("open", str(file), "json", *check))
                pi_open.append(runner.pi("open", str(file), *check))
                ours_dicts.append(runner.ours("open", str(file), "dicts"))
            ours_trace = runner.ours("open", str(file), "tracemalloc")
            print(f"[{count} entries] tree, append ...", file=sys.stderr)
            copy = work / "copy.jsonl"
            shutil.copyfile(file, copy)
            ours_ops = runner.ours("ops", str(copy), str(messages), str(args.appends))
            shutil.copyfile(file, copy)
            pi_ops = runner.pi("ops", str(copy), str(messages), str(args.appends))
            copy.unlink()
            results["sizes"][count] = {
                "file_bytes": size,
                "ours_json": ours_json,
                "ours_dicts": ours_dicts,
                "ours_tracemalloc": ours_trace,
                "pi_open": pi_open,
                "ours_ops": ours_ops,
                "pi_ops": pi_ops,
                "identical": ours_json[0].get("context_sha256") == pi_open[0].get("context_sha256")
                and ours_json[0].get("thinking_level") == pi_open[0].get("thinking_level")
                and ours_json[0].get("model") == pi_open[0].get("model"),
            }
        if args.append_rounds:
            append_rounds(args, runner, work, messages, results)
        if args.list_files:
            folder = list_sessions_dir(args.data, args.list_files)
            print(f"[list {args.list_files} files] ...", file=sys.stderr)
            results["list"] = {
                "files": args.list_files,
                "bytes": sum(path.stat().st_size for path in folder.glob("*.jsonl")),
                "ours": runner.ours("list", str(folder), str(args.runs)),
                "pi": runner.pi("list", str(folder), str(args.runs)),
            }
    finally:
        shutil.rmtree(work, ignore_errors=True)
    results["load_after"] = os.getloadavg()
    return results


def append_rounds(
    args: argparse.Namespace, runner: Runner, work: Path, messages: Path, results: dict[str, Any]
) -> None:
    """Append throughput on the smallest file, ours and pi alternating for ``--append-rounds``
    rounds (fresh processes, a fresh copy each), so a change in the machine's load hits both."""
    from gen_sessions import big_session

    count = min(args.entries)
    file = big_session(args.data, count)
    copy = work / "appends.jsonl"
    ours: list[float] = []
    pi: list[float] = []
    print(f"[{count} entries] append throughput, {args.append_rounds} rounds ...", file=sys.stderr)
    for _ in range(args.append_rounds):
        for side, out in ((runner.ours, ours), (runner.pi, pi)):
            shutil.copyfile(file, copy)
            out.append(side("appends", str(copy), str(messages), str(args.appends))["appends_per_s"])
    copy.unlink()
    results["append_rounds"] = {"entries": count, "file_bytes": file.stat().st_size, "ours": ours, "pi": pi}


def machine() -> str:
    cpu = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    node = subprocess.run(["node", "--version"], capture_output=True, text=True, check=False).stdout.strip()
    return f"{os.cpu_count()} cores, {cpu}; Python {sys.version.split()[0]}, node {node}"


# =========================================================================== report


def _fmt(value: float, unit: str) -> str:
    if unit == "ms":
        return f"{value:,.1f} ms" if value < 100 else f"{value:,.0f} ms"
    if unit == "/s":
        return f"{value:,.0f} /s"
    if unit == "x":
        return f"{value:.2f}×"
    return f"{value:g}"


def _label(count: int) -> str:
    return f"{count // 1000}k" if count % 1000 == 0 else str(count)


def markdown_table(header: tuple[str, ...], rows: Sequence[tuple[str, ...]]) -> list[str]:
    """The lines of a Markdown table, columns padded to their widest cell."""
    widths = [max(len(row[i]) for row in [*rows, header]) for i in range(len(header))]
    lines = ["| " + " | ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)) + " |"]
    lines.append("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    lines.extend("| " + " | ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) + " |" for r in rows)
    return lines


def report(results: dict[str, Any]) -> str:
    rows: list[tuple[str, str, str, str, str]] = []

    def row(name: str, ours: float, pi: float | None, unit: str, target: str = "") -> None:
        ratio = f"{ours / pi:.2f}" if pi else "—"
        rows.append((name, _fmt(ours, unit), _fmt(pi, unit) if pi is not None else "—", ratio, target))

    for count, size in results["sizes"].items():
        label = _label(int(count))
        mb = size["file_bytes"] / 1e6
        pi_total = _median(size["pi_open"], "total_ms")
        big = int(count) == max(int(c) for c in results["sizes"])
        ours_total = _median(size["ours_json"], "total_ms")
        met = "✓" if ours_total <= pi_total / 2 else "✗"
        row(
            f"open + context, {label} ({mb:.0f} MB)",
            ours_total,
            pi_total,
            "ms",
            f"≤ 0.5 {met}" if big else "",
        )
        row(
            f"  of which open ({label})",
            _median(size["ours_json"], "open_ms"),
            _median(size["pi_open"], "open_ms"),
            "ms",
        )
        row(
            f"  of which context ({label})",
            _median(size["ours_json"], "context_ms"),
            _median(size["pi_open"], "context_ms"),
            "ms",
        )
        row(
            f"open + build_session_context() dicts, {label}",
            _median(size["ours_dicts"], "total_ms"),
            pi_total,
            "ms",
        )
        ours_ops, pi_ops = size["ours_ops"], size["pi_ops"]
        after = ours_ops["context_after_append_ms"]
        row(
            f"context after one append, {label}",
            after,
            pi_ops["context_after_append_ms"],
            "ms",
            f"< 5 ms {'✓' if after < 5 else '✗'}" if big else "",
        )
        row(
            f"  same, with message_json() of all ({label})",
            ours_ops["context_json_after_append_ms"],
            pi_ops["context_after_append_ms"],
            "ms",
        )
        row(
            f"append + context, {label}",
            ours_ops["append_plus_context_ms"],
            pi_ops["context_after_append_ms"],
            "ms",
            "(pi: context only)",
        )
        row(
            f"append throughput, {label}",
            ours_ops["appends_per_s"],
            pi_ops["appends_per_s"],
            "/s",
            "higher is better",
        )
        row(f"get_tree, {label}", ours_ops["get_tree_ms"], pi_ops["get_tree_ms"], "ms")
        ours_peak = _median(size["ours_json"], "peak_rss_bytes") / size["file_bytes"]
        pi_peak = _median(size["pi_open"], "peak_rss_bytes") / size["file_bytes"]
        row(
            f"peak memory (RSS growth) / file, {label}",
            ours_peak,
            pi_peak,
            "x",
            f"≤ 1.5× {'✓' if ours_peak <= 1.5 else '✗'}" if big else "",
        )
        trace = size["ours_tracemalloc"]["tracemalloc_peak_bytes"] / size["file_bytes"]
        row(f"  tracemalloc peak / file, {label}", trace, None, "x")
        retained_ours = _median(size["ours_json"], "retained_rss_bytes") / size["file_bytes"]
        retained_pi = _median(size["pi_open"], "retained_rss_bytes") / size["file_bytes"]
        row(f"  retained after open (RSS) / file, {label}", retained_ours, retained_pi, "x")
    if "append_rounds" in results:
        rounds = results["append_rounds"]
        ours_rate, pi_rate = statistics.median(rounds["ours"]), statistics.median(rounds["pi"])
        row(
            f"append throughput, {_label(rounds['entries'])} ({rounds['file_bytes'] / 1e6:.0f} MB), "
            f"median of {len(rounds['ours'])} alternating runs",
            ours_rate,
            pi_rate,
            "/s",
            f"≥ 1 {'✓' if ours_rate >= pi_rate else '✗'} (higher is better)",
        )
    if "list" in results:
        listing = results["list"]
        row(
            f"list {listing['files']:,} session files ({listing['bytes'] / 1e6:.0f} MB)",
            listing["ours"]["list_ms"],
            listing["pi"]["list_ms"],
            "ms",
        )
    lines = markdown_table(("measurement", "ours", "pi", "ours / pi", "target"), rows)
    checks = [
        f"{_label(int(c))}: {'identical' if s['identical'] else 'DIFFERENT'}"
        for c, s in results["sizes"].items()
    ]
    lines.append("")
    lines.append(
        "Context bytes ours vs pi (sha256 of the messages JSON, thinking level, model): " + ", ".join(checks)
    )
    load = ", ".join(f"{results[key][0]:.1f}" for key in ("load_before", "load_after") if key in results)
    lines.append(f"Machine: {results['machine']}; 1-min load average before/after: {load}")
    return "\n".join(lines)


# =========================================================================== main


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--worker"]:
        mode, *rest = argv[1:]
        if mode == "open":
            worker_open(rest[0], rest[1], "--check" in rest)
        elif mode == "ops":
            worker_ops(rest[0], rest[1], int(rest[2]))
        elif mode == "appends":
            worker_appends(rest[0], rest[1], int(rest[2]))
        elif mode == "list":
            worker_list(rest[0], int(rest[1]))
        else:
            raise SystemExit(f"unknown worker mode {mode}")
        return 0
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--quick", action="store_true", help="~1 minute smoke run (1k + 5k entries, 100 files)"
    )
    parser.add_argument(
        "--entries", type=int, nargs="+", help="entries of the big sessions (default 10000 100000)"
    )
    parser.add_argument("--list-files", type=int, help="session files to list (default 1000; 0 skips)")
    parser.add_argument("--runs", type=int, help="fresh-process runs per measurement (default 3)")
    parser.add_argument("--appends", type=int, help="appends for the throughput run (default 1000)")
    parser.add_argument(
        "--append-rounds", type=int, help="alternating append-only runs of ours and pi (default 5; 0 skips)"
    )
    parser.add_argument("--data", type=Path, help="generated data folder (default .bench-data/)")
    parser.add_argument("--json", type=Path, help="also write the raw results here")
    parser.add_argument("--verbose", action="store_true")
    parser.add_argument(
        "--smoke", action="store_true", help="a few seconds on tiny data (temporary folder): still runs?"
    )
    args = parser.parse_args(argv)
    if args.smoke and args.json:
        parser.error("--smoke numbers mean nothing: no --json")
    if args.smoke:
        args.entries = args.entries or [300]
        args.runs = args.runs or 1
        args.list_files = 5 if args.list_files is None else args.list_files
        args.appends = args.appends or 20
        args.append_rounds = 1 if args.append_rounds is None else args.append_rounds
    if args.data is None and args.smoke:
        with tempfile.TemporaryDirectory(prefix="bench-session-smoke-") as folder:
            args.data = Path(folder)
            return measure(args)
    args.data = args.data or ROOT / ".bench-data"
    return measure(args)


def measure(args: argparse.Namespace) -> int:
    """Fill in the remaining defaults, run, print the table (and write ``--json``)."""
    quick = args.quick
    args.entries = args.entries or ([1_000, 5_000] if quick else [10_000, 100_000])
    args.list_files = args.list_files if args.list_files is not None else (100 if quick else 1_000)
    args.runs = args.runs or (1 if quick else 3)
    args.appends = args.appends or (200 if quick else 1_000)
    if args.append_rounds is None:
        args.append_rounds = 1 if quick else 5
    if shutil.which("node") is None:
        raise SystemExit("node is needed to time pi")
    started = time.perf_counter()
    results = run(args)
    results["seconds"] = time.perf_counter() - started
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    print(report(results))
    print(f"({results['seconds']:.0f} s; {args.runs} run(s) per measurement, {args.appends} appends)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
