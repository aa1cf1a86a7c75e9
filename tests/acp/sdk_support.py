"""Running ``client.mjs`` (the official ACP TypeScript SDK as a client of the real ``pi-lsp acp``)
from a test: the command, the SDK check, one client run and its report, the updates of a kind."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import sys
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from tests.agent.chat_support import Workspace

HERE = Path(__file__).parent
SDK = HERE / "node_modules" / "@agentclientprotocol" / "sdk" / "package.json"
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="


def acp_command() -> list[str]:
    return [sys.executable, "-m", "pi_lsp", "acp"]


def require_sdk() -> None:
    if shutil.which("node") is None or not SDK.exists():
        message = "the ACP SDK is not installed: run `make acp-deps` (npm ci in tests/acp)"
        if os.environ.get("PI_LSP_REQUIRE_ORACLE"):
            pytest.fail(message)
        pytest.skip(message)


async def run_client(
    ws: Workspace,
    base_url: str,
    phase: str,
    *,
    during: Callable[[], Awaitable[None]] | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """One ``pi-lsp acp`` process driven by the SDK through ``phase``; the client's report.

    ``during`` runs while the client does (another process writing to the session, say); the
    report is read once both are done."""
    env = ws.server_env(base_url)
    env["PYTHONPATH"] = str(HERE.parent.parent)
    config = {"command": acp_command(), "env": env, "cwd": str(ws.cwd), "project": str(ws.cwd),
              "phase": phase, "image": PNG, **extra}  # fmt: skip
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as handle:
        json.dump(config, handle)
    try:
        process = await asyncio.create_subprocess_exec(
            "node", str(HERE / "client.mjs"), handle.name, cwd=str(HERE), stdout=asyncio.subprocess.PIPE
        )
        talking = asyncio.ensure_future(process.communicate())
        helping = asyncio.ensure_future(during()) if during is not None else None
        try:
            if helping is not None:  # a failure on either side ends both
                await asyncio.wait({talking, helping}, timeout=240, return_when=asyncio.FIRST_COMPLETED)
                if helping.done():
                    helping.result()
            out, _ = await asyncio.wait_for(talking, 240)
            if helping is not None and not helping.done():
                helping.cancel()
                raise AssertionError(f"the client ended before the other side was done: {out[-2000:]!r}")
        finally:
            if process.returncode is None:
                process.kill()
                await asyncio.wait_for(talking, 30)
            if helping is not None and not helping.done():
                helping.cancel()
    finally:
        os.unlink(handle.name)
    assert process.returncode == 0, out[-2000:]
    report: dict[str, Any] = json.loads(out)
    assert report["schemaErrors"] == [], report["schemaErrors"]
    assert report["exitCode"] == 0
    return report


def updates(
    report: dict[str, Any], kind: str, start: int = 0, end: int | None = None
) -> list[dict[str, Any]]:
    return [u["update"] for u in report["updates"][start:end] if u["update"]["sessionUpdate"] == kind]
