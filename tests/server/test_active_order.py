"""Which session is active follows the order requests arrived in, not the order their handlers
got round to it: a slow request that names a session must not make it active again after a later
request chose another (the Neovim plugin's tree then showed the wrong session)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from pi_lsp.client.rpc_client import decode_response
from tests.server.support import start_raw


async def test_a_slow_request_naming_a_session_does_not_undo_a_later_switch(tmp_path: Path) -> None:
    client = await start_raw(tmp_path)
    try:
        first = await client.request("pi/newSession", {})
        second = await client.request("pi/newSession", {})
        # In a fresh server pi/getSessionStats first loads the run service (a second of imports),
        # and only then looks the session up. It names `first`; the request after it names
        # `second`, so `second` is the active session once both are answered.
        _, stats = client.request_future("pi/getSessionStats", {"session": first["sessionId"]})
        _, state = client.request_future("pi/getSessionState", {"session": second["sessionId"]})
        for answer in await asyncio.wait_for(asyncio.gather(stats, state), 60):
            decode_response(answer)
        active = await client.request("pi/getSessionState", {})
        assert active["sessionId"] == second["sessionId"]
        # the same holds the other way round: the later one wins whichever is slow
        _, fast = client.request_future("pi/getSessionState", {"session": second["sessionId"]})
        _, slow = client.request_future("pi/getSessionStats", {"session": first["sessionId"]})
        await asyncio.wait_for(asyncio.gather(fast, slow), 60)
        assert (await client.request("pi/getSessionState", {}))["sessionId"] == first["sessionId"]
    finally:
        await client.close()
