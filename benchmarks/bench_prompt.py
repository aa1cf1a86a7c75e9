"""Benchmarks for the system-prompt side of pi-lsp.

1. Save-to-callback latency of the prompt watcher (target: under 200 ms), for each backend.
2. Cost of a full prompt rebuild (discovery + build + token counts) on a workspace with 100 skills
   and 20 context files, with the chars/4 estimate and, when available, tiktoken.
3. pi's own ``resources`` + ``systemPrompt`` on the same tree through the oracle, for a ratio
   (pi's figure includes the JSON round trip to the node co-process).

Run: ``.venv/bin/python benchmarks/bench_prompt.py [--saves N] [--rebuilds N] [--json]``
(``--smoke``: two saves and one rebuild each, only to check that it still runs, pi included).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from pi_lsp.prompt.assemble import TokenCounter, assemble_system_prompt  # noqa: E402
from pi_lsp.prompt.system_prompt import PiDocsPaths  # noqa: E402
from pi_lsp.prompt.watch import PromptWatcher  # noqa: E402

DOCS = PiDocsPaths("/pkg/README.md", "/pkg/docs", "/pkg/examples")


def _summary(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return {
        "n": len(samples),
        "median_ms": round(statistics.median(samples) * 1000, 2),
        "p95_ms": round(p95 * 1000, 2),
        "max_ms": round(ordered[-1] * 1000, 2),
    }


def build_tree(root: Path, skills: int = 100, context_files: int = 20) -> tuple[str, str, str]:
    """A cwd ``context_files`` levels deep with an AGENTS.md at each level and ``skills`` skills."""
    agent, home = root / "agent", root / "home"
    agent.mkdir()
    home.mkdir()
    level = root / "ws"
    for index in range(context_files):
        level = level / f"d{index:02d}"
        level.mkdir(parents=True)
        (level / "AGENTS.md").write_text(f"# Level {index}\n\n" + "Follow the house style. " * 40 + "\n")
    for index in range(skills):
        skill_dir = level / ".pi" / "skills" / f"skill-{index:03d}"
        skill_dir.mkdir(parents=True)
        (skill_dir / "SKILL.md").write_text(
            f"---\nname: skill-{index:03d}\n"
            f"description: Does task number {index} <carefully> & well.\n---\n\n"
            + "Step by step instructions.\n"
            * 20
        )
    return str(level), str(agent), str(home)


def bench_watcher(backend: str, saves: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        cwd, agent, home = build_tree(Path(tmp), skills=20, context_files=5)
        fired = threading.Event()
        stamps: list[float] = []

        def on_change(_cwd: str, _paths: list[str]) -> None:
            stamps.append(time.perf_counter())
            fired.set()

        watcher = PromptWatcher(on_change, agent_dir=agent, home=home, backend=backend)  # type: ignore[arg-type]
        watcher.add_root(cwd)
        watcher.start()
        time.sleep(0.3)
        samples: list[float] = []
        target = Path(cwd) / ".pi" / "skills" / "skill-007" / "SKILL.md"
        try:
            for index in range(saves):
                fired.clear()
                stamps.clear()
                start = time.perf_counter()
                target.write_text(f"---\nname: skill-007\ndescription: Edit {index}.\n---\n")
                if not fired.wait(5):
                    raise RuntimeError(f"{backend}: no callback for save {index}")
                samples.append(stamps[0] - start)
                time.sleep(0.25)  # let the burst close before the next save
        finally:
            watcher.stop()
    return _summary(samples)


def _tokenizers() -> dict[str, TokenCounter | None]:
    counters: dict[str, TokenCounter | None] = {"estimate": None}
    try:
        from pi_lsp.compaction.tokens import make_tokenizer

        counters["tiktoken"] = make_tokenizer("tiktoken")
    except Exception as error:  # the teammate's module may not exist yet, or tiktoken data may be missing
        print(f"(tiktoken tokenizer unavailable: {error})", file=sys.stderr)
    return counters


def bench_rebuild(rebuilds: int) -> tuple[dict[str, Any], dict[str, Any] | None]:
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        cwd, agent, home = build_tree(Path(tmp))
        for name, counter in _tokenizers().items():
            assemble_system_prompt(cwd, agent_dir=agent, home=home, tokenizer=counter, docs=DOCS)  # warm
            samples = []
            for _ in range(rebuilds):
                start = time.perf_counter()
                result = assemble_system_prompt(cwd, agent_dir=agent, home=home, tokenizer=counter, docs=DOCS)
                samples.append(time.perf_counter() - start)
            results[name] = {
                **_summary(samples),
                "skills": len(result.skills),
                "context_files": len(result.context_files),
                "prompt_tokens": result.tokens,
            }
        pi = bench_pi(cwd, agent, home, rebuilds)
    return results, pi


def bench_pi(cwd: str, agent: str, home: str, rounds: int) -> dict[str, Any] | None:
    try:
        from tests.oracle import PiOracle, unavailable_reason
    except ImportError:
        return None
    reason = unavailable_reason()
    if reason is not None:
        print(f"(pi oracle unavailable: {reason})", file=sys.stderr)
        return None
    oracle = PiOracle()
    try:

        def once() -> str:
            resources = oracle.result("resources", cwd=cwd, agentDir=agent, home=home)
            options = {
                "cwd": cwd,
                "skills": resources["skills"],
                "contextFiles": resources["agentsFiles"],
                "selectedTools": ["read", "bash", "edit", "write"],
            }
            text: str = oracle.result("systemPrompt", options=options, builtinToolMetadata=True)
            return text

        once()
        samples = []
        for _ in range(rounds):
            start = time.perf_counter()
            once()
            samples.append(time.perf_counter() - start)
        return _summary(samples)
    finally:
        oracle.close()


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--saves", type=int, default=20, help="saves per watcher backend")
    parser.add_argument("--rebuilds", type=int, default=20, help="prompt rebuilds per tokenizer")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of a report")
    parser.add_argument("--smoke", action="store_true", help="2 saves, 1 rebuild: does it still run?")
    args = parser.parse_args()
    if args.smoke:
        args.saves, args.rebuilds = 2, 1

    report: dict[str, Any] = {"watcher": {}}
    backends = ["watchdog", "poll"]  # watchdog is a dependency
    for backend in backends:
        report["watcher"][backend] = bench_watcher(backend, args.saves)
    report["rebuild"], report["pi"] = bench_rebuild(args.rebuilds)
    if report["pi"] is not None:
        report["ratio_pi_over_ours"] = round(
            report["pi"]["median_ms"] / report["rebuild"]["estimate"]["median_ms"], 2
        )

    if args.json:
        print(json.dumps(report, indent=2))
        return
    print("Save -> watcher callback (target < 200 ms; default debounce 100 ms)")
    for backend, stats in report["watcher"].items():
        verdict = "ok" if stats["median_ms"] < 200 else "SLOW"
        print(
            f"  {backend:9s} median {stats['median_ms']:7.1f} ms  p95 {stats['p95_ms']:7.1f} ms"
            f"  max {stats['max_ms']:7.1f} ms  [{verdict}]"
        )
    print("Prompt rebuild, 100 skills + 20 context files (discovery + build + token counts)")
    for name, stats in report["rebuild"].items():
        print(
            f"  {name:9s} median {stats['median_ms']:7.1f} ms  p95 {stats['p95_ms']:7.1f} ms"
            f"  ({stats['skills']} skills, {stats['context_files']} context files,"
            f" {stats['prompt_tokens']} tokens)"
        )
    if report["pi"] is not None:
        stats = report["pi"]
        print(
            f"pi 0.73.1 resources + systemPrompt via oracle: median {stats['median_ms']:.1f} ms"
            f"  p95 {stats['p95_ms']:.1f} ms  (pi / ours = {report['ratio_pi_over_ours']}x)"
        )
    else:
        print("pi oracle not available: no ratio")


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    main()
