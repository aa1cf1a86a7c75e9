"""Language-server benchmark: LSP round trips against the real server over stdio.

Measures, with a minimal JSON-RPC client (orjson only, big responses received as bytes and not
parsed, so the numbers are the server's):

* process start → ``initialize`` response, and → first ``pi/`` request answered;
* p50/p99 round trips of ``pi/getTree`` (nested and flat), ``pi/buildContext`` and
  ``pi/appendEntry`` on generated sessions of 10k and 100k entries;
* what editor panels ask for: ``pi/getBranch`` pages of 100 (the last, and the one before it) and
  ``pi/getTree`` one level at a time (the roots, one node's children) and folded.

Run: ``python benchmarks/bench_server.py [--sizes 10000 100000] [--write-docs]`` (``--smoke``: a
few seconds on one tiny session, only to check that it still runs). With
``--write-docs`` the "Language server" section of ``docs/benchmarks.md`` is replaced (other sections
are kept). Session files go to a temporary folder; nothing touches ``~/.pi``.
"""

from __future__ import annotations

import argparse
import asyncio
import compileall
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import orjson

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pi_lsp.client.rpc_client import RpcClient  # noqa: E402

SECTION = "## Language server"
NOTE = (
    "With few runs p99 is the slowest run (usually the first, which also allocates the tree). "
    "Results are not re-encoded: stored entry lines and context messages are embedded as raw bytes "
    "(`orjson.Fragment`) and the tree is written iteratively, so `pi/buildContext` cost is mostly "
    "copying the response; `pi/appendEntry` "
    "extends the cached context view instead of rebuilding it."
)


def _assistant(number: int, tool: bool) -> dict[str, Any]:
    content: list[dict[str, Any]] = [
        {"type": "text", "text": f"Step {number}: looking at the code and deciding."}
    ]
    if tool:
        content.append(
            {
                "type": "toolCall",
                "id": f"call_{number}",
                "name": "read",
                "arguments": {"path": f"src/module_{number % 97}.py"},
            }
        )
    return {
        "role": "assistant",
        "content": content,
        "api": "anthropic-messages",
        "provider": "anthropic",
        "model": "claude-sonnet-4-5",
        "usage": {
            "input": 1200 + number,
            "output": 80,
            "cacheRead": 0,
            "cacheWrite": 0,
            "totalTokens": 1280 + number,
            "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
        },
        "stopReason": "toolUse" if tool else "stop",
        "timestamp": 1767225600000 + number,
    }


def generate_session(path: Path, count: int, branch_every: int = 1000) -> Path:
    """A v3 session: user → assistant(toolCall) → toolResult → assistant turns, one side branch of
    three entries every ``branch_every`` entries, so the tree is mostly one deep chain as in real use."""
    header = {
        "type": "session",
        "version": 3,
        "id": f"0197c000-0000-7000-8000-{count:012d}",
        "timestamp": "2026-01-01T00:00:00.000Z",
        "cwd": str(path.parent),
    }
    lines = [orjson.dumps(header)]
    parent: str | None = None
    written = 0
    side = 0

    def add(entry_id: str, parent_id: str | None, number: int, message: dict[str, Any]) -> None:
        seconds = number // 1000
        clock = f"{seconds // 3600 % 24:02d}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"
        stamp = f"2026-01-01T{clock}.{number % 1000:03d}Z"
        lines.append(
            orjson.dumps(
                {
                    "type": "message",
                    "id": entry_id,
                    "parentId": parent_id,
                    "timestamp": stamp,
                    "message": message,
                }
            )
        )

    while written < count:
        phase = written % 4
        number = written
        if phase == 0:
            message: dict[str, Any] = {
                "role": "user",
                "content": [{"type": "text", "text": f"Please handle task {number}."}],
                "timestamp": 1767225600000 + number,
            }
        elif phase == 1:
            message = _assistant(number, tool=True)
        elif phase == 2:
            message = {
                "role": "toolResult",
                "toolCallId": f"call_{number - 1}",
                "toolName": "read",
                "content": [{"type": "text", "text": "def handler():\n    return 42\n" * 3}],
                "isError": False,
                "timestamp": 1767225600000 + number,
            }
        else:
            message = _assistant(number, tool=False)
        entry_id = f"{number:08x}"
        add(entry_id, parent, number, message)
        written += 1
        if branch_every and written % branch_every == 0 and written + 3 <= count:
            branch_parent = entry_id
            for _ in range(3):
                side += 1
                side_id = f"b{side:07x}"
                add(
                    side_id,
                    branch_parent,
                    number,
                    {"role": "user", "content": f"side question {side}", "timestamp": 1767225600000 + number},
                )
                branch_parent = side_id
                written += 1
        parent = entry_id
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


def _pct(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    index = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[index]


async def _timed(client: RpcClient, method: str, params: Any, runs: int) -> tuple[list[float], int]:
    samples: list[float] = []
    size = 0
    for _ in range(runs):
        started = time.perf_counter()
        body = await client.request_raw(method, params, timeout=600)
        samples.append((time.perf_counter() - started) * 1000)
        size = len(body)
        if body.startswith(b'{"jsonrpc":"2.0","id":') and b'"error":{' in body[:80]:
            raise RuntimeError(body[:300].decode())
    return samples, size


EDITOR_SETTINGS: dict[str, Any] = {
    "pi": {
        "model": "claude-sonnet-4-5",
        "thinkingLevel": "medium",
        "approval": "acceptEdits",
        "tools": ["read", "bash", "edit", "write"],
        "compaction": {"enabled": True, "reserveTokens": 16384, "keepRecentTokens": 20000},
    }
}
"""What an editor sends as ``initializationOptions`` (the VS Code client's ``pi.*`` settings)."""

VSCODE_CAPABILITIES: dict[str, Any] = {
    "workspace": {
        "applyEdit": True,
        "workspaceEdit": {"documentChanges": True, "resourceOperations": ["create", "rename", "delete"]},
        "didChangeConfiguration": {"dynamicRegistration": True},
        "didChangeWatchedFiles": {"dynamicRegistration": True, "relativePatternSupport": True},
        "symbol": {"dynamicRegistration": True},
        "executeCommand": {"dynamicRegistration": True},
        "configuration": True,
        "workspaceFolders": True,
        "fileOperations": {"dynamicRegistration": True, "didCreate": True, "willRename": True},
    },
    "textDocument": {
        "synchronization": {"dynamicRegistration": True, "willSave": True, "didSave": True},
        "completion": {"dynamicRegistration": True, "contextSupport": True, "insertTextMode": 2},
        "hover": {"dynamicRegistration": True, "contentFormat": ["markdown", "plaintext"]},
        "definition": {"dynamicRegistration": True, "linkSupport": True},
        "codeAction": {"dynamicRegistration": True, "isPreferredSupport": True},
        "publishDiagnostics": {"relatedInformation": True, "versionSupport": False},
    },
    "window": {"showMessage": {}, "showDocument": {"support": True}, "workDoneProgress": True},
    "general": {
        "staleRequestSupport": {"cancel": True, "retryOnContentModified": []},
        "regularExpressions": {"engine": "ECMAScript", "version": "ES2020"},
        "markdown": {"parser": "marked", "version": "1.1.0"},
        "positionEncodings": ["utf-16"],
    },
    "experimental": {"pi": {"approvals": True}},
}
"""A shortened copy of what vscode-languageclient 9 declares, with the extension's approvals flag."""

SERVER_COMMAND = [sys.executable, "-m", "pi_lsp", "--stdio"]
"""vscode-languageclient appends ``--stdio`` to the server's command line."""


async def startup(
    work: Path, runs: int, baseline: Path | None = None, first_after: float = 0.0
) -> dict[str, list[float]]:
    """Process start → ``initialize`` answered, and → first ``pi/`` request answered, the way an
    editor starts the server: ``--stdio``, VS Code's ``initialize`` (a workspace folder, the
    client's capabilities with the approvals flag, ``initializationOptions`` with settings),
    ``initialized``, then ``pi/continueRecent`` for the workspace (its
    session folder holds one small session, so the request opens it). With ``baseline`` (a
    checkout of another version, put first on PYTHONPATH) both are measured in turn, so the two
    columns come from one run under the same load. With ``first_after`` (seconds) the request is
    sent that long after ``initialized`` (as VS Code's chat sends it when the user first writes,
    possibly while pygls takes the connection over), and its own wait is measured too."""
    env = dict(os.environ, PI_CODING_AGENT_DIR=str(work / "agent"))
    workspace = work / "workspace"
    sessions = work / "startup-sessions"
    workspace.mkdir(exist_ok=True)
    sessions.mkdir(exist_ok=True)
    generate_session(sessions / "recent.jsonl", 200)
    env["PI_CODING_AGENT_SESSION_DIR"] = str(sessions)
    # `python -m` puts the working directory first on sys.path: each version runs from its checkout
    versions = {"": (env, ROOT)}
    if baseline is not None:
        versions["before: "] = (dict(env, PYTHONPATH=str(baseline)), baseline)
    params = {  # as VS Code's client sends them
        "processId": os.getpid(),
        "clientInfo": {"name": "Visual Studio Code", "version": "1.95.0"},
        "locale": "en",
        "rootPath": str(workspace),
        "rootUri": workspace.as_uri(),
        "capabilities": VSCODE_CAPABILITIES,
        "initializationOptions": EDITOR_SETTINGS,
        "trace": "off",
        "workspaceFolders": [{"uri": workspace.as_uri(), "name": workspace.name}],
    }
    for _, checkout in versions.values():
        # An installed package has its bytecode (pip compiles it); a checkout run with
        # PYTHONDONTWRITEBYTECODE=1 would compile every module on every start (+80-100 ms).
        compileall.compile_dir(str(checkout / "pi_lsp"), quiet=1)
    results: dict[str, list[float]] = {}
    for _ in range(runs):
        for label, (version_env, checkout) in versions.items():
            started = time.perf_counter()
            client = await RpcClient.start(SERVER_COMMAND, env=version_env, cwd=str(checkout), quiet=True)
            await client.request("initialize", params)
            results.setdefault(label + "initialize", []).append((time.perf_counter() - started) * 1000)
            client.notify("initialized", {})
            if first_after:
                await asyncio.sleep(first_after)
            sent = time.perf_counter()
            state = await client.request("pi/continueRecent", {"cwd": str(workspace)})
            answered = time.perf_counter()
            results.setdefault(label + "first request", []).append((answered - started) * 1000)
            if first_after:
                results.setdefault(label + "first request's wait", []).append((answered - sent) * 1000)
            if state.get("entryCount") != 200:
                raise RuntimeError(f"pi/continueRecent did not open the workspace's session: {state}")
            await client.close()
    return results


def session_file(work: Path, size: int, simple: bool, data: Path | None) -> tuple[Path, str]:
    """A copy (appends must not touch the cache) of gen_sessions' realistic file (generated once
    into ``data``, default .bench-data/), else a simple one."""
    if not simple:
        try:
            import shutil

            sys.path.insert(0, str(ROOT / "benchmarks"))
            from gen_sessions import DEFAULT_OUT, big_session

            target = work / f"bench-{size}.jsonl"
            shutil.copyfile(big_session(data or DEFAULT_OUT, size), target)
            return target, "benchmarks/gen_sessions.py (realistic: tool-heavy, branches, compactions)"
        except ImportError:
            pass
    return generate_session(work / f"bench-{size}.jsonl", size), "bench_server.generate_session (simple)"


async def round_trips(
    work: Path, size: int, runs: int, appends: int, simple: bool, data: Path | None = None
) -> dict[str, Any]:
    file, source = session_file(work, size, simple, data)
    env = dict(os.environ, PI_CODING_AGENT_DIR=str(work / "agent"))
    client = await RpcClient.start(env=env, quiet=True)
    await client.initialize(str(work))
    await client.request("pi/listSessions", {"cwd": str(work)})  # the server has finished starting
    started = time.perf_counter()
    state = await client.request("pi/openSession", {"path": str(file)}, timeout=600)
    open_ms = (time.perf_counter() - started) * 1000
    rows: dict[str, Any] = {
        "entries": state["entryCount"],
        "file MB": file.stat().st_size / 1e6,
        "open ms": open_ms,
        "source": source,
    }
    rows["pi/getTree"] = await _timed(client, "pi/getTree", {}, runs)
    rows["pi/getTree flat"] = await _timed(client, "pi/getTree", {"format": "flat"}, runs)
    await ui_round_trips(client, rows, runs * 4)
    rows["pi/buildContext"] = await _timed(client, "pi/buildContext", {}, runs)
    entry = {
        "type": "message",
        "message": {"role": "user", "content": [{"type": "text", "text": "one more"}]},
    }
    rows["pi/appendEntry"] = await _timed(client, "pi/appendEntry", {"entry": entry}, appends)
    rows["pi/buildContext after appends"] = await _timed(client, "pi/buildContext", {}, runs)
    await client.close()
    return rows


async def _fresh_open(work: Path, file: Path, then: str, params: dict[str, Any]) -> tuple[float, int]:
    """ms for ``pi/openSession`` + ``then`` in a server that has just started (and answered its
    first request), and the size of ``then``'s answer."""
    env = dict(os.environ, PI_CODING_AGENT_DIR=str(work / "agent"))
    client = await RpcClient.start(env=env, quiet=True)
    try:
        await client.initialize(str(work))
        await client.request("pi/listSessions", {"cwd": str(work)})
        # Start-up is measured on its own: the open is timed once the server has finished starting
        # (pygls loaded, the workspace's system prompt built), not against that work.
        await _wait_idle(client)
        started = time.perf_counter()
        await client.request("pi/openSession", {"path": str(file)}, timeout=600)
        body = await client.request_raw(then, params, timeout=600)
        elapsed = (time.perf_counter() - started) * 1000
        if b'"error":{' in body[:80]:
            raise RuntimeError(body[:300].decode())
        return elapsed, len(body)
    finally:
        await client.close()


async def _wait_idle(client: RpcClient, quiet_s: float = 0.3, limit_s: float = 20.0) -> None:
    """Until the server process has used no CPU for ``quiet_s`` (at most ``limit_s``)."""
    process = client._process
    if process is None:
        return
    stat = Path(f"/proc/{process.pid}/stat")

    def cpu() -> int:
        fields = stat.read_text().rsplit(")", 1)[1].split()
        return int(fields[11]) + int(fields[12])  # utime + stime, in clock ticks

    deadline = time.monotonic() + limit_s
    last = cpu()
    while time.monotonic() < deadline:
        await asyncio.sleep(quiet_s)
        now = cpu()
        if now == last:
            return
        last = now


def _pi_open(file: Path, work: Path) -> float:
    """pi's ``SessionManager.open`` + ``buildSessionContext()`` in-process (``pi_bench.mjs open``)."""
    import subprocess

    script = ROOT / "benchmarks" / "pi_bench.mjs"
    env = dict(os.environ, PI_CODING_AGENT_DIR=str(work / "agent"))
    done = subprocess.run(
        ["node", "--expose-gc", str(script), "open", str(file)],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    return float(orjson.loads(done.stdout.strip().splitlines()[-1])["total_ms"])


async def open_rows(work: Path, sizes: list[int], runs: int, simple: bool, data: Path | None) -> list[str]:
    """Open + the last 100 of the branch, and open + the whole context, each in a fresh server,
    interleaved with pi's open + context in-process, ``runs`` times per file (medians)."""
    lines = [
        OPEN_SECTION,
        "",
        f"`python benchmarks/bench_server.py --open-only --sizes {' '.join(map(str, sizes))} --runs {runs}"
        f"{' --simple' if simple else ''}` on {platform.machine()} {os.cpu_count()} CPUs, "
        f"{time.strftime('%Y-%m-%d')}, load {os.getloadavg()[0]:.1f} before.",
        "",
        "| file | ours: open + last 100 (`pi/getBranch`) | ours: open + whole context (`pi/buildContext`) "
        "| pi: open + context, in-process | ours / pi (whole context) | context size |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for size in sizes:
        file, source = session_file(work, size, simple, data)
        last: list[float] = []
        whole: list[float] = []
        pi: list[float] = []
        nbytes = 0
        for _ in range(runs):
            last.append((await _fresh_open(work, file, "pi/getBranch", {"limit": 100}))[0])
            elapsed, nbytes = await _fresh_open(work, file, "pi/buildContext", {})
            whole.append(elapsed)
            pi.append(_pi_open(file, work))
        ours_ms, pi_ms = statistics.median(whole), statistics.median(pi)
        lines.append(
            f"| {size:,} entries, {file.stat().st_size / 1e6:.1f} MB ({source.split(' ')[0]}) | "
            f"{statistics.median(last):.0f} ms | {ours_ms:.0f} ms | {pi_ms:.0f} ms | {ours_ms / pi_ms:.2f} | "
            f"{nbytes / 1e6:.1f} MB |"
        )
        file.unlink()
    lines += ["", f"Load after: {os.getloadavg()[0]:.1f}.", ""]
    return lines


async def ui_round_trips(client: RpcClient, rows: dict[str, Any], runs: int) -> None:
    """What editor panels ask for: the last 100 of the branch, the page before it, one tree level."""
    last = "pi/getBranch limit 100"
    rows[last] = await _timed(client, "pi/getBranch", {"limit": 100}, runs)
    page = await client.request("pi/getBranch", {"limit": 100}, timeout=600)
    before = page["entries"][0]["id"] if page["entries"] else None
    if before is not None:
        older = {"limit": 100, "beforeId": before}
        rows["pi/getBranch limit 100 beforeId"] = await _timed(client, "pi/getBranch", older, runs)
    rows["pi/getTree fold"] = await _timed(client, "pi/getTree", {"fold": True}, runs)
    rows["pi/getTree parentId null (roots)"] = await _timed(client, "pi/getTree", {"parentId": None}, runs)
    if before is not None:
        children = {"parentId": before}
        rows["pi/getTree parentId (one node's children)"] = await _timed(client, "pi/getTree", children, runs)


START_SECTION = "### Start-up"
OPEN_SECTION = "### Open, over LSP, against pi"
START_NOTE = (
    "Measured as editors start the server: `python -m pi_lsp --stdio`, VS Code's `initialize` (a "
    "workspace folder, the client's capabilities with the approvals flag, `initializationOptions.pi` "
    "with settings), `initialized`, then `pi/continueRecent`, which opens the workspace's "
    "session (200 entries); the package's bytecode is compiled first, as pip does on install "
    "(without it, as with `PYTHONDONTWRITEBYTECODE=1`, each start compiles every module: +80-100 ms). "
    "`initialize` is answered from the first message, before anything heavy is imported; the "
    "services are built next (the agent, the LLM client, compaction and the system-prompt machinery "
    "load on first use) and the session requests that follow (`pi/listSessions`, "
    "`pi/continueRecent`, `pi/openSession`, …) are answered before pygls and lsprotocol are imported "
    "(0.3–0.5 s, most of it lsprotocol's type module); pygls is imported once nothing waits, then "
    "takes over the connection (`pi_lsp/server/early.py`)."
)


def _startup_markdown(start: dict[str, list[float]], command: str, baseline: str = "") -> list[str]:
    lines = [START_SECTION, ""]
    if baseline:
        lines += [
            f"`{command}` on {platform.machine()} {os.cpu_count()} CPUs, {time.strftime('%Y-%m-%d')}: one "
            f"run, starts of both versions interleaved; *before* is the server at commit {baseline}.",
            "",
        ]
    lines += ["| measure | p50 ms | p90 ms | max ms | runs |", "|---|---:|---:|---:|---:|"]
    for name, samples in start.items():
        before = name.startswith("before: ")
        what = name.removeprefix("before: ")
        label = {
            "initialize": "process start → `initialize` response",
            "first request": "process start → first `pi/continueRecent` response",
            "first request's wait": "first `pi/continueRecent`, sent later: request → response",
        }[what]
        if before:
            label = f"before: {label}"
        lines.append(
            f"| {label} | {statistics.median(samples):.0f} | {_pct(samples, 0.9):.0f} | {max(samples):.0f} "
            f"| {len(samples)} |"
        )
    return [*lines, "", START_NOTE, ""]


def _markdown(start: dict[str, list[float]], sizes: dict[int, dict[str, Any]]) -> str:
    lines = [
        SECTION,
        "",
        f"`python benchmarks/bench_server.py` on {platform.machine()} {os.cpu_count()} CPUs, Python "
        f"{platform.python_version()}, {time.strftime('%Y-%m-%d')}. Real server over stdio; the client reads "
        "each response completely but does not parse big ones, so times are the server's plus the pipe.",
        "",
        *_startup_markdown(start, "python benchmarks/bench_server.py"),
    ]
    for size, rows in sizes.items():
        lines += [
            f"### {f'{size // 1000}k' if size % 1000 == 0 else size}-entry session",
            "",
            f"{rows['entries']} entries, {rows['file MB']:.1f} MB file from {rows['source']}, "
            f"`pi/openSession` {rows['open ms']:.0f} ms.",
            "",
            "| request | p50 ms | p99 ms | response size | runs |",
            "|---|---:|---:|---:|---:|",
        ]
        for name, value in rows.items():
            if not isinstance(value, tuple):
                continue
            samples, nbytes = value
            lines.append(
                f"| `{name}` | {_pct(samples, 0.5):.1f} | {_pct(samples, 0.99):.1f} | "
                f"{nbytes / 1e6:.2f} MB | {len(samples)} |"
            )
        lines.append("")
    lines.append(NOTE)
    return "\n".join(lines).rstrip() + "\n"


def _revision(checkout: Path | None) -> str:
    if checkout is None:
        return ""
    import subprocess

    done = subprocess.run(["git", "-C", str(checkout), "rev-parse", "--short", "HEAD"], capture_output=True)
    return done.stdout.decode().strip() or str(checkout)


def write_startup_docs(markdown: str) -> Path:
    """Replace only the start-up part of the "Language server" section of docs/benchmarks.md."""
    path = ROOT / "docs" / "benchmarks.md"
    text = path.read_text()
    section = text.index(SECTION + "\n")
    start = text.index(START_SECTION + "\n", section)
    end = text.index("\n### ", start + len(START_SECTION))
    path.write_text(text[:start] + markdown.rstrip() + "\n" + text[end:])
    return path


def write_docs(markdown: str) -> Path:
    """Replace (or append) the "Language server" section of docs/benchmarks.md, keeping the rest."""
    path = ROOT / "docs" / "benchmarks.md"
    text = path.read_text() if path.exists() else "# Benchmarks\n"
    start = text.find(SECTION + "\n")
    if start >= 0:
        end = text.find("\n## ", start + len(SECTION))
        text = text[:start] + markdown + (text[end + 1 :] if end >= 0 else "")
    else:
        text = text.rstrip() + "\n\n" + markdown
    path.write_text(text)
    return path


async def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--runs", type=int, default=15, help="round trips per read method")
    parser.add_argument("--appends", type=int, default=200)
    parser.add_argument("--start-runs", type=int, default=8)
    parser.add_argument(
        "--first-after",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="start-up: send the first request this long after initialized (default: at once)",
    )
    parser.add_argument("--write-docs", action="store_true")
    parser.add_argument("--simple", action="store_true", help="use the simple built-in session generator")
    parser.add_argument(
        "--startup-only", action="store_true", help="measure start-up only (docs: only its table)"
    )
    parser.add_argument(
        "--open-only",
        action="store_true",
        help="open + last 100 and open + whole context in fresh servers, against pi's open + context",
    )
    parser.add_argument(
        "--baseline", type=Path, help="a checkout of another version whose start-up is measured alongside"
    )
    parser.add_argument(
        "--smoke", action="store_true", help="a few seconds on a tiny session, data in the temporary folder"
    )
    args = parser.parse_args(argv)
    if args.smoke and args.write_docs:
        parser.error("--smoke numbers mean nothing: no --write-docs")
    if args.smoke:
        args.sizes, args.runs, args.appends, args.start_runs = [300], 2, 5, 1
    with tempfile.TemporaryDirectory(prefix="pi-lsp-bench-") as folder:
        work = Path(folder)
        data = work / "data" if args.smoke else None
        if args.open_only:
            print("\n".join(await open_rows(work, args.sizes, args.runs, args.simple, data)))
            return 0
        start = await startup(work, args.start_runs, args.baseline, args.first_after)
        if args.startup_only:
            command = "python benchmarks/bench_server.py --startup-only" + (
                f" --baseline … --start-runs {args.start_runs}" if args.baseline else ""
            )
            if args.first_after:
                command += f" --first-after {args.first_after:g}"
            markdown = "\n".join(_startup_markdown(start, command, _revision(args.baseline)))
            print(markdown)
            if args.write_docs:
                print(f"updated {write_startup_docs(markdown)}")
            return 0
        sizes = {}
        for size in args.sizes:
            runs = args.runs if size <= 20_000 else max(3, args.runs // 3)
            sizes[size] = await round_trips(work, size, runs, args.appends, args.simple, data)
    markdown = _markdown(start, sizes)
    print(markdown)
    if args.write_docs:
        print(f"updated {write_docs(markdown)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))
