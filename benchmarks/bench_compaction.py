"""Compaction benchmark: prepare_compaction on a ~1M-token branch, token counting, and pi itself.

Run: ``.venv/bin/python benchmarks/bench_compaction.py [--tokens 1000000] [--repeat 20] [--no-pi]``
(``--smoke``: a ~20k-token branch, one repeat, only to check that it still runs, pi included).

Measures, on one generated root→leaf branch of realistic coding-agent turns:

* ``prepare_compaction`` after "open" (the per-entry :class:`TokenCache` warmed once, as the
  server does when it loads a session) and cold (no cache), as medians;
* token-counting throughput of pi's chars/4 estimate versus cl100k (tiktoken, offline);
* pi 0.73.1's own ``prepareCompaction`` on the same entries through the differential oracle
  (node co-process), when node and the package are installed, with ratios.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pi_lsp.compaction import CompactionSettings, TokenCache, prepare_compaction  # noqa: E402
from pi_lsp.compaction.tokenizers import EstimateTokenizer, TiktokenTokenizer  # noqa: E402
from pi_lsp.compaction.tokens import estimate_message_tokens, message_text  # noqa: E402

_VOCABULARY = (
    "the function returns a value when called with the session entry id and parent id of the "
    "compaction summary file path src lib test assert error message token cache branch leaf"
)
WORDS = _VOCABULARY.split(" ")


def _prose(rng: random.Random, chars: int) -> str:
    out: list[str] = []
    size = 0
    while size < chars:
        word = rng.choice(WORDS)
        out.append(word)
        size += len(word) + 1
    return " ".join(out)


def _code(rng: random.Random, chars: int) -> str:
    lines: list[str] = []
    size = 0
    while size < chars:
        name, note = f"{rng.choice(WORDS)}_{rng.randint(0, 999)}", rng.choice(WORDS)
        line = f"    def {name}(self, x: int) -> int:  # {note}"
        lines.append(line)
        size += len(line) + 1
    return "\n".join(lines)


def generate_branch(target_tokens: int, seed: int = 7) -> list[dict[str, Any]]:
    """A linear branch of user → (assistant tool call → tool result)* → assistant turns."""
    rng = random.Random(seed)
    entries: list[dict[str, Any]] = []
    tokens = 0
    clock = 1_767_225_600_000

    def add(entry: dict[str, Any]) -> None:
        nonlocal tokens, clock
        clock += rng.randint(500, 20_000)
        entry["id"] = f"{len(entries):08x}"
        entry["parentId"] = entries[-1]["id"] if entries else None
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(clock / 1000))
        entry["timestamp"] = f"{stamp}.{clock % 1000:03d}Z"
        entries.append(entry)
        if entry["type"] == "message":
            tokens += estimate_message_tokens(entry["message"])

    compacted = False
    while tokens < target_tokens:
        add({"type": "message", "message": {"role": "user", "content": _prose(rng, rng.randint(80, 600)),
                                            "timestamp": clock}})  # fmt: skip
        for step in range(rng.randint(2, 8)):
            tool = rng.choice(["read", "read", "edit", "bash", "write"])
            path = f"src/{rng.choice(WORDS)}_{rng.randint(0, 40)}.py"
            args: dict[str, Any] = {"path": path}
            if tool == "edit":
                args.update(oldText=_code(rng, 200), newText=_code(rng, 240))
            elif tool == "write":
                args["content"] = _code(rng, 1500)
            elif tool == "bash":
                args = {"command": f"pytest -q tests/test_{rng.choice(WORDS)}.py"}
            call_id = f"call_{len(entries)}"
            usage = {"input": 20_000 + tokens // 10, "output": 300, "cacheRead": 0, "cacheWrite": 0}
            usage["totalTokens"] = sum(usage.values())
            add({"type": "message", "message": {
                "role": "assistant", "api": "anthropic-messages", "provider": "anthropic",
                "model": "claude-sonnet-4-5", "stopReason": "toolUse", "usage": usage, "timestamp": clock,
                "content": [
                    {"type": "thinking", "thinking": _prose(rng, rng.randint(0, 400))},
                    {"type": "text", "text": _prose(rng, rng.randint(20, 300))},
                    {"type": "toolCall", "id": call_id, "name": tool, "arguments": args}]}})  # fmt: skip
            add({"type": "message", "message": {
                "role": "toolResult", "toolCallId": call_id, "toolName": tool, "isError": step == 3,
                "content": [{"type": "text", "text": _code(rng, rng.randint(200, 4000))}],
                "timestamp": clock}})  # fmt: skip
        add({"type": "message", "message": {
            "role": "assistant", "api": "anthropic-messages", "provider": "anthropic",
            "model": "claude-sonnet-4-5", "stopReason": "stop", "timestamp": clock,
            "usage": {"input": 150_000, "output": 900, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0},
            "content": [{"type": "text", "text": _prose(rng, rng.randint(100, 900))}]}})  # fmt: skip
        if not compacted and tokens > target_tokens // 2:
            compacted = True
            kept = entries[-20]["id"]
            add({"type": "compaction", "summary": "## Goal\n" + _prose(rng, 3000), "firstKeptEntryId": kept,
                 "tokensBefore": tokens, "fromHook": False,
                 "details": {"readFiles": ["src/a.py"], "modifiedFiles": ["src/b.py"]}})  # fmt: skip
    return entries


def median_ms(fn: Callable[[], object], repeat: int) -> float:
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - started) * 1000)
    return statistics.median(samples)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=1_000_000, help="branch size in pi-estimated tokens")
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--no-pi", action="store_true", help="skip the pi oracle comparison")
    parser.add_argument("--smoke", action="store_true", help="a ~20k-token branch, once: does it still run?")
    options = parser.parse_args()
    if options.smoke:
        options.tokens, options.repeat = 20_000, 1

    started = time.perf_counter()
    branch = generate_branch(options.tokens)
    total_estimate = sum(estimate_message_tokens(e["message"]) for e in branch if e["type"] == "message")
    print(f"branch: {len(branch)} entries, {total_estimate:,} estimated tokens "
          f"(generated in {time.perf_counter() - started:.1f}s)")  # fmt: skip
    settings = CompactionSettings()

    cache = TokenCache()

    def reopen() -> None:
        cache.clear()
        cache.warm(branch)

    open_ms = median_ms(reopen, 3)
    warm_ms = median_ms(lambda: prepare_compaction(branch, settings, cache), options.repeat)
    cold_ms = median_ms(lambda: prepare_compaction(branch, settings), max(3, options.repeat // 4))
    prep = prepare_compaction(branch, settings, cache)
    assert prep is not None
    view = prep.summary_view()
    print(f"open (count every entry once):      {open_ms:8.1f} ms")
    verdict = "OK" if warm_ms < 50 else "over the 50 ms target"
    print(f"prepare_compaction, warm cache:     {warm_ms:8.2f} ms  ({verdict})")
    print(f"prepare_compaction, no cache:       {cold_ms:8.2f} ms")
    print(f"  -> summarize {view['summarizeCount']}, prefix {view['turnPrefixCount']}, "
          f"tokensBefore {view['tokensBefore']:,}, split {view['isSplitTurn']}")  # fmt: skip

    messages = [e["message"] for e in branch if e["type"] == "message"]
    texts = [message_text(m)[0] for m in messages]
    megabytes = sum(len(t.encode()) for t in texts) / 1e6
    estimate = EstimateTokenizer()
    est_ms = median_ms(lambda: [estimate_message_tokens(m) for m in messages], 5)
    est_text_ms = median_ms(lambda: [estimate.count(t) for t in texts], 5)
    tiktoken = TiktokenTokenizer()
    tik_ms = median_ms(lambda: [tiktoken.count(t) for t in texts], 3)
    batch_ms = median_ms(lambda: tiktoken.count_many(texts), 3)
    tik_tokens = sum(tiktoken.count_many(texts))
    print(f"token counting over {len(messages)} messages, {megabytes:.1f} MB of text:")
    for label, ms in [
        ("estimate (pi's per-message rules)", est_ms),
        ("estimate (chars/4 on text)", est_text_ms),
        ("tiktoken cl100k, one by one", tik_ms),
        ("tiktoken cl100k, batched", batch_ms),
    ]:
        print(f"  {label + ':':35s}{ms:8.1f} ms  {megabytes / ms * 1000:8.1f} MB/s")
    print(f"  ratio tiktoken/estimate time: {tik_ms / est_ms:.1f}x; cl100k tokens {tik_tokens:,} "
          f"vs estimate {total_estimate:,} ({tik_tokens / total_estimate:.2f}x)")  # fmt: skip

    if options.no_pi:
        return 0
    try:
        from tests.oracle import PiOracle, unavailable_reason
    except ImportError as exc:  # pragma: no cover - run from a checkout
        print(f"pi oracle: unavailable ({exc})")
        return 0
    reason = unavailable_reason()
    if reason is not None:
        print(f"pi oracle: skipped ({reason})")
        return 0
    oracle = PiOracle()
    try:
        oracle.result("version")
        noop_ms = median_ms(lambda: oracle.result("version"), 5)
        pi_result: dict[str, Any] = {}

        def run_pi() -> None:
            pi_result.update(oracle.result("prepare", pathEntries=branch, settings=settings.as_pi(),
                                           summaryOnly=True))  # fmt: skip

        pi_ms = median_ms(run_pi, 5)
    finally:
        oracle.close()
    same = (
        len(pi_result["messagesToSummarize"]) == view["summarizeCount"]
        and pi_result["tokensBefore"] == view["tokensBefore"]
        and pi_result["firstKeptEntryId"] == view["firstKeptEntryId"]
    )
    print(f"pi prepareCompaction via oracle:    {pi_ms:8.1f} ms round trip (incl. sending "
          f"{len(branch)} entries as JSON; an empty request costs {noop_ms:.1f} ms)")  # fmt: skip
    print(f"  same answer as ours: {same}")
    print(f"  ratio pi round trip / ours warm: {pi_ms / warm_ms:.0f}x; / ours cold: {pi_ms / cold_ms:.1f}x")
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
