"""Differential tests: the same scripted conversation run by pi itself and by our server.

The fake Messages API plays the same replies to both; the request bodies it received, the session
files (apart from ids and timestamps) and the order of events must be equal.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tests.agent.chat_support import (
    Transcript,
    event_outline,
    key_order,
    normalise_entries,
    normalise_request,
    run_ours,
    run_pi,
    workspace,
)
from tests.llm.fake_anthropic import Reply, Text, Thinking, assistant_stream
from tests.pi.pi_rpc import pi_unavailable

pytestmark = pytest.mark.skipif(pi_unavailable() is not None, reason=str(pi_unavailable()))


def both(files: dict[str, str], tools: list[str] | None, replies: list[Reply], prompts: list[str],
         settings: dict[str, Any] | None = None) -> tuple[Transcript, Transcript]:  # fmt: skip
    with workspace(files, settings, tools) as ws:
        theirs = asyncio.run(run_pi(ws, replies, prompts))
        ours = asyncio.run(run_ours(ws, replies, prompts))
    return theirs, ours


def assert_same(theirs: Transcript, ours: Transcript) -> None:
    assert [normalise_request(body) for body in ours.requests] == [
        normalise_request(body) for body in theirs.requests
    ]
    assert normalise_entries(ours.entries) == normalise_entries(theirs.entries)
    assert key_order(ours.entries) == key_order(theirs.entries)
    assert event_outline(ours.events) == event_outline(theirs.events)


def test_text_reply_with_thinking() -> None:
    replies = [Reply(events=assistant_stream(Thinking("Let me think."), Text("Hello there, friend.")))]
    theirs, ours = both({}, ["read"], replies, ["Say hello"])
    assert_same(theirs, ours)
    assert ours.results[0]["stopReason"] == "stop"
    assert len(ours.results[0]["entryIds"]) == 4  # model_change, thinking_level_change, user, assistant
