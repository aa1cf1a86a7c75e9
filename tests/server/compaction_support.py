"""Shared by the compaction server tests: a pytest-lsp server started with a runtime environment
(the fake Messages API's address, a fake key), a client that records notifications in order, and
small builders of sessions and model replies."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections import deque
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from tests.llm.fake_anthropic import Recorded, Reply, text_stream
from tests.server.support import SERVER, raw_converter, server_env, wait_until

KEY = "sk-ant-api03-TESTSECRET-do-not-leak-0123456789"
RECORDED = ("pi/sessionChanged", "pi/compactionStarted", "pi/compactionEnded", "$/progress")
_ids = itertools.count(1)


def make_recording_client() -> LanguageClient:
    client = LanguageClient(converter_factory=raw_converter)
    defaults = pytest_lsp.client.DEFAULT_CLIENT_FEATURES
    pytest_lsp.client.register_lsp_features(client, {k: v for k, v in defaults.items() if k not in RECORDED})
    client.events = []  # type: ignore[attr-defined]

    def recorder(method: str) -> Callable[[Any], None]:
        def record(params: Any) -> None:
            if method == "$/progress":  # typed by pygls: back to JSON
                params = {"token": params.token, "value": params.value}
            client.events.append((method, params))  # type: ignore[attr-defined]

        return record

    for method in RECORDED:
        client.feature(method)(recorder(method))
    return client


@contextlib.asynccontextmanager
async def lsp_server(
    tmp_path: Path,
    *,
    settings: dict[str, Any] | None = None,
    key: str | None = KEY,
    base_url: str | None = None,
    name: str = "server",
) -> AsyncIterator[LanguageClient]:
    """A real server subprocess (stdio, pytest-lsp) logging at debug level to ``logs/<name>.log``
    (a folder of its own: the server watches the workspace's ancestors for AGENTS.md files)."""
    env: dict[str, str] = {}
    if key is not None:
        env["ANTHROPIC_API_KEY"] = key
    if base_url is not None:
        env["ANTHROPIC_BASE_URL"] = base_url
    log_file = tmp_path / "logs" / f"{name}.log"
    log_file.parent.mkdir(exist_ok=True)
    config = ClientServerConfig(
        server_command=[*SERVER, "--log-file", str(log_file), "--log-level", "debug"],
        server_env=server_env(tmp_path / "agent", **env),
        client_factory=make_recording_client,
    )
    client = await config.start()
    root = tmp_path / "workspace"
    root.mkdir(exist_ok=True)
    options = {"pi": {"sessionDir": str(tmp_path / "sessions"), **(settings or {})}}
    await client.initialize_session(
        types.InitializeParams(
            capabilities=types.ClientCapabilities(),
            root_uri=root.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=root.as_uri(), name="workspace")],
            initialization_options=options,
        )
    )
    client.log_file = log_file  # type: ignore[attr-defined]
    try:
        yield client
    finally:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(client.shutdown_session(), 10)
        await client.stop()


def configure(client: LanguageClient, settings: dict[str, Any]) -> None:
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings={"pi": settings}))


def send(client: LanguageClient, method: str, params: dict[str, Any]) -> tuple[str, asyncio.Future[Any]]:
    """A request with a known id (to cancel it later) and the future of its answer."""
    msg_id = f"req-{next(_ids)}"
    future = asyncio.wrap_future(client.protocol.send_request(method, params, msg_id=msg_id))
    return msg_id, future


def cancel(client: LanguageClient, msg_id: str) -> None:
    client.protocol.notify("$/cancelRequest", types.CancelParams(id=msg_id))


def events(client: LanguageClient, method: str | None = None) -> list[Any]:
    recorded: list[tuple[str, Any]] = client.events  # type: ignore[attr-defined]
    return [params for name, params in recorded if method is None or name == method]


async def next_event(client: LanguageClient, method: str, after: int, timeout: float = 10) -> Any:
    """The first ``method`` notification beyond the first ``after`` ones."""
    found = await wait_until(lambda: len(events(client, method)) > after, timeout)
    assert found
    return events(client, method)[after]


# ---------------------------------------------------------------------- session content

USAGE = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0,
         "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}}  # fmt: skip


def user_entry(text: str) -> dict[str, Any]:
    return {"type": "message", "message": {"role": "user", "content": [{"type": "text", "text": text}]}}


def assistant_entry(
    text: str, total: int = 100, *, stop: str = "stop", timestamp: int | None = None, **extra: Any
) -> dict[str, Any]:
    message: dict[str, Any] = {
        "role": "assistant", "content": [{"type": "text", "text": text}], "api": "anthropic-messages",
        "provider": "anthropic", "model": "claude-test", "usage": {**USAGE, "totalTokens": total},
        "stopReason": stop, **extra,
    }  # fmt: skip
    if timestamp is not None:
        message["timestamp"] = timestamp
    return {"type": "message", "message": message}


async def new_session_with_turns(client: LanguageClient, turns: int, call: Any) -> dict[str, Any]:
    """A new session of ``turns`` user (long) / assistant (short) pairs; cuts land on a user turn
    with a small ``keepRecentTokens``, so one compaction makes exactly one model request."""
    state: dict[str, Any] = await call(client, "pi/newSession", {})
    for number in range(turns):
        await call(client, "pi/appendEntry", {"entry": user_entry(f"question {number}: " + "word " * 150)})
        await call(client, "pi/appendEntry", {"entry": assistant_entry(f"answer {number}", 1000 + number)})
    return state


# ---------------------------------------------------------------------- the fake's replies


class Script:
    """Replies for the fake Messages API in order (``then`` when the queue is empty)."""

    def __init__(self, then: Reply | None = None) -> None:
        self.queue: deque[Reply] = deque()
        self.then = then or Reply(events=text_stream("SUMMARY TEXT"))

    def __call__(self, request: Recorded) -> Reply:
        return self.queue.popleft() if self.queue else self.then

    def set(self, *replies: Reply, then: Reply | None = None) -> None:
        self.queue = deque(replies)
        if then is not None:
            self.then = then


def prompt_of(request: Recorded) -> str:
    text: str = request.body["messages"][0]["content"][0]["text"]
    return text


def sent_key(request: Recorded) -> str | None:
    headers = request.headers
    if "x-api-key" in headers:
        return headers["x-api-key"]
    auth = headers.get("authorization", "")
    return auth.removeprefix("Bearer ") if auth.startswith("Bearer ") else None


def assert_pytest_lsp_ok(client: LanguageClient) -> None:
    assert client.error is None, client.error


__all__ = ["Reply", "Script", "text_stream"]
