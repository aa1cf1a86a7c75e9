"""Two server processes on one session file see each other's appends (reason ``external``)."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from tests.server.support import assistant, copy_fixture, start_raw, user


async def test_two_servers_see_each_others_appends(tmp_path: Path) -> None:
    file = copy_fixture(tmp_path)
    first = await start_raw(tmp_path)
    second = await start_raw(tmp_path)
    try:
        state = await first.request("pi/openSession", {"path": str(file)})
        await second.request("pi/openSession", {"path": str(file)})

        appended = await first.request("pi/appendEntry", {"entry": user("from the first editor")})
        seen = await second.next_notification("pi/sessionChanged", timeout=5)
        assert seen == {
            "sessionId": state["sessionId"],
            "leafId": appended["id"],
            "appendedIds": [appended["id"]],
            "reason": "external",
        }
        assert (await second.request("pi/getEntry", {"id": appended["id"]}))["entry"] == appended["entry"]

        reply = await second.request("pi/appendEntry", {"entry": assistant("from the second editor")})
        assert reply["entry"]["parentId"] == appended["id"]  # the leaf followed the external append
        changes = []
        while not changes or changes[-1]["reason"] != "external":
            changes.append(await first.next_notification("pi/sessionChanged", timeout=5))
        assert changes[-1]["appendedIds"] == [reply["id"]] and changes[-1]["leafId"] == reply["id"]

        # an append that does not continue from our leaf is loaded but does not move the leaf
        await first.request("pi/setLeaf", {"id": "e6"})
        side = await second.request("pi/appendEntry", {"entry": user("another branch")})
        change = await first.next_notification("pi/sessionChanged", timeout=5)
        while change["reason"] != "external":
            change = await first.next_notification("pi/sessionChanged", timeout=5)
        assert change["appendedIds"] == [side["id"]] and change["leafId"] == "e6"

        # a third writer (pi's CLI, say) appending a raw line
        line = (
            '{"type":"custom","customType":"cli","id":"cli00001","parentId":"e6",'
            '"timestamp":"2026-01-01T00:01:00.000Z"}\n'
        )
        with file.open("a") as handle:
            handle.write(line)
        change = await first.next_notification("pi/sessionChanged", timeout=5)
        assert change == {
            "sessionId": state["sessionId"],
            "leafId": "cli00001",
            "appendedIds": ["cli00001"],
            "reason": "external",
        }
        assert (await first.request("pi/getSessionState", {}))["entryCount"] == 21
        assert os.path.getsize(file) > 0
    finally:
        await asyncio.gather(first.close(), second.close())
