"""Auto-compaction after ``pi/appendEntry`` (pi's ``_checkCompaction``): the threshold, the stale-usage
guard, tool-use turns, and context overflow with exactly one recovery."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import orjson

from tests.server.compaction_support import (
    assistant_entry,
    configure,
    events,
    lsp_server,
    next_event,
    user_entry,
)
from tests.server.support import call, wait_until

SETTINGS = {"contextWindow": 10000, "compaction": {"reserveTokens": 2000, "keepRecentTokens": 100}}
OVERFLOW = "prompt is too long: 213462 tokens > 200000 maximum"


async def quiet(seconds: float = 0.4) -> None:
    """Give a (wrongly) triggered background compaction time to show up."""
    await asyncio.sleep(seconds)


async def append(client: object, entry: dict[str, object]) -> str:
    result = await call(client, "pi/appendEntry", {"entry": entry})  # type: ignore[arg-type]
    return str(result["id"])


async def test_threshold_triggers_once_and_stale_usage_does_not(tmp_path: Path) -> None:
    async with lsp_server(tmp_path, key=None, settings=SETTINGS) as client:
        state = await call(client, "pi/newSession", {})
        await append(client, user_entry("Refactor the parser. " * 40))
        await append(client, assistant_entry("Done with the parser.", 3000))
        await append(client, user_entry("Now the lexer. " * 40))
        tool = await append(client, assistant_entry("Reading it.", 9000, stop="toolUse"))
        await quiet()
        assert not events(client, "pi/compactionStarted")  # a tool call does not end the run
        await append(client, assistant_entry("The lexer is done too.", 8001))

        started = await next_event(client, "pi/compactionStarted", 0)
        ended = await next_event(client, "pi/compactionEnded", 0)
        assert started == {"sessionId": state["sessionId"], "reason": "threshold"}
        result = ended["result"]
        assert ended["reason"] == "threshold" and ended["willRetry"] is False and "error" not in ended
        assert result["summarizer"] == "offline" and result["tokensBefore"] > 0
        changes = await wait_until(
            lambda: [c for c in events(client, "pi/sessionChanged") if c["reason"] == "compaction"]
        )
        assert changes == [
            {"sessionId": state["sessionId"], "leafId": result["entryId"], "appendedIds": [result["entryId"]],
             "reason": "compaction"}
        ]  # fmt: skip
        order = [name for name, _ in client.events]  # type: ignore[attr-defined]
        assert order.index("pi/compactionStarted") > order.index("pi/sessionChanged")  # after the append
        entry = (await call(client, "pi/getEntry", {"id": result["entryId"]}))["entry"]
        assert entry["type"] == "compaction" and entry["fromHook"] is False
        branch = (await call(client, "pi/getBranch", {}))["entries"]
        assert tool in [e["id"] for e in branch]

        # stale: a message stamped before the compaction never re-triggers, nor does its usage
        compaction_ms = int(time.time() * 1000) - 60_000
        await append(client, assistant_entry("Old news.", 9999, timestamp=compaction_ms))
        await append(client, assistant_entry("", 0, stop="error", errorMessage="overloaded_error"))
        await append(client, assistant_entry("Small again.", 500))
        await quiet()
        assert len(events(client, "pi/compactionStarted")) == 1
        # a fresh reply above the threshold compacts again (the usage is current)
        await append(client, user_entry("One more thing. " * 40))
        await append(client, assistant_entry("Handled.", 9500))
        second = await next_event(client, "pi/compactionEnded", 1)
        assert second["reason"] == "threshold" and second["result"]["entryId"] != result["entryId"]
        await quiet()
        assert len(events(client, "pi/compactionStarted")) == 2

        # disabled: nothing happens
        configure(client, {**SETTINGS, "compaction": {"enabled": False}})
        await append(client, user_entry("Another. " * 40))
        await append(client, assistant_entry("Huge.", 9999))
        await quiet()
        assert len(events(client, "pi/compactionStarted")) == 2
        lines = [orjson.loads(line) for line in Path(state["file"]).read_bytes().splitlines()]
        assert [line["type"] for line in lines].count("compaction") == 2


async def test_overflow_recovers_once_then_reports(tmp_path: Path) -> None:
    async with lsp_server(tmp_path, key=None, settings=SETTINGS) as client:
        state = await call(client, "pi/newSession", {})
        for number in range(2):
            await append(client, user_entry(f"Step {number}. " * 60))
            await append(client, assistant_entry(f"Step {number} done.", 1000))
        await append(client, user_entry("Continue with a huge file. " * 30))
        await append(client, assistant_entry("", 0, stop="error", errorMessage=OVERFLOW))

        started = await next_event(client, "pi/compactionStarted", 0)
        ended = await next_event(client, "pi/compactionEnded", 0)
        assert started["reason"] == "overflow"
        assert ended["reason"] == "overflow" and ended["willRetry"] is True and ended["result"]["entryId"]

        # the client retries and overflows again: no second compaction, an error instead
        await append(client, assistant_entry("", 0, stop="error", errorMessage=OVERFLOW))
        failed = await next_event(client, "pi/compactionEnded", 1)
        assert failed["reason"] == "overflow" and failed["willRetry"] is False and "result" not in failed
        assert failed["error"].startswith(
            "Context overflow recovery failed after one compact-and-retry attempt"
        )
        await quiet()
        assert len(events(client, "pi/compactionStarted")) == 1

        # a new user message allows one more recovery
        await append(client, user_entry("Try a smaller step. " * 60))
        await append(client, assistant_entry("", 0, stop="error", errorMessage=OVERFLOW))
        again = await next_event(client, "pi/compactionEnded", 2)
        assert again["reason"] == "overflow" and again["willRetry"] is True and again["result"]["entryId"]
        assert len(events(client, "pi/compactionStarted")) == 2
        await quiet()
        assert len(events(client, "pi/compactionEnded")) == 3
        compactions = [
            line for line in Path(state["file"]).read_bytes().splitlines() if b'"type":"compaction"' in line
        ]
        assert len(compactions) == 2
