"""The context window is the session's model's, as pi's ``model.contextWindow`` (issue 25: the
gauge read ``/200k`` for a 1M-context model): ``pi/buildContext`` usage, ``pi/getSessionStats`` and
auto-compaction's threshold follow the model the next run would use (the branch's last
``model_change``, else the ``model`` setting, else pi's default); ``contextWindow`` is only an
explicit override. Through the real server."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import orjson
from pytest_lsp import LanguageClient

from pi_lsp.llm.models import DEFAULT_MODEL_ID, find_model
from tests.server.compaction_support import (
    assistant_entry,
    configure,
    events,
    lsp_server,
    next_event,
    user_entry,
)
from tests.server.support import call

ONE_MILLION = "claude-sonnet-4-6"
TWO_HUNDRED_K = "claude-haiku-4-5"


def test_the_models_chosen_have_the_windows_the_tests_assume() -> None:
    million, small = find_model(ONE_MILLION), find_model(TWO_HUNDRED_K)
    assert million is not None and million.context_window == 1_000_000
    assert small is not None and small.context_window == 200_000


async def window(client: LanguageClient) -> Any:
    return (await call(client, "pi/buildContext", {}))["usage"]["contextWindow"]


async def test_usage_follows_the_sessions_model_and_set_model(tmp_path: Path) -> None:
    async with lsp_server(tmp_path, key=None, settings={"model": TWO_HUNDRED_K}) as client:
        await call(client, "pi/newSession", {})
        assert await window(client) == 200_000  # the model setting's

        await call(client, "pi/setModel", {"modelId": ONE_MILLION})
        assert await window(client) == 1_000_000
        usage = (await call(client, "pi/buildContext", {}))["usage"]
        assert usage["shouldCompact"] is False
        stats = await call(client, "pi/getSessionStats", {})
        assert stats["contextUsage"]["contextWindow"] == 1_000_000

        await call(client, "pi/setModel", {"modelId": TWO_HUNDRED_K})
        assert await window(client) == 200_000


async def test_an_explicit_context_window_setting_wins(tmp_path: Path) -> None:
    async with lsp_server(tmp_path, key=None) as client:
        await call(client, "pi/newSession", {})
        default = find_model(DEFAULT_MODEL_ID)
        assert default is not None
        assert await window(client) == default.context_window  # no model anywhere: pi's default model

        configure(client, {"contextWindow": 150_000})
        assert await window(client) == 150_000
        await call(client, "pi/setModel", {"modelId": ONE_MILLION})
        assert await window(client) == 150_000  # the override, whatever the model


async def test_a_session_files_model_change_sets_the_window(tmp_path: Path) -> None:
    file = tmp_path / "million.jsonl"
    header = {
        "type": "session",
        "version": 3,
        "id": "11111111-2222-3333-4444-555555555555",
        "timestamp": "2026-01-01T00:00:00.000Z",
        "cwd": str(tmp_path),
    }
    change = {
        "type": "model_change",
        "id": "a1b2c3d4",
        "parentId": None,
        "timestamp": "2026-01-01T00:00:01.000Z",
        "provider": "anthropic",
        "modelId": ONE_MILLION,
    }
    file.write_bytes(orjson.dumps(header) + b"\n" + orjson.dumps(change) + b"\n")
    async with lsp_server(tmp_path, key=None, settings={"model": TWO_HUNDRED_K}) as client:
        await call(client, "pi/openSession", {"path": str(file)})
        assert await window(client) == 1_000_000  # the file's model_change, over the setting


async def test_auto_compaction_threshold_uses_the_models_window(tmp_path: Path) -> None:
    settings = {"model": ONE_MILLION, "compaction": {"reserveTokens": 2000, "keepRecentTokens": 100}}
    async with lsp_server(tmp_path, key=None, settings=settings) as client:
        await call(client, "pi/newSession", {})
        await call(client, "pi/appendEntry", {"entry": user_entry("Refactor the parser. " * 40)})
        reply = assistant_entry("Done.", 300_000, model=ONE_MILLION)
        await call(client, "pi/appendEntry", {"entry": reply})
        await asyncio.sleep(0.4)  # a (wrongly) triggered background compaction would show by now
        assert not events(client, "pi/compactionStarted")  # 300k of a 1M window: no compaction

        await call(client, "pi/appendEntry", {"entry": user_entry("Now the lexer. " * 40)})
        await call(
            client, "pi/appendEntry", {"entry": assistant_entry("Done too.", 999_000, model=ONE_MILLION)}
        )
        started = await next_event(client, "pi/compactionStarted", 0)
        assert started["reason"] == "threshold"


def tool_read_entry(call_id: str, path: str) -> dict[str, Any]:
    message = assistant_entry("Reading.", 100, stop="toolUse", model=ONE_MILLION)
    message["message"]["content"] = [
        {"type": "toolCall", "id": call_id, "name": "read", "arguments": {"path": path}}
    ]
    return message


async def test_branch_summary_budget_is_the_models_window(tmp_path: Path) -> None:
    """pi's generateBranchSummary keeps the newest messages within ``contextWindow − reserve``: with a
    1M model, a 250k-token message still leaves room for the read before it (in readFiles)."""
    async with lsp_server(tmp_path, key=None, settings={"model": ONE_MILLION}) as client:
        await call(client, "pi/newSession", {})
        root = (await call(client, "pi/appendEntry", {"entry": user_entry("Start.")}))["id"]
        await call(client, "pi/appendEntry", {"entry": tool_read_entry("toolu_r", "early.txt")})
        result = {"role": "toolResult", "toolCallId": "toolu_r", "toolName": "read",
                  "content": [{"type": "text", "text": "early"}], "isError": False}  # fmt: skip
        await call(client, "pi/appendEntry", {"entry": {"type": "message", "message": result}})
        await call(client, "pi/appendEntry", {"entry": user_entry("word " * 200_000)})  # ~250k tokens
        await call(client, "pi/appendEntry", {"entry": assistant_entry("Ok.", 260_000, model=ONE_MILLION)})
        moved = await call(client, "pi/navigate", {"targetId": root, "summarize": True})
        entries = (await call(client, "pi/getEntries", {}))["entries"]
        summary = next(e for e in entries if e["id"] == moved["summaryEntryId"])
        assert summary["details"]["readFiles"] == ["early.txt"], summary["details"]
