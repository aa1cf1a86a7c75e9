"""Offline compaction of a big session must not stall the server's other work.

The digest runs in a worker thread, sharing the interpreter lock with the event loop; what held
the lock for seconds were the cyclic collector's full passes over the big session's heap,
triggered by the preparation's and the digest's allocations, and the model transcript (hundreds
of megabytes of strings for 60k messages) that the offline summariser never reads. These tests
check both causes directly (no timing): the collector is paused wherever compaction allocates in
bulk, and no transcript is built. ``benchmarks/bench_blocking.py`` measures the stall itself.
"""

from __future__ import annotations

import gc
from pathlib import Path
from typing import Any

import orjson
import pytest

from pi_lsp.llm import summarizer
from pi_lsp.service import compaction as compaction_service
from pi_lsp.service.build import build_service
from pi_lsp.service.registry import Client


def write_session(path: Path, turns: int) -> None:
    """A linear session of ``turns`` user/assistant/tool-result triples, big enough to compact."""
    lines = [{"type": "session", "version": 3, "id": "big", "timestamp": "2026-01-01T00:00:00.000Z",
              "cwd": str(path.parent)}]  # fmt: skip
    parent = None
    for turn in range(turns):
        messages: list[dict[str, Any]] = [
            {"role": "user", "content": f"Please look at file {turn} and fix it. " * 20, "timestamp": turn},
            {"role": "assistant", "content": [
                {"type": "text", "text": f"Reading file {turn}."},
                {"type": "toolCall", "id": f"call{turn}", "name": "read",
                 "arguments": {"path": f"src/f{turn}.py"}},
            ], "api": "anthropic-messages", "provider": "anthropic", "model": "claude-sonnet-4-5",
             "usage": {"input": 10, "output": 10, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 20,
                       "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}},
             "stopReason": "toolUse", "timestamp": turn},
            {"role": "toolResult", "toolCallId": f"call{turn}", "toolName": "read",
             "content": [{"type": "text", "text": "x = 1\n" * 200}], "isError": False, "timestamp": turn},
        ]  # fmt: skip
        for number, message in enumerate(messages):
            entry_id = f"e{turn}-{number}"
            lines.append({"type": "message", "id": entry_id, "parentId": parent,
                          "timestamp": "2026-01-01T00:00:00.000Z", "message": message})  # fmt: skip
            parent = entry_id
    path.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))


async def test_offline_compaction_pauses_the_collector_and_builds_no_transcript(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    path = tmp_path / "big.jsonl"
    write_session(path, 150)
    collector_on: dict[str, list[bool]] = {"prepare": [], "digest": []}
    transcripts: list[int] = []
    real_prepare, real_digest, real_transcript = (
        compaction_service.prepare_compaction,
        summarizer.offline_summary,
        summarizer.transcript,
    )

    def prepare(*args: Any) -> Any:
        collector_on["prepare"].append(gc.isenabled())
        return real_prepare(*args)

    def digest(request: Any) -> str:
        collector_on["digest"].append(gc.isenabled())
        return real_digest(request)

    def transcript(messages: Any) -> str:
        transcripts.append(len(messages))
        return real_transcript(messages)

    monkeypatch.setattr(compaction_service, "prepare_compaction", prepare)
    monkeypatch.setattr(summarizer, "offline_summary", digest)
    monkeypatch.setattr(summarizer, "transcript", transcript)
    service = build_service()
    client = Client()
    client.settings.set_initialization_options({"pi": {"summarizer": "offline", "tokenizer": "estimate"}})
    service.connect(client)
    try:
        state = await service.sessions.open_session(client, str(path))
        assert gc.isenabled()
        result = await service.compaction.compact(client, state["sessionId"])
        assert result["summarizer"] == "offline"
        assert result["summary"].startswith("*Offline summary")
        assert collector_on == {"prepare": [False], "digest": [False]}
        assert transcripts == []  # the offline digest reads the messages, not a model prompt
        assert gc.isenabled()  # and the collector is back on afterwards
    finally:
        await service.close()


def test_what_a_paused_block_made_is_left_out_of_the_collectors_passes() -> None:
    """The collector's first pass after a pause would scan everything made during it (half a
    second for a 60k-message compaction, every thread stopped): it is frozen instead, and still
    alive and tracked."""
    from pi_lsp.gcpause import gc_paused

    with gc_paused():
        kept = [[number] for number in range(50_000)]
    assert gc.isenabled()
    assert gc.get_freeze_count() >= len(kept)
    last = kept[-1]
    assert gc.is_tracked(last)
    assert not any(found is last for found in gc.get_objects())  # in no generation a pass scans
    frozen = gc.get_freeze_count()
    with gc_paused():
        few = [[number] for number in range(100)]
    assert gc.get_freeze_count() == frozen and gc.is_tracked(few[0])  # a small block freezes nothing


async def test_another_sessions_request_is_answered_while_a_big_compaction_runs(tmp_path: Path) -> None:
    """Through the real server: a request on another session, sent right after ``pi/compact`` of
    a big session, is answered before the compaction is (no timing: the order of the answers)."""
    import asyncio
    import os

    from pi_lsp.client.rpc_client import RpcClient

    path = tmp_path / "big.jsonl"
    write_session(path, 3_000)
    env = dict(os.environ, PI_CODING_AGENT_DIR=str(tmp_path / "agent"))
    env.pop("ANTHROPIC_API_KEY", None)
    client = await RpcClient.start(env=env, quiet=True)
    try:
        await client.initialize(str(tmp_path), {"pi": {"summarizer": "offline", "tokenizer": "estimate"}})
        other = await client.request("pi/newSession", {"sessionDir": str(tmp_path / "other")})
        state = await client.request("pi/openSession", {"path": str(path)})
        answered: list[str] = []

        async def ask(name: str, method: str, params: dict[str, Any]) -> None:
            await client.request(method, params, timeout=120)
            answered.append(name)

        compaction = asyncio.ensure_future(ask("compact", "pi/compact", {"session": state["sessionId"]}))
        await asyncio.sleep(0.05)  # the compaction's request goes first
        await ask("other", "pi/getSessionState", {"session": other["sessionId"]})
        await compaction
        assert answered == ["other", "compact"]
    finally:
        await client.close()
