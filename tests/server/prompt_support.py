"""Shared by the system-prompt server tests: a pytest-lsp server with its own agent dir and HOME, a
client that records ``pi/systemPromptChanged`` and every ``publishDiagnostics``, and helpers to
wait for the server-side watcher and for exactly one notification per burst of file changes."""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import shutil
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from tests.server.support import SERVER, raw_converter, server_env

CHANGED = "pi/systemPromptChanged"
DIAGNOSTICS = "textDocument/publishDiagnostics"
QUIET_S = 0.5  # > the watcher's 100 ms debounce plus a rebuild: a second notification would show
DATE_LINE = re.compile(r"Current date: \d{4}-\d{2}-\d{2}")


@dataclass
class Workspace:
    """A temp tree: the workspace folder, an agent dir and a HOME outside it."""

    root: Path

    @property
    def ws(self) -> Path:
        return self.root / "ws"

    @property
    def agent(self) -> Path:
        return self.root / "agent"

    @property
    def home(self) -> Path:
        return self.root / "home"

    def write(self, path: Path, text: str) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        return path

    def skill(self, base: Path, name: str, description: str | None = "A skill.", extra: str = "") -> Path:
        head = [f"name: {name}"]
        if description is not None:
            head.append(f"description: {description}")
        if extra:
            head.append(extra)
        body = "---\n" + "\n".join(head) + "\n---\n\nDo the thing.\n"
        return self.write(base / name / "SKILL.md", body)


def make_workspace(tmp_path: Path) -> Workspace:
    space = Workspace(tmp_path)
    for folder in (space.ws, space.agent, space.home):
        folder.mkdir(parents=True, exist_ok=True)
    return space


def make_prompt_client() -> LanguageClient:
    client = LanguageClient(converter_factory=raw_converter)
    defaults = pytest_lsp.client.DEFAULT_CLIENT_FEATURES
    pytest_lsp.client.register_lsp_features(client, {k: v for k, v in defaults.items() if k != DIAGNOSTICS})
    client.prompt_changes = []  # type: ignore[attr-defined]
    client.published = []  # type: ignore[attr-defined]

    @client.feature(CHANGED)
    def on_changed(params: Any) -> None:
        client.prompt_changes.append(params)  # type: ignore[attr-defined]

    @client.feature(DIAGNOSTICS)
    def on_diagnostics(params: types.PublishDiagnosticsParams) -> None:
        client.diagnostics[params.uri] = params.diagnostics
        client.published.append(params)  # type: ignore[attr-defined]

    return client


def restricted_command() -> list[str] | None:
    """The server command without DAC-override capabilities (so chmod 000 binds when run as root)."""
    if os.geteuid() != 0:
        return list(SERVER)
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        return None
    return [setpriv, "--bounding-set=-dac_override,-dac_read_search", "--", *SERVER]


@contextlib.asynccontextmanager
async def prompt_server(
    space: Workspace,
    *,
    folders: list[Path] | None = None,
    command: list[str] | None = None,
    settings: dict[str, Any] | None = None,
    log_file: Path | None = None,
    **env: str,
) -> AsyncIterator[LanguageClient]:
    """A real server (stdio, pytest-lsp) with ``PI_CODING_AGENT_DIR``/``HOME`` inside ``space``."""
    extra = {"HOME": str(space.home), "TZ": "UTC", "PI_PACKAGE_DIR": "/opt/pi-docs", **env}
    logging = ["--log-file", str(log_file), "--log-level", "info"] if log_file is not None else []
    config = ClientServerConfig(
        server_command=[*(command or SERVER), *logging],
        server_env=server_env(space.agent, **extra),
        client_factory=make_prompt_client,
    )
    client = await config.start()
    folders = [space.ws] if folders is None else folders
    client.init_result = await client.initialize_session(  # type: ignore[attr-defined]
        types.InitializeParams(
            capabilities=types.ClientCapabilities(),
            root_uri=folders[0].as_uri() if folders else None,
            workspace_folders=[types.WorkspaceFolder(uri=f.as_uri(), name=f.name) for f in folders],
            initialization_options={"pi": {"sessionDir": str(space.root / "sessions"), **(settings or {})}},
        )
    )
    try:
        yield client
    finally:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(client.shutdown_session(), 10)
        await client.stop()


async def call(client: LanguageClient, method: str, params: Any = None) -> Any:
    return await asyncio.wait_for(client.protocol.send_request_async(method, params or {}), 30)


def changes(client: LanguageClient) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = client.prompt_changes  # type: ignore[attr-defined]
    return found


def send_watched(client: LanguageClient, *paths: Path, kind: int = 2) -> None:
    """A client-side ``workspace/didChangeWatchedFiles`` (2 = changed)."""
    client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(
            changes=[types.FileEvent(uri=p.as_uri(), type=types.FileChangeType(kind)) for p in paths]
        )
    )


async def wait_watching(client: LanguageClient, folder: Path) -> None:
    """Make sure the server watches ``folder``: a ``pi/getSystemPrompt`` is answered only after the
    roots added before it are watched (workspace folders, session cwds)."""
    await call(client, "pi/getSystemPrompt", {"cwd": str(folder)})
    changes(client).clear()


async def burst(
    client: LanguageClient, action: Callable[[], Any] | Callable[[], Awaitable[Any]], timeout: float = 5
) -> list[dict[str, Any]]:
    """Run ``action`` (some file changes), wait for the first notification and then a quiet
    period; returns every ``pi/systemPromptChanged`` it caused."""
    changes(client).clear()
    result = action()
    if asyncio.iscoroutine(result):
        await result
    deadline = time.monotonic() + timeout
    while not changes(client):
        assert time.monotonic() < deadline, "no pi/systemPromptChanged after the change"
        await asyncio.sleep(0.01)
    await asyncio.sleep(QUIET_S)
    return list(changes(client))


async def wait_diagnostics(
    client: LanguageClient, path: Path, predicate: Callable[[list[Any]], bool], timeout: float = 5
) -> list[Any]:
    uri = path.as_uri()
    deadline = time.monotonic() + timeout
    while True:
        current = client.diagnostics.get(uri)
        if current is not None and predicate(list(current)):
            return list(current)
        assert time.monotonic() < deadline, f"diagnostics of {path} never matched: {current}"
        await asyncio.sleep(0.02)


def normalise(text: str) -> str:
    return DATE_LINE.sub("Current date: <date>", text)


def editor_save(path: Path, text: str) -> None:
    """Save like an editor with backups: write a temp file, rename it over, touch the mode."""
    temp = path.with_name(path.name + ".tmp~")
    temp.write_text(text)
    os.replace(temp, path)
    os.chmod(path, 0o644)
