"""The server's SDK clients: one per key, endpoint and options for the life of the server.

Through the real server against the loopback fake model (which counts the connections it
accepted): runs reuse one client and its connection, a changed key gets a new client and the old
one is closed. In process: the cache keyed by key / base URL / options, and closed at server exit.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from pi_lsp.service.build import build_service
from pi_lsp.service.model_clients import ClientKey, ModelClients
from tests.agent.chat_support import MODEL, ChatClient, Workspace
from tests.llm.fake_anthropic import FakeAnthropic, Reply, Text, assistant_stream
from tests.pi.pi_rpc import write_agent_dir

KEY_A = "sk-ant-api03-first-key-0000000000"
KEY_B = "sk-ant-api03-second-key-111111111"


def _write_key(ws: Workspace, key: str) -> None:
    (ws.agent_dir / "auth.json").write_text(json.dumps({"anthropic": {"type": "api_key", "key": key}}))


async def _until(condition: Any, timeout: float = 10) -> None:
    async def wait() -> None:
        while not condition():
            await asyncio.sleep(0.02)

    await asyncio.wait_for(wait(), timeout)


async def test_runs_share_one_client_and_a_new_key_gets_a_new_one() -> None:
    ws = Workspace({"hello.txt": "hi\n"})
    replies = [Reply(events=assistant_stream(Text(f"Answer {n}."), message_id=f"m{n}")) for n in range(4)]
    try:
        async with FakeAnthropic(replies) as fake:
            write_agent_dir(ws.agent_dir, fake.url, ws.settings)
            _write_key(ws, KEY_A)  # from auth.json, so that it can change while the server runs
            client = await ChatClient.start(
                ws, fake.url, options={"model": MODEL}, env={"ANTHROPIC_API_KEY": ""}
            )
            try:
                await client.new_session(ws)
                for text in ("one", "two", "three"):
                    await client.rpc.request("pi/prompt", {"text": text})
                assert fake.connections == 1  # one client, its connection kept alive between runs
                assert [r.headers["x-api-key"] for r in fake.requests] == [KEY_A] * 3

                _write_key(ws, KEY_B)
                await client.rpc.request("pi/prompt", {"text": "four"})
                assert fake.requests[-1].headers["x-api-key"] == KEY_B
                assert fake.connections == 2  # never the old key's client
                await _until(lambda: fake.connections_closed == 1)  # the old key's client is closed
            finally:
                await client.close()
    finally:
        ws.cleanup()


# ------------------------------------------------------------------------------ the cache alone


class FakeSdk:
    def __init__(self, key: ClientKey) -> None:
        self.key = key
        self.closed = 0

    async def close(self) -> None:
        self.closed += 1


async def test_one_client_per_key_base_url_and_options(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    clients = ModelClients(FakeSdk)
    first = await clients.borrow(KEY_A)
    assert await clients.borrow(KEY_A) is first
    assert await clients.borrow(KEY_A, max_retries=0) is not first  # other options: another client
    assert (await clients.borrow(KEY_A, base_url="http://127.0.0.1:1")).key.base_url == "http://127.0.0.1:1"
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:2")
    from_env = await clients.borrow(KEY_A)
    assert from_env is not first and from_env.key.base_url == "http://127.0.0.1:2"
    other_key = await clients.borrow(KEY_B)
    assert other_key.key.api_key == KEY_B and other_key is not from_env
    assert KEY_B not in repr(other_key.key)


async def test_old_credentials_are_closed_once_given_back_and_all_at_close() -> None:
    clients = ModelClients(FakeSdk)
    old = await clients.borrow(KEY_A, base_url="http://a")
    new = await clients.borrow(KEY_B, base_url="http://a")  # the key changed while a run held the old
    assert old.closed == 0  # still in use
    await clients.give_back(old)
    assert old.closed == 1
    await clients.give_back(new)
    assert new.closed == 0 and len(clients) == 1  # current: kept for the next run
    assert await clients.borrow(KEY_B, base_url="http://a") is new
    await clients.give_back(new)
    back = await clients.borrow(KEY_A, base_url="http://a")  # the key changed back: a new client
    assert back is not old and new.closed == 1
    await clients.aclose()
    assert (old.closed, new.closed, back.closed) == (1, 1, 1)
    with pytest.raises(RuntimeError):
        await clients.borrow(KEY_B, base_url="http://a")


async def test_the_least_recently_used_beyond_the_limit_is_closed() -> None:
    clients = ModelClients(FakeSdk, limit=2)
    first = await clients.borrow(KEY_A, base_url="http://a", timeout=1)
    second = await clients.borrow(KEY_A, base_url="http://a", timeout=2)
    for client in (first, second):
        await clients.give_back(client)
    assert await clients.borrow(KEY_A, base_url="http://a", timeout=1) is first  # now the most recent
    await clients.give_back(first)
    await clients.borrow(KEY_A, base_url="http://a", timeout=3)
    assert (first.closed, second.closed) == (0, 1)
    assert len(clients) == 2


async def test_concurrent_first_borrows_make_one_client() -> None:
    made: list[FakeSdk] = []

    def factory(key: ClientKey) -> FakeSdk:
        made.append(FakeSdk(key))
        return made[-1]

    clients = ModelClients(factory)
    got = await asyncio.gather(*(clients.borrow(KEY_A, base_url="http://a") for _ in range(5)))
    assert len(made) == 1 and all(client is made[0] for client in got)


async def test_server_exit_closes_the_real_sdk_client() -> None:
    service = build_service(workers=1)
    async with FakeAnthropic() as fake:
        client = await service.model_clients.borrow(KEY_A, base_url=fake.url)
        await service.model_clients.give_back(client)
        assert not client.is_closed()
        await service.close()
        assert client.is_closed()


async def test_a_borrow_marks_the_event_loops_thread_as_asyncio_for_sniffio() -> None:
    """The SDK's HTTP stack asks sniffio which async library runs on every read of a stream; the
    event loop's thread is marked (sniffio's ``thread_local.name``) so it answers without looking up
    the current task, and no other thread is."""
    import threading

    import sniffio

    sniffio.thread_local.name = None
    clients = ModelClients(FakeSdk)
    try:
        await clients.borrow(KEY_A)
        assert sniffio.thread_local.name == "asyncio"
        assert sniffio.current_async_library() == "asyncio"
        elsewhere: list[str | None] = []
        worker = threading.Thread(target=lambda: elsewhere.append(sniffio.thread_local.name))
        worker.start()
        worker.join()
        assert elsewhere == [None]
    finally:
        sniffio.thread_local.name = None
        await clients.aclose()
