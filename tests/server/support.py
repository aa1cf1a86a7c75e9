"""Helpers of the language-server tests: the server command and its environment, requests, the
pytest-lsp client's converter, fixture files and entries to append.

Every server (and CLI) subprocess gets ``PI_CODING_AGENT_DIR`` pointing into a temporary folder,
so nothing here reads or writes ``~/.pi``. The ``client`` fixture is in ``conftest.py``; tests
import these helpers from here, never from a conftest.
"""

from __future__ import annotations

import asyncio
import atexit
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from pygls.exceptions import JsonRpcException
from pygls.protocol import default_converter
from pygls.protocol.json_rpc import JsonRPCNotification, JsonRPCRequestMessage, JsonRPCResponseMessage
from pytest_lsp import LanguageClient

from pi_lsp.client.rpc_client import RpcClient
from tests.oracle import FIXTURES

FIXTURE = FIXTURES / "branched-v3.jsonl"
PI_FIXTURES = FIXTURES / "pi"
AGENT_ROOT = Path(tempfile.mkdtemp(prefix="pi-lsp-tests-"))
atexit.register(shutil.rmtree, AGENT_ROOT, ignore_errors=True)
SERVER = [sys.executable, "-m", "pi_lsp"]


def server_env(agent_dir: Path | None = None, **extra: str) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("PI_CODING_AGENT")}
    env["PI_CODING_AGENT_DIR"] = str(agent_dir or AGENT_ROOT / "agent")
    env.pop("ANTHROPIC_API_KEY", None)
    env.update(extra)
    return env


def raw_converter() -> Any:
    """pygls' converter, but results and custom notifications stay plain JSON (no namedtuples)."""
    converter = default_converter()
    converter.register_structure_hook(
        JsonRPCResponseMessage,
        lambda obj, cls: cls(id=obj["id"], jsonrpc=obj["jsonrpc"], result=obj.get("result")),
    )
    converter.register_structure_hook(
        JsonRPCNotification,
        lambda obj, cls: cls(method=obj["method"], jsonrpc=obj["jsonrpc"], params=obj.get("params")),
    )
    converter.register_structure_hook(
        JsonRPCRequestMessage,
        lambda obj, cls: cls(
            id=obj["id"], method=obj["method"], jsonrpc=obj["jsonrpc"], params=obj.get("params")
        ),
    )
    return converter


def make_client() -> LanguageClient:
    client = LanguageClient(converter_factory=raw_converter)
    pytest_lsp.client.register_lsp_features(client)
    client.changes = []  # type: ignore[attr-defined]

    @client.feature("pi/sessionChanged")
    def on_changed(params: Any) -> None:
        client.changes.append(params)  # type: ignore[attr-defined]

    return client


async def call(client: LanguageClient, method: str, params: Any = None) -> Any:
    return await asyncio.wait_for(
        client.protocol.send_request_async(method, params if params is not None else {}), 30
    )


async def call_error(client: LanguageClient, method: str, params: Any = None) -> JsonRpcException:
    with pytest.raises(JsonRpcException) as info:
        await call(client, method, params)
    return info.value


async def wait_until(condition: Callable[[], Any], timeout: float = 5.0) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        await asyncio.sleep(0.02)
    raise AssertionError("condition not met in time")


def copy_fixture(tmp_path: Path, source: Path = FIXTURE, name: str | None = None) -> Path:
    target = tmp_path / (name or source.name)
    shutil.copyfile(source, target)
    return target


async def start_raw(tmp_path: Path, *args: str, **env: str) -> RpcClient:
    client = await RpcClient.start([*SERVER, *args], env=server_env(tmp_path / "agent", **env), quiet=True)
    await client.initialize(str(tmp_path))
    return client


# ---------------------------------------------------------------------- entries to append


def user(text: str) -> dict[str, Any]:
    return {"type": "message", "message": {"role": "user", "content": [{"type": "text", "text": text}]}}


def assistant(text: str, tool: dict[str, Any] | None = None) -> dict[str, Any]:
    content: list[dict[str, Any]] = [{"type": "text", "text": text}]
    if tool:
        content.append({"type": "toolCall", **tool})
    return {
        "type": "message",
        "message": {
            "role": "assistant",
            "content": content,
            "api": "anthropic-messages",
            "provider": "anthropic",
            "model": "claude-test",
            "usage": {
                "input": 1,
                "output": 1,
                "cacheRead": 0,
                "cacheWrite": 0,
                "totalTokens": 2,
                "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
            },
            "stopReason": "toolUse" if tool else "stop",
        },
    }


def tool_result(call_id: str, text: str) -> dict[str, Any]:
    return {
        "type": "message",
        "message": {
            "role": "toolResult",
            "toolCallId": call_id,
            "toolName": "read",
            "content": [{"type": "text", "text": text}],
            "isError": False,
        },
    }


def write_linear_session(
    path: Path, count: int, session_id: str = "0197b000-0000-7000-8000-00000000beef", pad: str = ""
) -> Path:
    """A v3 session of ``count`` alternating user/assistant messages in one chain, written fast;
    each text ends with ``pad`` (big sessions from few lines)."""
    import orjson

    header = {
        "type": "session",
        "version": 3,
        "id": session_id,
        "timestamp": "2026-01-01T00:00:00.000Z",
        "cwd": str(path.parent),
    }
    lines = [orjson.dumps(header)]
    parent = None
    for number in range(count):
        entry_id = f"{number:08x}"
        stamp = f"2026-01-01T00:{(number // 60000) % 60:02d}:{(number // 1000) % 60:02d}.{number % 1000:03d}Z"
        if number % 2 == 0:
            message: dict[str, Any] = {
                "role": "user",
                "content": [{"type": "text", "text": f"question {number}{pad}"}],
                "timestamp": 1767225600000 + number,
            }
        else:
            message = assistant(f"answer {number}{pad}")["message"] | {"timestamp": 1767225600000 + number}
        lines.append(
            orjson.dumps(
                {
                    "type": "message",
                    "id": entry_id,
                    "parentId": parent,
                    "timestamp": stamp,
                    "message": message,
                }
            )
        )
        parent = entry_id
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


# ---------------------------------------------------------------------- processes


def stop_and_continue(pid: int, done: threading.Event) -> None:
    """SIGSTOP then SIGCONT, over and over until ``done``, as Ctrl-Z and ``fg`` or an attaching
    debugger do: a write to a pipe or terminal under way then returns having written part."""
    while not done.is_set():
        try:
            os.kill(pid, signal.SIGSTOP)
            done.wait(0.002)
            os.kill(pid, signal.SIGCONT)
        except ProcessLookupError:
            return
        done.wait(0.003)


def run_cli(tmp_path: Path, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """``pi-lsp <args>`` as a subprocess with its own agent dir, text output captured."""
    return subprocess.run(
        [*SERVER, *args],
        env=server_env(tmp_path / "agent"),
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd or tmp_path,
        stdin=subprocess.DEVNULL,
    )


# A server under an import hook that holds any import of ``lsprotocol`` until the file ``argv[1]``
# exists, and logs to ``argv[2]`` which of the watched modules were imported (tests/server/test_startup.py),
# and whether the cyclic collector was on when start-up reached pygls (``gc:start-up:on|off``) and
# once the server had ended (``gc:served:on|off``), and which thread imported the prompt service
# (``prompt-service:loop|thread``). Started as VS Code starts it: ``pi-lsp --stdio``.
GATED = r"""
import gc, os, sys, threading, time  # not importlib.abc: it imports tempfile, which start-up must not

gate, log = sys.argv[1], sys.argv[2]
WATCHED = (
    "anthropic", "lsprotocol", "pygls", "pi_lsp.service.runs", "pi_lsp.agent.tools", "pi_lsp.llm.stream",
    "regex", "pi_lsp.llm.summarizer", "pi_lsp.agent.runner", "pi_lsp.checkpoints",
    "argparse", "tempfile", "secrets", "decimal", "pi_lsp.session.deep_json", "pi_lsp.service.compaction",
    "tiktoken",
)


def note(line):
    with open(log, "a") as handle:
        handle.write(line + "\n")


class Gate:  # a meta path finder: find_spec is all sys.meta_path asks of one
    def find_spec(self, name, path=None, target=None):
        if name.startswith(WATCHED) and name not in seen:
            seen.add(name)
            note(name)
        if name == "pi_lsp.service.prompt":
            on_loop = threading.current_thread() is threading.main_thread()
            note("prompt-service:" + ("loop" if on_loop else "thread"))
        if name == "lsprotocol":
            note("gc:start-up:" + ("on" if gc.isenabled() else "off"))
            while not os.path.exists(gate):
                time.sleep(0.005)
        return None


seen = set()
sys.meta_path.insert(0, Gate())
sys.argv = ["pi-lsp", "--stdio"]
from pi_lsp.cli import main

code = main()
note("gc:served:" + ("on" if gc.isenabled() else "off"))
raise SystemExit(code)
"""
