"""A fresh server's first ``pi/prompt`` builds the run service (seconds of imports: the agent,
the tools, the model client) in a worker, not on the event loop: other requests are answered
meanwhile, and a ``pi/abort`` sent right behind the prompt still reaches its run.

The handlers run in process on the real services; the build is held until the test, on the event
loop, has been answered another request, so a build on the loop could never finish in time."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

import pytest

from pi_lsp.server import chat_handlers
from pi_lsp.server.context import Context
from pi_lsp.server.params import Params
from pi_lsp.service.build import PiService, build_service
from pi_lsp.service.registry import Client


async def test_other_requests_are_answered_while_the_first_run_is_prepared(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    release = threading.Event()
    builds: list[tuple[bool, bool]] = []  # (on the event loop's thread, released in time)
    real_make_runs = PiService._make_runs

    def held_make_runs(self: PiService) -> Any:
        on_loop = threading.current_thread() is threading.main_thread()
        builds.append((on_loop, release.wait(3)))
        return real_make_runs(self)

    monkeypatch.setattr(PiService, "_make_runs", held_make_runs)
    service = build_service()
    client = Client()
    service.connect(client)
    ctx = Context(service, client)
    try:
        busy = await service.sessions.new_session(
            client, cwd=str(tmp_path), session_dir=None, parent_session=None, session_id=None, persist=False
        )
        other = await service.sessions.new_session(
            client, cwd=str(tmp_path), session_dir=None, parent_session=None, session_id=None, persist=False
        )
        run = asyncio.ensure_future(
            chat_handlers.prompt(ctx, Params({"session": busy["sessionId"], "text": "Hello"}))
        )
        abort = asyncio.ensure_future(chat_handlers.abort(ctx, Params({"session": busy["sessionId"]})))
        await asyncio.sleep(0)  # both handlers have started: the build is under way
        state = await service.sessions.get_state(client, other["sessionId"])
        assert state["sessionId"] == other["sessionId"]
        release.set()
        assert await abort == {"aborted": True}  # the abort sent behind the prompt reached its run
        await asyncio.gather(run, return_exceptions=True)
        assert builds == [(False, True)]
    finally:
        release.set()
        await service.close()
