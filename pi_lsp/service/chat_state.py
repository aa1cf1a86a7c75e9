"""What a session's chat keeps between requests: the run in progress, the queues, the event counter.

One :class:`ChatState` per open session that has seen a chat request (``pi/prompt``, ``pi/bash``,
``pi/getRunState``...), owned by :class:`~pi_lsp.service.runs.RunService`. Its queues report their
changes as ``queue_update`` events through the ``emit`` it is given, in the modes of the client
that started the run.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from pi_lsp.agent.approvals import AllowList
from pi_lsp.agent.queue import MessageQueues
from pi_lsp.agent.runner import Runner
from pi_lsp.agent.tools.targets import CheckedTargets
from pi_lsp.service.active_run import ActiveRun
from pi_lsp.service.entry_keys import EntryKeys
from pi_lsp.service.registry import Client

T = TypeVar("T")

DEFAULT_QUEUE_MODES = ("one-at-a-time", "one-at-a-time")
"""pi's ``steeringMode`` / ``followUpMode`` while no client started the run (it left)."""


@dataclass(eq=False)
class ChatState:
    """Per open session: the run in progress, the queues, the event counter, what was allowed."""

    session_id: str
    emit: Callable[[dict[str, Any]], None] = field(repr=False)  # a pi/event to the session's holders
    queues: MessageQueues = field(init=False)
    seq: int = 0
    run: ActiveRun | None = None  # from the arrival of its pi/prompt to its end
    user_bash: bool = False  # a pi/bash command is running (one at a time, as pi's !cmd)
    allow: AllowList = field(default_factory=AllowList)
    approvals: dict[str, dict[str, Any]] = field(default_factory=dict)
    checked: CheckedTargets = field(default_factory=CheckedTargets)  # edit/write: the file judged
    entry_of: dict[int, str] = field(default_factory=dict)
    last_event: str | None = None  # the type of the last pi/event sent
    entry_keys: EntryKeys = field(default_factory=EntryKeys)  # the run's messages → their entries

    def __post_init__(self) -> None:
        self.queues = MessageQueues(self._queue_modes, self._queues_changed)

    def _queue_modes(self) -> tuple[str, str]:
        starter = self.starter
        return starter.settings.queue_modes if starter else DEFAULT_QUEUE_MODES

    def _queues_changed(self) -> None:
        self.emit({"type": "queue_update", **self.queues.snapshot()})

    @property
    def runner(self) -> Runner | None:
        """The run's runner once it is built (None while the run is being prepared)."""
        return self.run.runner if self.run is not None else None

    @property
    def starter(self) -> Client | None:
        return self.run.starter if self.run is not None else None


async def until_done(task: asyncio.Future[T], on_cancel: Callable[[], None]) -> T:
    """``task``'s result; a cancellation of the caller calls ``on_cancel`` and keeps waiting (each
    further cancellation too: the task is never cancelled from here, only asked to stop)."""
    while True:
        try:
            return await asyncio.shield(task)
        except asyncio.CancelledError:
            if task.done():
                return task.result()
            on_cancel()
