"""Session-list benchmark: ``pi/listSessions`` (the session-list cache) against pi's ``SessionManager.list``.

One run, on a copy of the 1,000-file folder of ``gen_sessions.py`` (154 MB), times:

* pi: ``SessionManager.list`` (it reads every file each time), median of ``--runs`` in one process;
* ours without the cache (``listing.list_sessions``, a full read like pi's), same;
* ours **cold**: a fresh process, no cache file (first listing ever; the save happens after the
  answer on a background thread and is timed on its own);
* ours **cold start with the cache file**: a fresh process whose first listing loads the cache
  a previous server saved;
* ours **warm**: the same process listing again (a picker reopened, a refresh);
* ours **after an append** to one file (only the appended bytes are read);
* search as you type: queries typed one character at a time, each answered from the listing
  (in process, and over stdio through a real server: ``pi/listSessions`` with ``query``), plus
  the first word search of a process (which lowercases all text once), a phrase and a regex.

    .venv/bin/python benchmarks/bench_list.py             # 1,000 files, 5 runs
    .venv/bin/python benchmarks/bench_list.py --files 100 --runs 3   # short run
    .venv/bin/python benchmarks/bench_list.py --smoke    # seconds: still runs? (make test)

Generated data lives in ``.bench-data/`` (git-ignored) and is reused across runs.
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
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

from bench_session import CWD, Runner, emit, markdown_table  # noqa: E402

# Typed one character at a time: a phrase of one session, a word no session has, two common words.
RARE_WORD = "xylophone"
COMMON = "rebase worker"
# The server's first listing is timed this long after its first answer (the Anthropic SDK is
# imported in a worker thread at start-up, which slows everything else for about a second).
SETTLE = 1.5
# The first key is typed this long after the list is shown (a person reads the list first).
TYPING_STARTS = 0.3
# A picker showing one page of matches asks for this many.
PAGE = 50


def _ms(start: float) -> float:
    return (time.perf_counter() - start) * 1000


def _cache() -> Any:
    from pi_lsp.session.list_cache import SessionListCache
    from pi_lsp.session.list_cache_disk import DiskStore

    return SessionListCache(DiskStore())


def _typed(query: str) -> list[str]:
    return [query[: end + 1] for end in range(len(query)) if query[end] != " "]


def _distinct_phrase(infos: list[Any]) -> str:
    """Three consecutive words of one session's text (found in few sessions): a user looking for it."""
    words = infos[len(infos) // 2].all_messages_text.split()
    return " ".join(words[len(words) // 2 : len(words) // 2 + 3])


# =========================================================================== workers (ours)


def worker_full(directory: str, runs: int) -> None:
    from pi_lsp.session.listing import list_sessions

    times = []
    for _ in range(runs):
        start = time.perf_counter()
        count = len(list_sessions(CWD, directory))
        times.append(_ms(start))
    emit({"list_ms": statistics.median(times), "runs": times, "sessions": count})


def worker_first(directory: str) -> None:
    """One process's first listing (with or without a cache file), then the time to save."""
    cache = _cache()
    start = time.perf_counter()
    count = len(cache.list_folder(directory))
    first = _ms(start)
    start = time.perf_counter()
    cache.close(60)
    emit({"list_ms": first, "save_ms": _ms(start), "sessions": count})


def worker_warm(directory: str, runs: int) -> None:
    """Warm listings, listings after an append, and searches, in one process."""
    from pi_lsp.session.list_search import search_sessions
    from pi_lsp.session.listing import list_sessions

    cache = _cache()
    infos = cache.list_folder(directory)
    assert infos == list_sessions(CWD, directory), "the cached listing differs from a full read"
    warm = []
    for _ in range(runs * 4):
        start = time.perf_counter()
        cache.list_folder(directory)
        warm.append(_ms(start))
    after_append = []
    line = b'{"type":"message","id":"bench%04d","parentId":null,"timestamp":"2030-01-01T00:00:00.000Z",'
    line += b'"message":{"role":"user","content":"appended","timestamp":1893456000000}}\n'
    for index in range(runs):
        with open(infos[index * 7 % len(infos)].path, "ab") as out:
            out.write(line.replace(b"%04d", b"%04d" % index))
        start = time.perf_counter()
        infos = cache.list_folder(directory)
        after_append.append(_ms(start))
    searches: dict[str, Any] = {}
    start = time.perf_counter()
    search_sessions(cache.list_folder(directory), "first")
    searches["first_search_ms"] = _ms(start)
    phrase = _distinct_phrase(infos)
    for label, query in (("phrase", phrase), ("rare", RARE_WORD), ("common", COMMON)):
        keystrokes = []
        for typed in _typed(query):
            start = time.perf_counter()
            found = search_sessions(cache.list_folder(directory), typed)
            keystrokes.append(_ms(start))
        searches[label] = {"query": query, "keystrokes_ms": keystrokes, "matches": len(found)}
    for label, query in (("quoted", f'"{phrase}"'), ("regex", r"re:\bxylo\w+")):
        start = time.perf_counter()
        found = search_sessions(cache.list_folder(directory), query)
        searches[label] = {"query": query, "ms": _ms(start), "matches": len(found)}
    emit(
        {
            "warm_ms": statistics.median(warm),
            "warm_runs": warm,
            "after_append_ms": statistics.median(after_append),
            "after_append_runs": after_append,
            "search": searches,
            "text_bytes": sum(len(info.messages_text) for info in infos),
        }
    )


async def _server(directory: str, runs: int, env: dict[str, str]) -> dict[str, Any]:
    from pi_lsp.client.rpc_client import RpcClient

    client = await RpcClient.start(env=env, quiet=True)
    try:
        await client.initialize(directory, {"pi": {"sessionDir": directory}})
        await client.request("pi/listModels", {})  # the first pi/ request loads the server's modules
        await asyncio.sleep(SETTLE)  # and start-up work goes on in worker threads for a moment
        start = time.perf_counter()
        first = await client.request("pi/listSessions", {})
        first_ms = _ms(start)
        warm = []
        for _ in range(runs * 2):
            start = time.perf_counter()
            await client.request("pi/listSessions", {})
            warm.append(_ms(start))
        await asyncio.sleep(TYPING_STARTS)
        keystrokes: dict[str, list[float]] = {"all": [], "limit": []}
        for series, extra in (("all", {}), ("limit", {"limit": PAGE})):
            for typed in _typed(RARE_WORD) + _typed(COMMON):
                start = time.perf_counter()
                await client.request("pi/listSessions", {"query": typed, **extra})
                keystrokes[series].append(_ms(start))
        return {
            "first_ms": first_ms,
            "warm_ms": statistics.median(warm),
            "keystrokes_ms": keystrokes["all"],
            "keystrokes_limit_ms": keystrokes["limit"],
            "sessions": len(first["sessions"]),
        }
    finally:
        await client.close()


# =========================================================================== orchestration


def run(args: argparse.Namespace) -> dict[str, Any]:
    from gen_sessions import list_sessions_dir

    source = list_sessions_dir(args.data, args.files)
    work = Path(tempfile.mkdtemp(prefix="list-", dir=args.data))
    try:
        folder = work / "sessions"
        shutil.copytree(source, folder)
        cache_dir = work / "agent" / "pi-lsp" / "list-cache"
        runner = Runner(work, args.verbose, Path(__file__).resolve())
        runs = str(args.runs)
        results: dict[str, Any] = {
            "files": args.files,
            "bytes": sum(path.stat().st_size for path in folder.glob("*.jsonl")),
            "load_before": os.getloadavg(),
        }
        print(f"[list {args.files} files] pi, full read ...", file=sys.stderr)
        results["pi"] = runner.pi("list", str(folder), runs)
        results["full"] = runner.ours("full", str(folder), runs)
        print("[cold, cold with cache file] ...", file=sys.stderr)
        cold, disk = [], []
        for _ in range(args.runs):  # interleaved
            shutil.rmtree(cache_dir, ignore_errors=True)
            cold.append(runner.ours("first", str(folder)))
            disk.append(runner.ours("first", str(folder)))
        results["cold"], results["disk"] = cold, disk
        results["cache_file_bytes"] = sum(path.stat().st_size for path in cache_dir.iterdir())
        print("[warm, after append, search] ...", file=sys.stderr)
        results["warm"] = runner.ours("warm", str(folder), runs)
        results["pi_after"] = runner.pi("list", str(folder), runs)
        print("[server] ...", file=sys.stderr)
        results["server"] = asyncio.run(_server(str(folder), args.runs, runner.env))
        results["load_after"] = os.getloadavg()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return results


# =========================================================================== report


def _median(results: list[dict[str, Any]], key: str) -> float:
    return float(statistics.median(result[key] for result in results))


def report(results: dict[str, Any]) -> str:
    pi = (results["pi"]["list_ms"] + results["pi_after"]["list_ms"]) / 2
    rows: list[tuple[str, str, str, str]] = []

    def row(name: str, ours: float, target: str = "", ratio: bool = True) -> None:
        rows.append((name, f"{ours:,.1f} ms", f"{ours / pi:.3f}" if ratio else "—", target))

    def mark(ok: bool) -> str:
        return "✓" if ok else "✗"

    warm, search, server = results["warm"], results["warm"]["search"], results["server"]
    cold = _median(results["cold"], "list_ms")
    row("full read, no cache (`list_sessions`)", results["full"]["list_ms"])
    row("**cold**: fresh process, no cache file", cold, f"≤ 0.5 {mark(cold <= pi / 2)}")
    row("  then saving the cache (background thread)", _median(results["cold"], "save_ms"), ratio=False)
    disk = _median(results["disk"], "list_ms")
    row("cold start with the cache file", disk, f"≤ 0.1 {mark(disk <= pi / 10)}")
    row("**warm**: the same process again", warm["warm_ms"], f"≤ 0.1 {mark(warm['warm_ms'] <= pi / 10)}")
    row("after an append to one file", warm["after_append_ms"])
    row(f"server: first `pi/listSessions` (cache file; {SETTLE:g} s after start-up)", server["first_ms"])
    row("server: `pi/listSessions` again", server["warm_ms"])
    row("first search in a process, unprepared (lowercases all text)", search["first_search_ms"], ratio=False)
    for label in ("phrase", "rare", "common"):
        typed = search[label]["keystrokes_ms"]
        worst = max(typed)
        row(
            f"typing {search[label]['query']!r} ({len(typed)} keys, {search[label]['matches']} found): "
            "median / max per key",
            statistics.median(typed),
            f"max {worst:.1f} ms; < 50 {mark(worst < 50)}",
            ratio=False,
        )
    for label in ("quoted", "regex"):
        found = search[label]["matches"]
        row(f"search {search[label]['query']!r} ({found} found)", search[label]["ms"], ratio=False)
    for key, label in (("keystrokes_ms", "every match"), ("keystrokes_limit_ms", f"limit {PAGE}")):
        keys = server[key]
        row(
            f"server: typing {RARE_WORD!r} then {COMMON!r}, {label}: median / max",
            statistics.median(keys),
            f"max {max(keys):.1f} ms; < 50 {mark(max(keys) < 50)}",
            ratio=False,
        )
    lines = markdown_table(("measurement", "ours", "ours / pi", "target"), rows)
    load = ", ".join(f"{results[key][0]:.1f}" for key in ("load_before", "load_after"))
    lines.append("")
    lines.append(
        f"pi `SessionManager.list`: {results['pi']['list_ms']:,.0f} ms before, "
        f"{results['pi_after']['list_ms']:,.0f} ms after (ratios use the mean, {pi:,.0f} ms); "
        f"{results['files']:,} files, {results['bytes'] / 1e6:.0f} MB, {warm['text_bytes'] / 1e6:.1f} MB of "
        f"message text, cache file {results['cache_file_bytes'] / 1e6:.1f} MB; load average {load}"
    )
    return "\n".join(lines)


# =========================================================================== main


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--worker"]:
        mode, *rest = argv[1:]
        if mode == "full":
            worker_full(rest[0], int(rest[1]))
        elif mode == "first":
            worker_first(rest[0])
        elif mode == "warm":
            worker_warm(rest[0], int(rest[1]))
        else:
            raise SystemExit(f"unknown worker mode {mode}")
        return 0
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--files", type=int, default=1_000, help="session files in the folder (default 1000)")
    parser.add_argument("--runs", type=int, default=5, help="runs per measurement (default 5)")
    parser.add_argument("--data", type=Path, help="generated data folder (default .bench-data/)")
    parser.add_argument("--json", type=Path, help="also write the raw results here")
    parser.add_argument("--verbose", action="store_true")
    parser.add_argument(
        "--smoke", action="store_true", help="a few seconds on tiny data (temporary folder): still runs?"
    )
    args = parser.parse_args(argv)
    if shutil.which("node") is None:
        raise SystemExit("node is needed to time pi")
    if args.smoke and args.json:
        parser.error("--smoke numbers mean nothing: no --json")
    if args.smoke:
        args.files, args.runs = 8, 1
        if args.data is None:
            with tempfile.TemporaryDirectory(prefix="bench-list-smoke-") as folder:
                args.data = Path(folder)
                return measure(args)
    args.data = args.data or ROOT / ".bench-data"
    return measure(args)


def measure(args: argparse.Namespace) -> int:
    """Run, print the table (and write ``--json``)."""
    args.data.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    results = run(args)
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    print(report(results))
    print(f"({time.perf_counter() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
