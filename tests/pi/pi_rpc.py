"""Drive pi itself (``pi --mode rpc`` from the oracle package) against a loopback fake model.

pi is pointed at the fake through ``<agentDir>/models.json`` (its documented way to re-route a
built-in provider), so the same scripted replies can be played to pi and to our server and the two
compared: the requests the fake received, the session file and the events.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
from pathlib import Path
from typing import Any

from tests.oracle import oracle_dir

PI_PACKAGE = "node_modules/@mariozechner/pi-coding-agent"


def pi_package_dir() -> Path:
    return oracle_dir() / PI_PACKAGE


def write_agent_dir(agent_dir: Path, base_url: str, settings: dict[str, Any]) -> None:
    """models.json re-routing pi's anthropic provider to the fake, plus pi's settings.json."""
    agent_dir.mkdir(parents=True, exist_ok=True)
    models = {"providers": {"anthropic": {"baseUrl": base_url}}}
    (agent_dir / "models.json").write_text(json.dumps(models))
    (agent_dir / "settings.json").write_text(json.dumps(settings))


class PiRpc:
    """One ``pi --mode rpc`` process: commands in, responses and events out (JSON lines)."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.events: list[dict[str, Any]] = []
        self.responses: dict[str, dict[str, Any]] = {}
        self._ids = 0
        self._changed = asyncio.Event()
        self._reader = asyncio.ensure_future(self._read())

    @classmethod
    async def start(
        cls,
        cwd: Path,
        agent_dir: Path,
        session_dir: Path,
        model: str,
        *,
        tools: list[str] | None = None,
        api_key: str = "sk-test-pi-oracle",
        session: Path | None = None,
    ) -> PiRpc:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PI_", "ANTHROPIC_"))}
        env.update(PI_CODING_AGENT_DIR=str(agent_dir), ANTHROPIC_API_KEY=api_key)
        command = ["node", str(pi_package_dir() / "dist" / "cli.js"), "--mode", "rpc"]
        command += ["--session-dir", str(session_dir), "--model", model]
        if session is not None:  # continue this session file
            command += ["--session", str(session)]
        if tools is not None:
            command += ["--tools", ",".join(tools)] if tools else ["--no-tools"]
        process = await asyncio.create_subprocess_exec(
            *command,
            cwd=str(cwd),
            env=env,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
            limit=1 << 24,
        )
        return cls(process)

    async def _read(self) -> None:
        assert self.process.stdout is not None
        while line := await self.process.stdout.readline():
            message = json.loads(line)
            if message.get("type") == "response":
                self.responses[str(message.get("id"))] = message
            else:
                self.events.append(message)
            self._changed.set()

    async def command(self, kind: str, **fields: Any) -> dict[str, Any]:
        """Send one command and wait for its response."""
        self._ids += 1
        key = str(self._ids)
        assert self.process.stdin is not None
        self.process.stdin.write((json.dumps({"id": key, "type": kind, **fields}) + "\n").encode())
        await self.process.stdin.drain()
        while key not in self.responses:
            await self._wait_change()
        return self.responses.pop(key)

    async def _wait_change(self, timeout: float = 30) -> None:
        self._changed.clear()
        await asyncio.wait_for(self._changed.wait(), timeout)

    async def wait_for(self, predicate: Any, timeout: float = 30) -> None:
        async def wait() -> None:
            while not predicate(self.events):
                await self._wait_change(timeout)

        await asyncio.wait_for(wait(), timeout)

    async def wait_idle(self, timeout: float = 30) -> None:
        """Until pi reports it is neither streaming nor retrying (after at least one agent_end)."""

        async def wait() -> None:
            while True:
                if any(e.get("type") == "agent_end" for e in self.events):
                    state = await self.command("get_state")
                    data = state.get("data") or {}
                    if not data.get("isStreaming") and not data.get("isCompacting") and _settled(self.events):
                        return
                await asyncio.sleep(0.05)

        await asyncio.wait_for(wait(), timeout)

    async def close(self) -> None:
        with contextlib.suppress(Exception):
            assert self.process.stdin is not None
            self.process.stdin.close()
        with contextlib.suppress(ProcessLookupError):
            self.process.terminate()
        try:
            await asyncio.wait_for(self.process.wait(), 5)
        except TimeoutError:
            self.process.kill()
            await self.process.wait()
        self._reader.cancel()


def _settled(events: list[dict[str, Any]]) -> bool:
    """No retry or compaction-with-retry is pending after the last loop run."""
    for event in reversed(events):
        kind = event.get("type")
        if kind in ("auto_retry_start", "compaction_start"):
            return False
        if kind == "compaction_end":
            return not event.get("willRetry")
        if kind in ("agent_end", "auto_retry_end"):
            return True
    return False
