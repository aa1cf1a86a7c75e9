"""The warm-up (``service/warm_up.py``): a server that has gone quiet loads what a first prompt needs
(the agent, the Anthropic SDK) in a worker, so the user's first prompt does not wait for seconds of
imports; while messages keep coming it waits; a prompt that comes during it shares its build.

The real servers here (``pi-lsp --stdio`` and ``pi-lsp acp``) run under an import recorder that
writes down which watched modules were imported, in which thread, and nothing else. The warm-up is
off by default, so every other server of the suite runs without it; these turn it on."""

from __future__ import annotations

import asyncio
import sys
import threading
import time
from pathlib import Path
from typing import Any

import orjson
import pytest

from pi_lsp.client.rpc_client import RpcClient
from pi_lsp.service import warm_up
from pi_lsp.service.build import PiService, build_service
from tests.llm.fake_anthropic import FakeAnthropic
from tests.server.support import server_env

RECORDER = r"""
import sys, threading

log = sys.argv[1]
WATCHED = ("anthropic", "pi_lsp.agent.runner", "pi_lsp.service.runs", "httpcore2", "anyio._backends._asyncio")


class Recorder:  # a meta path finder: find_spec is all sys.meta_path asks of one
    def find_spec(self, name, path=None, target=None):
        if name in WATCHED and name not in seen:
            seen.add(name)
            where = "loop" if threading.current_thread() is threading.main_thread() else "thread"
            with open(log, "a") as handle:
                handle.write(f"{name}:{where}\n")
        return None


seen = set()
sys.meta_path.insert(0, Recorder())
sys.argv = ["pi-lsp", *sys.argv[2:]]
from pi_lsp.cli import main

raise SystemExit(main())
"""


def _imported(log: Path) -> list[str]:
    return log.read_text().split() if log.exists() else []


async def _until_imported(log: Path, name: str, timeout: float = 60.0) -> list[str]:
    deadline = time.monotonic() + timeout
    while not any(line.startswith(name + ":") for line in _imported(log)):
        assert time.monotonic() < deadline, f"{name} was never imported: {_imported(log)}"
        await asyncio.sleep(0.05)
    return _imported(log)


async def _start(tmp_path: Path, quiet: str, *args: str, **env: str) -> tuple[RpcClient, Path]:
    log = tmp_path / "imported.txt"
    command = [sys.executable, "-c", RECORDER, str(log), *args]
    environment = server_env(tmp_path / "agent", PI_LSP_WARM_UP=quiet, **env)
    if quiet == "unset":  # as users start it: the default
        del environment["PI_LSP_WARM_UP"]
    return await RpcClient.start(command, env=environment, quiet=True), log


async def _initialize(client: RpcClient, tmp_path: Path) -> None:
    await client.request(
        "initialize", {"processId": None, "rootUri": tmp_path.as_uri(), "capabilities": {}}, timeout=60
    )
    client.notify("initialized", {})


async def test_a_quiet_server_loads_the_first_prompts_modules_and_the_prompt_uses_them(
    tmp_path: Path,
) -> None:
    async with FakeAnthropic() as fake:
        client, log = await _start(
            tmp_path, "0.3", "--stdio", ANTHROPIC_API_KEY="sk-test-warm", ANTHROPIC_BASE_URL=fake.url
        )
        try:
            await _initialize(client, tmp_path)
            opened = await client.request("pi/newSession", {"cwd": str(tmp_path)}, timeout=60)
            # No prompt: the server went quiet, so it loads the agent, the SDK and its transport.
            await _until_imported(log, "pi_lsp.agent.runner")
            await _until_imported(log, "anthropic")
            imported = await _until_imported(log, "httpcore2")
            assert {"anthropic:thread", "pi_lsp.agent.runner:thread", "httpcore2:thread"} <= set(imported)
            assert fake.requests == []  # the warm-up makes no model call and opens no connection
            assert fake.connections == 0
            result = await client.request(
                "pi/prompt", {"session": opened["sessionId"], "text": "Hello"}, timeout=60
            )
            assert result["stopReason"] == "stop"
            assert len(fake.requests) == 1
            assert fake.requests[0].headers["x-api-key"] == "sk-test-warm"
        finally:
            await client.close(timeout=60)


@pytest.mark.parametrize("setting", ["unset", "off"])
async def test_on_unless_turned_off(tmp_path: Path, setting: str) -> None:
    client, log = await _start(tmp_path, setting, "--stdio")
    try:
        await _initialize(client, tmp_path)
        await client.request("pi/getServerStatus", {}, timeout=60)
        if setting == "unset":
            assert "anthropic:thread" in await _until_imported(log, "anthropic")
        else:
            await asyncio.sleep(2.0)  # four times the default quiet
            assert "anthropic:thread" not in _imported(log)
            assert "anthropic:loop" not in _imported(log)
    finally:
        await client.close(timeout=60)


async def test_messages_that_keep_coming_keep_it_waiting(tmp_path: Path) -> None:
    client, log = await _start(tmp_path, "2.5", "--stdio")
    try:
        await _initialize(client, tmp_path)
        until = time.monotonic() + 4.0
        while time.monotonic() < until:  # a message every 0.2 s: never 2.5 s of quiet
            await client.request("pi/getServerStatus", {}, timeout=60)
            await asyncio.sleep(0.2)
        assert "anthropic:thread" not in _imported(log)
        await _until_imported(log, "anthropic")  # then quiet: it starts
    finally:
        await client.close(timeout=60)


async def test_the_acp_door_warms_up_too(tmp_path: Path) -> None:
    log = tmp_path / "imported.txt"
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-c", RECORDER, str(log), "acp",
        env=server_env(tmp_path / "agent", PI_LSP_WARM_UP="0.3"),
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL,
    )  # fmt: skip
    assert process.stdin is not None and process.stdout is not None
    try:
        request = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}}
        process.stdin.write(orjson.dumps(request) + b"\n")
        answer = orjson.loads(await asyncio.wait_for(process.stdout.readline(), 60))
        assert answer["id"] == 1 and "result" in answer
        imported = await _until_imported(log, "anthropic")  # quiet after initialize: it starts
        assert "anthropic:thread" in imported
    finally:
        process.stdin.close()
        assert await asyncio.wait_for(process.wait(), 60) == 0


async def test_a_prompt_during_the_warm_up_shares_its_build(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))
    release = threading.Event()
    builds: list[bool] = []  # one per build: on the event loop's thread?
    real_make_runs = PiService._make_runs

    def held_make_runs(self: PiService) -> Any:
        builds.append(threading.current_thread() is threading.main_thread())
        release.wait(10)
        return real_make_runs(self)

    monkeypatch.setattr(PiService, "_make_runs", held_make_runs)
    service = build_service()
    try:
        warming = asyncio.ensure_future(service.warm())
        await asyncio.sleep(0.05)  # the warm-up's build is under way, held
        first_prompt = asyncio.ensure_future(service.build_off_loop(service.lazy.runs))
        await asyncio.sleep(0.05)
        assert not first_prompt.done()  # it waits for the warm-up's build ...
        release.set()
        await asyncio.wait_for(asyncio.gather(warming, first_prompt), 60)
        assert builds == [False]  # ... which was the only one, in a worker
        assert service.lazy.runs.built is not None
    finally:
        release.set()
        await service.close()


async def test_a_failed_warm_up_is_logged_and_not_retried(caplog: pytest.LogCaptureFixture) -> None:
    calls: list[int] = []

    async def fails() -> None:
        calls.append(1)
        raise RuntimeError("no SDK here")

    warming = warm_up.WarmUp(fails, 0.01)
    warming.touch()
    deadline = time.monotonic() + 30
    while not warming.done:
        assert time.monotonic() < deadline
        await asyncio.sleep(0.01)
    warming.touch()
    await asyncio.sleep(0.05)
    assert calls == [1]
    assert "the warm-up failed" in caplog.text
    await warming.aclose()


async def test_closing_before_the_quiet_stops_it() -> None:
    calls: list[int] = []

    async def warm() -> None:
        calls.append(1)

    warming = warm_up.WarmUp(warm, 0.2)
    warming.touch()
    await warming.aclose()
    warming.touch()  # a message after the close starts nothing
    await asyncio.sleep(0.4)
    assert calls == []


DEFAULT = warm_up.QUIET_SECONDS


@pytest.mark.parametrize(
    ("value", "quiet"),
    [
        ("", DEFAULT),
        ("0", None),
        ("off", None),
        ("No", None),
        ("false", None),
        ("on", DEFAULT),
        ("2.5", 2.5),
        ("soon", DEFAULT),
        ("-1", None),
        ("nan", None),
    ],
)
def test_the_environment_sets_the_quiet(value: str, quiet: float | None) -> None:
    assert warm_up.quiet_seconds({warm_up.ENV: value}) == quiet
    assert warm_up.quiet_seconds({}) == DEFAULT  # on unless turned off


async def test_a_close_during_the_warm_ups_build_waits_for_it_and_closes_what_it_built(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))
    from pi_lsp.service.runs import RunService

    release = threading.Event()
    closed: list[RunService] = []
    real_make_runs, real_aclose = PiService._make_runs, RunService.aclose

    def held_make_runs(self: PiService) -> Any:
        release.wait(10)
        return real_make_runs(self)

    async def recorded_aclose(self: RunService) -> None:
        closed.append(self)
        await real_aclose(self)

    monkeypatch.setattr(PiService, "_make_runs", held_make_runs)
    monkeypatch.setattr(RunService, "aclose", recorded_aclose)
    service = build_service()
    service.warm_up = warm_up.WarmUp(service.warm, 0.0)
    service.warm_up.touch()
    await asyncio.sleep(0.1)  # the warm-up's build is under way, held
    threading.Timer(0.3, release.set).start()
    await asyncio.wait_for(service.close(), 60)
    built = service.lazy.runs.built
    assert built is not None and closed == [built]  # built during the close, and closed by it
