"""What other processes append to a session an ACP client holds, streamed to it as it happens.

The host's file watcher notices lines appended by pi's CLI, a language server or another ACP
process, and announces them as ``pi/sessionChanged`` with reason ``external`` (the ACP process's
own writes never are: they are known to the session already). The new entries on the session's
current branch are sent as ``load``'s replay sends them (:func:`~pi_lsp.acp.replay.replay_updates`),
in file order, one batch at a time. Entries appended on another branch (the leaf did not follow
them) are not shown, as ``load`` would not show them; nothing is sent while a prompt of that ACP
session runs (its own stream is the client's view then; the next ``session/load`` replays all).
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pi_lsp.acp.replay import replay_updates
from pi_lsp.service.host import SessionHost
from pi_lsp.session import SessionManager

log = logging.getLogger(__name__)

Entry = dict[str, Any]
SendUpdate = Callable[[str, dict[str, Any]], None]
"""Sends one ``session/update`` (session id, update object)."""


@dataclass(eq=False)
class LiveFeed:
    """One ACP session's stream of other processes' entries."""

    session_id: str
    prompting: int = 0  # session/prompt requests of this session in progress here
    pending: list[str] = field(default_factory=list)  # appended ids not looked at yet
    task: asyncio.Task[None] | None = None
    # Set once the client has the session's state (after session/load's replay): entries appended
    # before are sent after it, those the replay already showed (``replayed``) not again.
    ready: asyncio.Event = field(default_factory=asyncio.Event)
    replayed: set[str] = field(default_factory=set)

    def loaded(self, replayed: list[Entry]) -> None:
        """``session/load`` sent ``replayed`` (or ``session/new`` / ``resume`` nothing): stream from now."""
        self.replayed = {str(entry.get("id")) for entry in replayed}
        self.ready.set()


def new_on_branch(manager: SessionManager, appended: list[str]) -> list[Entry]:
    """Those of ``appended`` on the path from the root to the leaf, root first (call under the
    session's lock). They are the path's tail: walk up from the leaf while the entries are new."""
    fresh = set(appended)
    found: list[Entry] = []
    entry_id = manager.leaf_id
    while entry_id is not None and entry_id in fresh:
        record = manager.get_record(entry_id)
        if record is None:
            break
        found.append(record.entry())
        fresh.discard(entry_id)  # a cycle in a damaged file ends the walk
        entry_id = record.parent_id
    found.reverse()
    return found


class LiveUpdates:
    """Feeds every held ACP session the entries other processes append to its file."""

    def __init__(self, host: SessionHost, send: SendUpdate) -> None:
        self.host = host
        self.send = send

    def appended(self, feed: LiveFeed, entry_ids: list[str]) -> None:
        """``pi/sessionChanged`` (reason ``external``) arrived for the feed's session."""
        if feed.prompting:
            log.debug("session %s: %d external entries not streamed during a prompt", feed.session_id,
                      len(entry_ids))  # fmt: skip
            return
        feed.pending.extend(entry_ids)
        if feed.task is None or feed.task.done():
            feed.task = asyncio.get_running_loop().create_task(self._drain(feed))

    async def _drain(self, feed: LiveFeed) -> None:
        """Send the pending entries' updates, batch after batch, in the order they were appended."""
        await feed.ready.wait()
        while feed.pending:
            appended, feed.pending = [i for i in feed.pending if i not in feed.replayed], []
            feed.replayed = set()  # every id announced before the replay's read is in this batch
            session = self.host.registry.get(feed.session_id)
            if session is None:
                return
            try:
                entries = await self.host.run(
                    session, functools.partial(new_on_branch, session.manager, appended), writes=False
                )
            except Exception:
                log.exception("could not read the entries appended to session %s", feed.session_id)
                return
            if feed.prompting:  # a prompt began meanwhile: its stream is the view now
                return
            for update in replay_updates(entries, session.manager.cwd):
                self.send(feed.session_id, update)

    def stop(self, feed: LiveFeed) -> None:
        """The session is closed here: nothing more is sent for it."""
        feed.pending.clear()
        if feed.task is not None:
            feed.task.cancel()
