"""System-prompt benchmark over LSP: from saving a file to receiving ``pi/systemPromptChanged``.

The real server runs over stdio with its own agent dir and HOME in a temporary folder; the client
(``RpcClient``, no file watchers of its own, like Neovim 0.7) saves a file and times the arrival of
the notification, which comes after the server's watcher noticed the save, waited out the burst
(100 ms without events), rebuilt the prompt and published the diagnostics. Scenarios:

* a small workspace: its AGENTS.md;
* a large one (20 directory levels with an AGENTS.md each, 100 skills): a SKILL.md deep in the
  tree, the agent dir's AGENTS.md (outside the workspace), and a change reported by the client
  (``workspace/didChangeWatchedFiles``, nothing written);
* round trips of ``pi/getSystemPrompt`` and of a hover on a SKILL.md in the large workspace;
* ``--roots`` sessions of distinct cwds (1,000) opened before the first ``pi/getSystemPrompt``,
  which answers once every one of them is watched, then a save of an AGENTS.md in one of them.

Run: ``.venv/bin/python benchmarks/bench_prompt_server.py [--saves N] [--write-docs]``. With
``--write-docs`` the "System prompt (server)" section of ``docs/benchmarks.md`` is replaced (or
added); other sections are kept. Target: save → notification under 200 ms. ``--smoke``: two saves and
two round trips each, only to check that it still runs.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_prompt import build_tree  # noqa: E402

from pi_lsp.client.rpc_client import RpcClient  # noqa: E402

SECTION = "## System prompt (server)"
CHANGED = "pi/systemPromptChanged"
GAP_S = 0.3  # quiet time between saves, so every save is a burst of its own


def _pct(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def _row(samples: list[float]) -> dict[str, float]:
    return {
        "n": len(samples),
        "p50": statistics.median(samples) * 1000,
        "p95": _pct(samples, 0.95) * 1000,
        "max": max(samples) * 1000,
    }


async def _start(root: Path, workspace: Path) -> RpcClient:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PI_CODING_AGENT")}
    env.update(PI_CODING_AGENT_DIR=str(root / "agent"), HOME=str(root / "home"))
    env.pop("ANTHROPIC_API_KEY", None)
    client = await RpcClient.start(env=env, cwd=str(root), quiet=True)
    await client.initialize(str(workspace))
    await client.request("pi/getSystemPrompt", {})  # answered once the workspace is watched
    return client


async def _saves(client: RpcClient, cwd: Path, change: Any, saves: int) -> list[float]:
    """Time ``change(i)`` → the ``pi/systemPromptChanged`` for ``cwd``, ``saves`` times."""
    samples: list[float] = []
    for index in range(saves):
        await asyncio.sleep(GAP_S)
        client.drain_notifications()
        started = time.perf_counter()
        change(index)
        params = await client.next_notification(CHANGED, timeout=10)
        samples.append(time.perf_counter() - started)
        assert params["cwd"] == str(cwd), params
    return samples


async def _round_trips(client: RpcClient, method: str, params: Any, runs: int) -> list[float]:
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        await client.request(method, params)
        samples.append(time.perf_counter() - started)
    return samples


async def many_roots(roots: int) -> dict[str, dict[str, float]]:
    """The first ``pi/getSystemPrompt`` after ``roots`` sessions of distinct cwds were opened (the
    prompt service not yet built), then save → notification in the last of them."""
    with tempfile.TemporaryDirectory(prefix="pi-lsp-bench-prompt-") as folder:
        root = Path(folder)
        workspace = root / "ws"
        for sub in ("agent", "home", "ws"):
            (root / sub).mkdir()
        cwds = [root / "projects" / f"p{n:04d}" for n in range(roots)]
        for cwd in cwds:
            cwd.mkdir(parents=True)
        env = {k: v for k, v in os.environ.items() if not k.startswith("PI_CODING_AGENT")}
        env.update(PI_CODING_AGENT_DIR=str(root / "agent"), HOME=str(root / "home"))
        env.pop("ANTHROPIC_API_KEY", None)
        client = await RpcClient.start(env=env, cwd=str(root), quiet=True)
        try:
            await client.initialize(str(workspace))
            for cwd in cwds:
                await client.request("pi/newSession", {"cwd": str(cwd), "persist": False})
            first = await _round_trips(client, "pi/getSystemPrompt", {}, 1)
            agents = cwds[-1] / "AGENTS.md"
            saves = await _saves(client, cwds[-1], lambda i: agents.write_text(f"Rules {i}.\n"), 3)
        finally:
            await client.close()
    return {
        f"first `pi/getSystemPrompt` with {roots:,} session roots": _row(first),
        f"{roots:,} session roots: save one root's AGENTS.md": _row(saves),
    }


async def run(saves: int, runs: int, roots: int) -> dict[str, dict[str, float]]:
    rows: dict[str, dict[str, float]] = {}
    if roots:
        rows.update(await many_roots(roots))
    with tempfile.TemporaryDirectory(prefix="pi-lsp-bench-prompt-") as folder:
        root = Path(folder)
        for sub in ("agent", "home", "ws"):
            (root / sub).mkdir()
        small = root / "ws"
        agents = small / "AGENTS.md"
        agents.write_text("# Rules\n\nRun the tests.\n")
        client = await _start(root, small)
        try:
            rows["small workspace: save AGENTS.md"] = _row(
                await _saves(
                    client, small, lambda i: agents.write_text(f"# Rules\n\nRun the tests {i}.\n"), saves
                )
            )
        finally:
            await client.close()

    with tempfile.TemporaryDirectory(prefix="pi-lsp-bench-prompt-") as folder:
        root = Path(folder)
        cwd = Path(build_tree(root)[0])
        client = await _start(root, cwd)
        skill = cwd / ".pi" / "skills" / "skill-042" / "SKILL.md"
        global_agents = root / "agent" / "AGENTS.md"

        def save_skill(index: int) -> None:
            skill.write_text(f"---\nname: skill-042\ndescription: Edited {index} times.\n---\n\nSteps.\n")

        def report(index: int) -> None:
            uri = (cwd / "AGENTS.md").as_uri()
            client.notify("workspace/didChangeWatchedFiles", {"changes": [{"uri": uri, "type": 2}]})

        try:
            rows["100 skills, 20 AGENTS.md: save a SKILL.md"] = _row(
                await _saves(client, cwd, save_skill, saves)
            )
            rows["100 skills, 20 AGENTS.md: save the agent dir's AGENTS.md"] = _row(
                await _saves(client, cwd, lambda i: global_agents.write_text(f"Global rules, v{i}.\n"), saves)
            )
            rows["100 skills, 20 AGENTS.md: client-sent didChangeWatchedFiles"] = _row(
                await _saves(client, cwd, report, saves)
            )
            rows["`pi/getSystemPrompt` round trip (100 skills)"] = _row(
                await _round_trips(client, "pi/getSystemPrompt", {}, runs)
            )
            hover = {"textDocument": {"uri": skill.as_uri()}, "position": {"line": 0, "character": 0}}
            rows["`textDocument/hover` on a SKILL.md round trip"] = _row(
                await _round_trips(client, "textDocument/hover", hover, runs)
            )
        finally:
            await client.close()
    return rows


def markdown(rows: dict[str, dict[str, float]]) -> str:
    lines = [
        SECTION,
        "",
        f"`python benchmarks/bench_prompt_server.py` on {platform.machine()} {os.cpu_count()} CPUs, Python "
        f"{platform.python_version()}, {time.strftime('%Y-%m-%d')}. The real server over stdio, watching "
        "by itself (the client registers no file watchers, like Neovim 0.7; `watchdog`/inotify backend), "
        "tiktoken token counts. Save → notification is measured from just before the write to the "
        "arrival of `pi/systemPromptChanged` at the client. Target: under 200 ms.",
        "",
        "| measure | p50 ms | p95 ms | max ms | runs |",
        "|---|---:|---:|---:|---:|",
    ]
    for name, row in rows.items():
        lines.append(f"| {name} | {row['p50']:.1f} | {row['p95']:.1f} | {row['max']:.1f} | {row['n']:.0f} |")
    lines += [
        "",
        "Most of a save's latency is the watcher's debounce: a burst ends after 100 ms without "
        "events (an editor's write-rename-chmod or a `git checkout` is one burst). Then the prompt is "
        "rebuilt from disk (discovery, prompt text, token counts: a few ms for a small workspace, "
        "60–70 ms with 100 skills here) and the notification is sent; the per-file diagnostics are "
        "computed and published right after it. A client-sent change goes through the same "
        "debouncer. A hover answers from the last build. Two changes brought the 100-skill save from "
        "~290 ms to ~175 ms: the native watches ask only for write, create, delete and move events "
        "(inotify otherwise reports every open and read-only close, and each rebuild reads every "
        "skill), and the notification no longer waits for the diagnostics.",
    ]
    return "\n".join(lines) + "\n"


def write_docs(text: str) -> Path:
    """Replace (or append) this section of docs/benchmarks.md, keeping the others."""
    path = ROOT / "docs" / "benchmarks.md"
    current = path.read_text() if path.exists() else "# Benchmarks\n"
    start = current.find(SECTION + "\n")
    if start >= 0:
        end = current.find("\n## ", start + len(SECTION))
        current = current[:start] + text + (current[end:] if end >= 0 else "")
    else:
        current = current.rstrip() + "\n\n" + text
    path.write_text(current)
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--saves", type=int, default=20, help="saves per scenario")
    parser.add_argument("--runs", type=int, default=20, help="round trips per request")
    parser.add_argument("--roots", type=int, default=1000, help="session roots of distinct cwds (0: none)")
    parser.add_argument("--write-docs", action="store_true")
    parser.add_argument("--smoke", action="store_true", help="2 saves, 2 round trips: does it still run?")
    args = parser.parse_args(argv)
    if args.smoke and args.write_docs:
        parser.error("--smoke numbers mean nothing: no --write-docs")
    if args.smoke:
        args.saves, args.runs, args.roots = 2, 2, 20
    rows = asyncio.run(run(args.saves, args.runs, args.roots))
    text = markdown(rows)
    print(text)
    if args.write_docs:
        print(f"wrote {write_docs(text)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
