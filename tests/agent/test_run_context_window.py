"""A run's context window (its threshold and overflow checks) is its model's unless the user set
``contextWindow``, which then overrides it, as it does for ``pi/buildContext`` usage (issue 25)."""

from __future__ import annotations

from tests.agent.chat_support import open_chat
from tests.llm.fake_anthropic import Reply, Text, assistant_stream

SETTINGS = {"contextWindow": 10_000, "compaction": {"reserveTokens": 2000, "keepRecentTokens": 1}}


async def test_an_explicit_context_window_sets_a_runs_threshold() -> None:
    replies = [
        # 9000 tokens: far below the model's 200000, above the setting's 10000 − 2000
        Reply(events=assistant_stream(Text("A long answer."), message_id="m_a", input_tokens=9000)),
        Reply(events=assistant_stream(Text("## Goal\nKeep going."), message_id="m_sum")),
    ]
    async for chat in open_chat(replies, options=SETTINGS):
        await chat.prompt("Go")
        ended = await chat.client.wait_event(lambda e: e["type"] == "compaction_end")
        assert ended["reason"] == "threshold" and "errorMessage" not in ended, ended
        usage = (await chat.request("pi/buildContext"))["usage"]
        assert usage["contextWindow"] == 10_000
