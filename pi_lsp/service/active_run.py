"""A session's run, from the moment its ``pi/prompt`` arrives until it has ended.

A prompt is admitted and its run registered in one synchronous step, before the request awaits
anything (slash commands are read in a thread, the system prompt is built, the SDK is imported:
seconds on a fresh server). So of prompts sent together (a double-click, two windows) exactly one
runs and the others get SessionBusy, and a ``pi/abort`` or ``$/cancelRequest`` that arrives while
the run is still being prepared is kept and stops the run as soon as it exists: a run aborted that
early never reaches the model and is stored as pi stores a run aborted before its model call (the
user message, then an empty aborted reply).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from pi_lsp.agent.runner import Runner
from pi_lsp.service.errors import SessionBusy
from pi_lsp.service.registry import Client, OpenSession

PROMPT = "prompt"
"""The run's mark on :attr:`OpenSession.busy` (what a compaction or a summary started meanwhile sees)."""


def _new_future() -> asyncio.Future[None]:
    return asyncio.get_running_loop().create_future()


@dataclass(eq=False)
class ActiveRun:
    """One run of a session: who started it, its runner once built, whether it was asked to stop."""

    starter: Client | None  # None once its connection went (a run kept for a reattaching client)
    runner: Runner | None = None  # built after the preparation
    aborted: bool = False
    ended: asyncio.Future[None] = field(default_factory=_new_future)

    def abort(self) -> None:
        """pi's abort; before the runner exists it is remembered and applied when it does."""
        self.aborted = True
        if self.runner is not None:
            self.runner.abort()

    def attach(self, runner: Runner) -> None:
        """The runner is built: an abort that came before it stops it now, before any model call."""
        self.runner = runner
        if self.aborted:
            runner.abort()

    def finish(self) -> None:
        if not self.ended.done():
            self.ended.set_result(None)


def admit(session: OpenSession, current: ActiveRun | None, starter: Client) -> ActiveRun:
    """Check that nothing long runs on ``session`` and register a new run, in one step (no await).

    A run in progress: SessionBusy naming ``streamingBehavior`` (which queues instead); a
    compaction or branch summary: SessionBusy saying which."""
    if current is not None:
        raise SessionBusy(
            f'session {session.id} is running a prompt; send streamingBehavior "steer" or'
            ' "followUp" to queue this message',
            {"busy": PROMPT},
        )
    session.claim(PROMPT)
    return ActiveRun(starter)
