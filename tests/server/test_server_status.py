"""``pi/getServerStatus`` through the real server: whether a key is found and where (never the key),
the settings that count tokens and write summaries, and the prompt files being watched."""

from __future__ import annotations

import json
from pathlib import Path

from pi_lsp import __version__
from tests.server.prompt_support import call, make_workspace, prompt_server, wait_diagnostics

SECRET = "sk-ant-status-test-0123456789"


async def test_status_without_a_key(tmp_path: Path) -> None:
    space = make_workspace(tmp_path)
    agents = space.write(space.ws / "AGENTS.md", "Be brief.\n")
    async with prompt_server(space, settings={"tokenizer": "estimate", "summarizer": "offline"}) as client:
        await call(client, "pi/newSession", {})
        await wait_diagnostics(client, agents, lambda _: True)  # the root's prompt has been built
        status = await call(client, "pi/getServerStatus")
    assert status["version"] == __version__ and status["protocolVersion"] == 3
    assert status["apiKey"] == {"found": False, "source": None}
    assert status["baseUrl"] is None  # Anthropic's own endpoint
    chosen = (status["tokenizer"], status["summarizer"], status["approval"])
    assert chosen == ("estimate", "offline", "acceptEdits")
    watching = status["watching"]
    assert watching["backend"] in ("watchdog", "poll")
    assert watching["roots"] == [str(space.ws)]
    assert str(agents) in watching["files"]


async def test_status_names_where_the_key_is_but_never_the_key(tmp_path: Path) -> None:
    space = make_workspace(tmp_path)
    space.write(space.agent / "auth.json", json.dumps({"anthropic": {"type": "api_key", "key": SECRET}}))
    async with prompt_server(space) as client:
        from_file = await call(client, "pi/getServerStatus")
    proxy = "http://127.0.0.1:9/v"
    async with prompt_server(space, ANTHROPIC_API_KEY=SECRET, ANTHROPIC_BASE_URL=proxy) as client:
        from_env = await call(client, "pi/getServerStatus")
    assert from_env["baseUrl"] == proxy
    assert from_file["apiKey"] == {"found": True, "source": "auth.json"}
    assert from_env["apiKey"] == {"found": True, "source": "ANTHROPIC_API_KEY"}
    assert SECRET not in json.dumps([from_file, from_env])
