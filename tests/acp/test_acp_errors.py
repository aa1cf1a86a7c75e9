"""``pi-lsp acp`` given bad input: every request answered with a JSON-RPC error, never a crash.

Malformed lines (parse error, id null), unknown methods, params of the wrong type for every
method (invalid params naming the field), a seeded random storm of both; then the process still
answers. Also: no API key (a sentence on ANTHROPIC_API_KEY), an unknown session.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import pytest

from tests.acp.acp_process import AcpProcess
from tests.agent.chat_support import Workspace, workspace

METHODS = (
    "initialize", "session/new", "session/load", "session/resume", "session/list", "session/close",
    "session/prompt", "session/set_mode", "session/set_config_option",
)  # fmt: skip
MALFORMED = [
    b"nope", b"{", b"[]", b"[1, 2]", b"42", b"null", b'"text"', b"\xff\xfe{}", b'{"jsonrpc": "2.0"}',
    b'{"jsonrpc": "2.0", "id": {"a": 1}, "method": "initialize"}',
    b'{"jsonrpc": "2.0", "id": 1.5, "method": "initialize"}',
    b'{"jsonrpc": "2.0", "method": 7}',
]  # fmt: skip
WRONG_PARAMS: list[tuple[str, Any, str]] = [
    ("initialize", {}, "protocolVersion"),
    ("initialize", {"protocolVersion": "1"}, "protocolVersion"),
    ("initialize", [], "params"),
    ("session/new", {}, "cwd"),
    ("session/new", {"cwd": 5, "mcpServers": []}, "cwd"),
    ("session/new", {"cwd": "relative/path", "mcpServers": []}, "cwd"),
    ("session/new", {"cwd": "/tmp", "mcpServers": "none"}, "mcpServers"),
    ("session/new", {"cwd": "/tmp\u0000x", "mcpServers": []}, "cwd"),
    ("session/new", {"cwd": "/tmp", "mcpServers": [5]}, "mcpServers[0]"),
    (
        "session/new",
        {"cwd": "/tmp", "mcpServers": [{"type": "http", "name": "h", "url": "http://x", "headers": []}]},
        "mcpServers[0].type",
    ),
    (
        "session/new",
        {"cwd": "/tmp", "mcpServers": [{"type": "sse", "name": "h", "url": "http://x", "headers": []}]},
        "mcpServers[0].type",
    ),
    (
        "session/new",
        {"cwd": "/tmp", "mcpServers": [{"name": "s", "args": [], "env": []}]},
        "mcpServers[0].command",
    ),
    (
        "session/new",
        {"cwd": "/tmp", "mcpServers": [{"name": "s", "command": "c", "args": [], "env": [{"name": "K"}]}]},
        "mcpServers[0].env[0].value",
    ),
    (
        "session/load",
        {
            "sessionId": "x",
            "cwd": "/tmp",
            "mcpServers": [{"name": "s", "command": "c", "args": [1], "env": []}],
        },
        "mcpServers[0].args",
    ),
    ("session/load", {"sessionId": 1, "cwd": "/tmp", "mcpServers": []}, "sessionId"),
    ("session/load", {"sessionId": "x", "cwd": None, "mcpServers": []}, "cwd"),
    ("session/resume", {"sessionId": "", "cwd": "/tmp"}, "sessionId"),
    ("session/list", {"cwd": 3}, "cwd"),
    ("session/list", {"cursor": 3}, "cursor"),
    ("session/list", "everything", "params"),
    ("session/close", {"sessionId": ["x"]}, "sessionId"),
    ("session/prompt", {"sessionId": None, "prompt": []}, "sessionId"),
    ("session/set_mode", {"sessionId": 5, "modeId": "ask"}, "sessionId"),
    ("session/set_config_option", {"sessionId": {}, "configId": "model", "value": "x"}, "sessionId"),
]


@pytest.fixture
def ws() -> Iterator[Workspace]:
    with workspace({"a.txt": "alpha\n"}) as made:
        yield made


def env_of(ws: Workspace, *, key: bool = True) -> dict[str, str]:
    env = ws.server_env("http://127.0.0.1:9")  # no model call is made in these tests
    if not key:
        env.pop("ANTHROPIC_API_KEY")
    return env


def random_value(rng: random.Random, depth: int = 0) -> Any:
    choices: list[Any] = [None, True, 0, -1, 2**70, 1.5, "", "x", "/", "\u0000", "é" * 3]
    if depth < 3:
        choices += [[random_value(rng, depth + 1) for _ in range(rng.randint(0, 3))]]
        keys = ["sessionId", "cwd", "prompt", "modeId", "configId", "value", "mcpServers", "type", "text"]
        choices += [{rng.choice(keys): random_value(rng, depth + 1) for _ in range(rng.randint(0, 4))}]
    return rng.choice(choices)


async def test_bad_lines_methods_and_params_are_answered_and_the_process_goes_on(ws: Workspace) -> None:
    acp = await AcpProcess.start(env_of(ws), cwd=str(ws.cwd))
    try:
        for line in MALFORMED:
            acp.send_line(line)
        acp.send_line(b"")  # blank lines are skipped, not answered
        await acp.wait_for(lambda p: len(p.unaddressed) >= len(MALFORMED))
        codes = [answer["error"]["code"] for answer in acp.unaddressed]
        assert codes.count(-32700) == 3 and set(codes) == {-32700, -32600}, codes

        for method in ("session/fork", "terminal/create", "pi/prompt", ""):
            answer = await acp.request(method, {})
            assert answer["error"]["code"] == -32601, answer
        acp.send({"jsonrpc": "2.0", "method": "made/up", "params": {}})  # a notification: no answer

        initialized = await acp.request("initialize", {"protocolVersion": 1})
        assert initialized["result"]["protocolVersion"] == 1
        for method, params, field in WRONG_PARAMS:
            answer = await acp.request(method, params)
            assert answer["error"]["code"] == -32602, (method, params, answer)
            assert answer["error"]["data"] == {"field": field}, (method, params, answer)
            assert field in answer["error"]["message"]

        rng = random.Random(23)
        for _ in range(300):
            method = rng.choice(METHODS)
            params = random_value(rng)
            if method == "session/new":
                continue  # valid ones would create sessions; their bad params are above
            answer = await acp.request(method, params)
            assert "error" in answer or "result" in answer, answer
            if "error" in answer:
                assert answer["error"]["code"] in (-32602, -32001), (method, params, answer)
        acp.send({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": 5}})
        listed = await acp.request("session/list", {"cwd": str(ws.cwd)})
        assert listed["result"] == {"sessions": []}
        assert acp.requests == []
    finally:
        assert await acp.close() == 0
    assert list(ws.agent_dir.rglob("*.jsonl")) == []  # nothing was written by all that


async def test_no_key_unknown_session_and_an_image_that_is_not_one(ws: Workspace) -> None:
    acp = await AcpProcess.start(env_of(ws, key=False), cwd=str(ws.cwd))
    try:
        await acp.request("initialize", {"protocolVersion": 1})
        created = await acp.request("session/new", {"cwd": str(ws.cwd), "mcpServers": []})
        session_id = created["result"]["sessionId"]
        answer = await acp.request(
            "session/prompt", {"sessionId": session_id, "prompt": [{"type": "text", "text": "hi"}]}
        )
        error = answer["error"]
        assert error["code"] == -32004 and "ANTHROPIC_API_KEY" in error["message"], error
        unknown = await acp.request(
            "session/prompt", {"sessionId": "nope", "prompt": [{"type": "text", "text": "x"}]}
        )
        assert unknown["error"]["code"] == -32001 and "nope" in unknown["error"]["message"]
        image = [
            {"type": "text", "text": "see"},
            {"type": "image", "data": "not base64!", "mimeType": "image/png"},
        ]
        bad = await acp.request("session/prompt", {"sessionId": session_id, "prompt": image})
        assert bad["error"]["code"] == -32602 and bad["error"]["data"] == {"field": "prompt[1].data"}
        audio = [{"type": "audio", "data": "AAAA", "mimeType": "audio/wav"}]
        refused = await acp.request("session/prompt", {"sessionId": session_id, "prompt": audio})
        assert refused["error"]["data"] == {"field": "prompt[0]"} and "audio" in refused["error"]["message"]
        mode = await acp.request("session/set_mode", {"sessionId": session_id, "modeId": "auto"})
        assert mode["result"] == {}
        option = await acp.request(
            "session/set_config_option", {"sessionId": session_id, "configId": "model", "value": "gpt-4"}
        )
        assert option["error"]["code"] == -32602 and option["error"]["data"] == {"field": "value"}
    finally:
        assert await acp.close() == 0


async def test_mcp_servers_stdio_ones_are_accepted_and_ignored_with_a_log_line(ws: Workspace) -> None:
    """pi has no MCP: the initialize answer says no http/sse (those are refused, above); a stdio
    server, which every agent must accept, is accepted, not started, and named in the log (its
    environment, which may hold a token, is not)."""
    log_file = ws.root / "acp.log"
    acp = await AcpProcess.start(env_of(ws), str(ws.cwd), "--log-file", str(log_file))
    try:
        initialized = await acp.request("initialize", {"protocolVersion": 1})
        assert initialized["result"]["agentCapabilities"]["mcpCapabilities"] == {"http": False, "sse": False}
        marker = ws.root / "started"
        server = {"name": "github", "command": "touch", "args": [str(marker)],
                  "env": [{"name": "GITHUB_TOKEN", "value": "token-value-never-logged"}]}  # fmt: skip
        created = await acp.request("session/new", {"cwd": str(ws.cwd), "mcpServers": [server]})
        assert "sessionId" in created["result"], created
    finally:
        assert await acp.close() == 0
    logged = log_file.read_text()
    assert "MCP server 'github' ignored" in logged and "token-value-never-logged" not in logged
    assert not marker.exists()  # not started
