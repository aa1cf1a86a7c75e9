"""Run pi's own agent (``tests/pi/agent_run.mjs``) against the loopback fake Messages API.

pi is pointed at the fake through ``<agentDir>/models.json`` (its documented way of routing a
built-in provider elsewhere); the fake records every request pi makes, and the driver reports the
agent messages pi converted for each model call, its tool definitions and its system prompt —
everything needed to build the same request ourselves and compare.
"""

from __future__ import annotations

import asyncio
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.llm.fake_anthropic import FakeAnthropic
from tests.oracle import REPO_ROOT, oracle_dir

AGENT_RUN = REPO_ROOT / "tests" / "pi" / "agent_run.mjs"
FAKE_KEY = "sk-ant-api03-oracle-fake-key-000000"


@dataclass
class PiRun:
    contexts: list[list[dict[str, Any]]]
    tools: list[dict[str, Any]]
    system_prompt: str
    session_file: str | None
    thinking_level: str
    model: str
    commands: list[dict[str, Any]]


def prepare_agent_dir(root: Path, base_url: str, extra_settings: dict[str, Any] | None = None) -> Path:
    """An agent dir whose ``anthropic`` provider is the fake, with fast failures and no retries."""
    agent_dir = root / "agent"
    agent_dir.mkdir(parents=True, exist_ok=True)
    (agent_dir / "models.json").write_text(json.dumps({"providers": {"anthropic": {"baseUrl": base_url}}}))
    settings = {"retry": {"enabled": False, "provider": {"maxRetries": 0}}, "compaction": {"enabled": False},
                **(extra_settings or {})}  # fmt: skip
    (agent_dir / "settings.json").write_text(json.dumps(settings))
    return agent_dir


async def run_pi_agent(
    fake: FakeAnthropic,
    root: Path,
    *,
    model_id: str,
    thinking_level: str | None,
    prompts: list[dict[str, Any]],
    session_file: Path | None = None,
    tools: list[str] | None = None,
    settings: dict[str, Any] | None = None,
    env: dict[str, str] | None = None,
    timeout: float = 60.0,
) -> PiRun:
    """pi runs the prompts; returns what it converted per model call (the fake has the requests)."""
    agent_dir = prepare_agent_dir(root, fake.url, settings)
    cwd = root / "work"
    cwd.mkdir(exist_ok=True)
    request: dict[str, Any] = {
        "cwd": str(cwd),
        "agentDir": str(agent_dir),
        "sessionDir": str(root / "sessions"),
        "modelId": model_id,
        "prompts": prompts,
    }
    if thinking_level is not None:
        request["thinkingLevel"] = thinking_level
    if session_file is not None:
        request["sessionFile"] = str(session_file)
    if tools is not None:
        request["tools"] = tools
    child_env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("ANTHROPIC_", "PI_")) or key == "PI_ORACLE_DIR"
    }
    child_env.update(env or {})
    child_env.update(
        PI_CODING_AGENT_DIR=str(agent_dir),
        ANTHROPIC_API_KEY=FAKE_KEY,
        PI_ORACLE_DIR=str(oracle_dir()),
        PI_OFFLINE="1",
        HOME=str(root),
        TZ="UTC",
    )
    process = await asyncio.create_subprocess_exec(
        "node", str(AGENT_RUN),
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        cwd=str(cwd), env=child_env,
    )  # fmt: skip
    stdout, stderr = await asyncio.wait_for(process.communicate(json.dumps(request).encode()), timeout)
    if process.returncode != 0:
        raise RuntimeError(f"pi agent run failed ({process.returncode}): {stderr.decode()[-2000:]}")
    result = json.loads(stdout)
    return PiRun(
        contexts=result["contexts"],
        tools=result["tools"],
        system_prompt=result["systemPrompt"],
        session_file=result["sessionFile"],
        thinking_level=result["thinkingLevel"],
        model=result["model"],
        commands=result["commands"],
    )


def session_file(path: Path, cwd: Path, entries: list[dict[str, Any]]) -> Path:
    """A pi session file (v3 header + ``entries``, chained by ``parentId`` when not given)."""
    header = {"type": "session", "version": 3, "id": "0b1c2d3e-0000-4000-8000-000000000001",
              "timestamp": "2026-01-01T00:00:00.000Z", "cwd": str(cwd)}  # fmt: skip
    lines = [header]
    parent: str | None = None
    for number, entry in enumerate(entries, start=1):
        full = {"type": entry.get("type", "message"), "id": entry.get("id", f"e{number:07d}"),
                "parentId": entry.get("parentId", parent),
                "timestamp": f"2026-01-01T00:00:{number:02d}.000Z", **entry}  # fmt: skip
        parent = full["id"]
        lines.append(full)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path
