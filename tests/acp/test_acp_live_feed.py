"""``acp/live.py`` on a real session host: what a held ACP session is sent of other processes'
appends. Entries announced while ``session/load`` replays are sent once (by the replay, or after
it when it did not read them); nothing is sent during a prompt; another branch's entries are not."""

from __future__ import annotations

import asyncio
from typing import Any

from pi_lsp.acp.live import LiveFeed, LiveUpdates
from pi_lsp.service.host import SessionHost
from pi_lsp.service.registry import Client
from pi_lsp.session import SessionManager
from tests.session.helpers import assistant_msg, user_msg


def said(sent: list[dict[str, Any]]) -> list[str]:
    return [update["content"]["text"] for update in sent]


async def settle(feed: LiveFeed) -> None:
    if feed.task is not None:
        await asyncio.wait_for(feed.task, 10)


async def test_a_feed_sends_each_new_entry_once_and_only_when_it_may() -> None:
    host = SessionHost(workers=1)
    try:
        manager = SessionManager.in_memory("/project")
        first = manager.append_message(user_msg("one"))
        host.register(Client(), manager)
        sent: list[dict[str, Any]] = []
        live = LiveUpdates(host, lambda _session, update: sent.append(update))
        feed = LiveFeed(manager.session_id)

        # announced while session/load was replaying: "one" was read by the replay, "two" after it
        live.appended(feed, [first])
        second = manager.append_message(assistant_msg("two"))
        live.appended(feed, [second])
        await asyncio.sleep(0)
        assert sent == []  # nothing before the replay
        feed.loaded([manager.get_entry(first) or {}])
        await settle(feed)
        assert said(sent) == ["two"]

        # during a prompt of this session: nothing; after it, what follows
        feed.prompting = 1
        live.appended(feed, [manager.append_message(user_msg("during the prompt"))])
        feed.prompting = 0
        live.appended(feed, [manager.append_message(user_msg("three"))])
        await settle(feed)
        assert said(sent) == ["two", "three"]

        # appended beside the branch (the leaf stayed): not this client's conversation
        leaf = manager.leaf_id
        manager.branch(first)
        aside = manager.append_message(user_msg("on another branch"))
        manager.set_leaf(leaf)
        live.appended(feed, [aside])
        await settle(feed)
        assert said(sent) == ["two", "three"]
    finally:
        await host.close()
