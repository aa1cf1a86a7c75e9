"""close_quietly: the one way runs and summaries close their model client."""

from __future__ import annotations

import logging

import pytest

from pi_lsp.service.closing import close_quietly


class Client:
    def __init__(self, fail: bool) -> None:
        self.fail = fail
        self.closed = 0

    async def aclose(self) -> None:
        self.closed += 1
        if self.fail:
            raise OSError("socket already gone")


async def test_it_awaits_the_named_close_method() -> None:
    client = Client(fail=False)
    await close_quietly(client, "aclose", "summariser")
    assert client.closed == 1


async def test_a_failing_close_is_logged_at_debug_and_dropped(caplog: pytest.LogCaptureFixture) -> None:
    client = Client(fail=True)
    with caplog.at_level(logging.DEBUG, logger="pi_lsp.service.closing"):
        await close_quietly(client, "aclose", "summariser")
    assert client.closed == 1
    assert "closing the summariser failed" in caplog.text


async def test_an_object_without_the_method_is_left_alone() -> None:
    await close_quietly(object(), "close", "SDK client")
