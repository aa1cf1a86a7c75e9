"""``pi/bash``: the user's own shell command (pi's ``!cmd`` / ``!!cmd``), stored as pi stores it.

The command runs at once, also during a run; its ``bashExecution`` message is appended when the
run is over (pi holds it back the same way). One command at a time per session: a second one
meanwhile is SessionBusy. Cancelling the request kills the command.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from pi_lsp.agent.loop import now_ms
from pi_lsp.agent.tools.user_bash import run_user_bash
from pi_lsp.service import entries as ops
from pi_lsp.service.chat_state import ChatState, until_done
from pi_lsp.service.errors import SessionBusy
from pi_lsp.service.host import SessionHost
from pi_lsp.service.registry import OpenSession
from pi_lsp.service.settings import Settings

AfterCommand = Callable[[], Awaitable[object]]
"""Called once the command's entry is appended (the run's checkpoint after a ``bash`` tool)."""


def shell_options(settings: Settings) -> dict[str, str | None]:
    """pi's ``shellPath`` / ``shellCommandPrefix`` (the user's settings only), for bash and ``!cmd``."""
    return {"shell_path": settings.shell_path, "shell_command_prefix": settings.shell_command_prefix}


async def run_user_command(
    host: SessionHost,
    session: OpenSession,
    chat: ChatState,
    settings: Settings,
    command: str,
    exclude_from_context: bool,
    after: AfterCommand,
) -> dict[str, Any]:
    """Run ``command`` in the session's folder and append its message (after any run): the answer."""
    if chat.user_bash:  # checked and marked before any await: see active_run
        raise SessionBusy(f"session {session.id} is running a command of the user's (pi/bash); wait"
                          " for it or cancel it", {"busy": "bash"})  # fmt: skip
    chat.user_bash = True
    try:
        options = shell_options(settings)
        abort = asyncio.Event()
        task = asyncio.ensure_future(
            run_user_bash(
                command,
                session.manager.cwd,
                abort,
                shell_path=options["shell_path"],
                command_prefix=options["shell_command_prefix"],
            )
        )
        result = await until_done(task, abort.set)
    finally:
        chat.user_bash = False
    while (run := chat.run) is not None:  # held back until the run has ended
        await asyncio.wait({run.ended})
    message = result.to_message(command, now_ms(), True if exclude_from_context else None)
    entry_id = await host.run(session, lambda: session.manager.append_message(message), writes=True)
    host.emit(session, ops.Change("append", [entry_id]))
    await after()
    return {
        "output": result.output,
        "exitCode": result.exit_code,
        "cancelled": result.cancelled,
        "truncated": result.truncated,
        "entryId": entry_id,
    }
