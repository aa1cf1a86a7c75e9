"""Model-call benchmark: reading a streamed reply, ours (real ``anthropic`` SDK) against pi's provider.

Run: ``.venv/bin/python benchmarks/bench_llm_stream.py [--repeat 10] [--no-pi]`` (``--smoke``: 1/20 of
the deltas, one call after the warm-up, only to check that it still runs, pi included)

The loopback fake Messages API runs in its own process and serves the same reply to both sides:

* ``text``: 2000 text deltas (a long answer);
* ``tool``: one ``write`` call whose ~210 KB ``content`` arrives in 4000 ``input_json_delta``s.

Per call: client CPU (ms), wall time (ms) and time to the first delta (ms), as medians over
``--repeat`` calls after two warm-up calls. pi's side is pi-ai's ``streamSimple`` in one node process
(``tests/pi/stream_call.mjs``); ours is ``stream_assistant_message`` with one SDK client.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pi_lsp.llm.anthropic_client import create_async_client  # noqa: E402
from pi_lsp.llm.models import find_model  # noqa: E402
from pi_lsp.llm.request import build_messages_request  # noqa: E402
from pi_lsp.llm.stream import stream_assistant_message  # noqa: E402
from tests.llm.fake_anthropic import Text, ToolUse, assistant_stream  # noqa: E402
from tests.oracle import oracle_dir, unavailable_reason  # noqa: E402

KEY = "sk-ant-api03-bench-0000000000000000"
MODEL_ID = "claude-sonnet-4-5"
SYSTEM = "Benchmark {name}."
MESSAGES = [{"role": "user", "content": [{"type": "text", "text": "Go"}], "timestamp": 1}]

_SERVER = r"""
import asyncio, json, sys
sys.path.insert(0, sys.argv[1])
from tests.llm.fake_anthropic import FakeAnthropic, Reply
scripts = json.loads(sys.stdin.read())

def route(recorded):
    name = recorded.body["system"][0]["text"].split()[1].rstrip(".")
    return Reply(events=scripts[name])

async def main():
    async with FakeAnthropic(route=route) as fake:
        print(fake.url, flush=True)
        await asyncio.Event().wait()

asyncio.run(main())
"""


def scenarios(scale: int = 1) -> dict[str, list[str]]:
    """The two replies, with 1/``scale`` of the full size and deltas."""
    content = "print('hello world')\n" * (10000 // scale)
    return {
        "text": assistant_stream(Text("word " * (4000 // scale), chunks=2000 // scale)),
        "tool": assistant_stream(
            ToolUse("toolu_1", "write", {"path": "a.py", "content": content}, chunks=4000 // scale)
        ),
    }


async def ours(url: str, name: str, repeat: int) -> list[dict[str, float]]:
    model = find_model(MODEL_ID)
    assert model is not None
    request = build_messages_request(
        model=model, system_prompt=SYSTEM.format(name=name), messages=MESSAGES, tools=[], thinking_level="off"
    )
    client = create_async_client(KEY, url, max_retries=0)
    samples: list[dict[str, float]] = []
    try:
        for _ in range(repeat + 2):
            first: list[float] = []
            wall, cpu = time.perf_counter(), time.process_time()

            def on_event(event: dict[str, Any], first: list[float] = first, wall: float = wall) -> None:
                if not first and event["type"].endswith("_delta"):
                    first.append((time.perf_counter() - wall) * 1000)

            message = await stream_assistant_message(
                client, request, model, abort=asyncio.Event(), on_event=on_event
            )
            assert message["stopReason"] in ("stop", "toolUse"), message.get("errorMessage")
            samples.append({
                "cpuMs": (time.process_time() - cpu) * 1000,
                "wallMs": (time.perf_counter() - wall) * 1000,
                "firstDeltaMs": first[0] if first else float("nan"),
            })  # fmt: skip
    finally:
        await client.close()
    return samples[2:]


def pi(url: str, name: str, repeat: int) -> list[dict[str, float]]:
    call = {"baseUrl": url, "modelId": MODEL_ID, "apiKey": KEY,
            "context": {"systemPrompt": SYSTEM.format(name=name), "messages": MESSAGES}}  # fmt: skip
    env = dict(os.environ, PI_ORACLE_DIR=str(oracle_dir()))
    completed = subprocess.run(
        ["node", str(ROOT / "tests" / "pi" / "stream_call.mjs")],
        input=json.dumps({"calls": [call] * (repeat + 2)}), capture_output=True, text=True, env=env,
        check=True, timeout=600,
    )  # fmt: skip
    results = json.loads(completed.stdout)["results"][2:]
    return [{key: result[key] for key in ("cpuMs", "wallMs", "firstDeltaMs")} for result in results]


def median(samples: list[dict[str, float]], key: str) -> float:
    return statistics.median(sample[key] for sample in samples)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--no-pi", action="store_true")
    parser.add_argument("--smoke", action="store_true", help="1/20 of the deltas, one call: still runs?")
    args = parser.parse_args()
    if args.smoke:
        args.repeat = 1
    scripts = scenarios(20 if args.smoke else 1)
    server = subprocess.Popen(
        [sys.executable, "-c", _SERVER, str(ROOT)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert server.stdin is not None and server.stdout is not None
    server.stdin.write(json.dumps(scripts))
    server.stdin.close()
    url = server.stdout.readline().strip()
    with_pi = not args.no_pi and unavailable_reason() is None
    try:
        print("| reply | side | CPU ms p50 | wall ms p50 | first delta ms p50 | CPU ratio ours/pi |")
        print("|---|---|---:|---:|---:|---:|")
        for name, frames in scripts.items():
            mine = asyncio.run(ours(url, name, args.repeat))
            theirs = pi(url, name, args.repeat) if with_pi else None
            events = sum(1 for frame in frames if "_delta" in frame.split("\n", 1)[0])
            ratio = f"{median(mine, 'cpuMs') / median(theirs, 'cpuMs'):.2f}" if theirs else "—"
            for side, samples in (("pi-lsp", mine), ("pi", theirs)):
                if samples is None:
                    continue
                print(f"| {name} ({events} deltas) | {side} | {median(samples, 'cpuMs'):.1f} | "
                      f"{median(samples, 'wallMs'):.1f} | {median(samples, 'firstDeltaMs'):.2f} | "
                      f"{ratio if side == 'pi-lsp' else ''} |")  # fmt: skip
    finally:
        server.terminate()
        server.wait(10)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
