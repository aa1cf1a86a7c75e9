"""Background requests address the session the plugin shows: the statusline's debounced
``pi/getSessionStats``, a chat's redraw after another program appended. Sent while the user's
``:PiOpen`` of another session was being answered, they made the server's active session the old
one again (addressing a session makes it active) and the plugin followed it: the tree and the next
requests went to the wrong session (a CI flake of ``test_deep_tree``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.agent.chat_support import Workspace
from tests.nvim.headless import run_lua

SCRIPT = Path(__file__).with_name("active_session.lua")


def _session(ws: Workspace, text: str) -> str:
    from pi_lsp.session import SessionManager

    manager = SessionManager.create(str(ws.cwd), ws.sessions)
    manager.append_message({"role": "user", "content": text, "timestamp": 1})
    assert manager.session_file is not None
    return manager.session_file


async def test_a_statusline_refresh_during_an_open_does_not_switch_back(
    tmp_path: Path, nvim: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = Workspace()
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(ws.agent_dir))  # this process's side files too
    try:
        first, second = _session(ws, "first"), _session(ws, "second")
        settings = {"sessionDir": str(ws.sessions), "approval": "auto"}
        env = ws.server_env("http://127.0.0.1:9")  # no model call is made
        seen = await run_lua(nvim, SCRIPT, tmp_path, ws.cwd, env, settings, 60, first=first, second=second)
    finally:
        ws.cleanup()
    assert seen["second"] != seen["first"]
    assert seen["server_active"] == seen["second"]
    assert seen["plugin_active"] == seen["second"]
    first_addressed = [sent for sent in seen["sent"] if sent.endswith(seen["first"])]
    assert first_addressed == [], seen["sent"]  # nothing asked in the first session's name after
