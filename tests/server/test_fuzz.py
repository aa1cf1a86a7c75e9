"""Random and malformed params for every method: each request is answered, the server stays up,
and no request ends in an internal error (which would be a bug, not bad input)."""

from __future__ import annotations

import asyncio
import string
import threading
from collections.abc import Coroutine, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pi_lsp.client.rpc_client import RpcClient
from pi_lsp.protocol import METHOD_NAMES
from pi_lsp.session.jsonl import loads_line
from tests.server.support import copy_fixture, start_raw

T = TypeVar("T")
METHODS = [*METHOD_NAMES, "pi/notAMethod"]
EXPECTED_CODES = {-32600, -32601, -32602, -32001, -32002, -32003, -32004, -32005, -32006, -32007}
IDS = ["e1", "e4", "e6", "e7", "e12", "e17"]

BAD_STRINGS = st.sampled_from(["\ud800", "a\udfffb", "\x00", "x\x00y", "file:///tmp/%00", "\ud83d\ude00"])
"""Lone surrogates (valid JSON, no valid text), NUL, and a real surrogate pair for contrast."""

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=False)
    | st.text(max_size=20)
    | BAD_STRINGS,
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=12,
)
safe_names = st.text(alphabet=string.ascii_letters + string.digits + "-_", min_size=1, max_size=10)
ids = st.sampled_from(IDS) | st.text(max_size=10) | BAD_STRINGS | json_values
entries = st.fixed_dictionaries(
    {
        "type": st.sampled_from(
            ["message", "label", "custom", "session_info", "compaction", "branch_summary", "x"]
        )
    },
    optional={
        "message": st.fixed_dictionaries(
            {"role": st.sampled_from(["user", "assistant", "toolResult", "robot"])},
            optional={"content": json_values, "timestamp": json_values},
        ),
        "targetId": ids,
        "label": json_values,
        "customType": json_values,
        "name": json_values,
        "summary": json_values,
        "firstKeptEntryId": ids,
        "tokensBefore": json_values,
        "fromId": ids,
        "data": json_values,
    },
)
known_params = st.fixed_dictionaries(
    {},
    optional={
        "id": ids,
        "entryId": ids,
        "targetId": ids,
        "leafId": ids,
        "fromId": ids,
        "session": json_values,
        "entry": entries | json_values,
        "offset": json_values,
        "limit": json_values,
        "format": st.sampled_from(["nested", "flat"]) | json_values,
        "label": json_values,
        "name": json_values,
        "summarize": json_values,
        "customInstructions": json_values,
        "replaceInstructions": json_values,
        "keepRecentTokens": json_values,
        "workDoneToken": json_values,
        "query": json_values,
        "all": json_values,
        "persist": json_values,
        "path": safe_names | BAD_STRINGS | json_values.filter(lambda v: not isinstance(v, str)),
        "sourcePath": safe_names | BAD_STRINGS,
        "cwd": safe_names | BAD_STRINGS,
        "sessionDir": safe_names | BAD_STRINGS,
    },
)
params = known_params | json_values


class ServerThread:
    """A server and its client on an event loop in a background thread (hypothesis tests are sync)."""

    def __init__(self, tmp_path: Path) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.fixture = copy_fixture(tmp_path)
        self.client: RpcClient = self.run(start_raw(tmp_path))

    def run(self, coroutine: Coroutine[Any, Any, T], timeout: float = 30) -> T:
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(timeout)

    def raw(self, method: str, value: Any) -> dict[str, Any]:
        async def send() -> bytes:
            _, future = self.client.request_future(method, value)
            return await asyncio.wait_for(future, 20)

        message: dict[str, Any] = loads_line(self.run(send()))  # lone surrogates are valid JSON
        return message

    def close(self) -> None:
        self.run(self.client.close())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerThread]:
    thread = ServerThread(tmp_path_factory.mktemp("fuzz"))
    yield thread
    thread.close()


@settings(max_examples=250, deadline=None, suppress_health_check=list(HealthCheck))
@given(method=st.sampled_from(METHODS), value=params)
def test_every_request_is_answered(server: ServerThread, method: str, value: Any) -> None:
    server.raw("pi/openSession", {"path": str(server.fixture)})  # keep a session active
    message = server.raw(method, value)
    assert "result" in message or "error" in message
    if "error" in message:
        assert message["error"]["code"] in EXPECTED_CODES, (method, value, message)
        assert isinstance(message["error"]["message"], str) and message["error"]["message"]


def test_server_is_still_up_after_fuzzing(server: ServerThread) -> None:
    assert server.raw("pi/listSessions", {})["result"]["sessions"] is not None
    assert server.client.process.returncode is None
