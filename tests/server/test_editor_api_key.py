"""pi/setApiKey: an editor hands the server a key from its secret store, in memory only.

The real server process: the key takes effect at once (no restart), names no file, and reaches
neither the log (at debug level) nor any file under the agent dir; null forgets it.
"""

from __future__ import annotations

from pathlib import Path

from tests.server.support import start_raw

KEY = "sk-ant-editor-given-key-0123456789abcdef"


async def test_an_editor_key_works_at_once_and_touches_no_disk(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    client = await start_raw(tmp_path, "--log-file", str(log), "--log-level", "debug")
    try:
        listed = await client.request("pi/listModels", {})
        assert listed["hasApiKey"] is False
        assert listed["agentDir"] == str(tmp_path / "agent")  # the real one, for the no-key notice
        assert await client.request("pi/setApiKey", {"apiKey": KEY}) == {"hasApiKey": True}
        assert (await client.request("pi/listModels", {}))["hasApiKey"] is True
        assert await client.request("pi/setApiKey", {"apiKey": None}) == {"hasApiKey": False}
    finally:
        await client.close()
    assert log.read_text(errors="replace") != ""
    for file in [log, *tmp_path.rglob("*")]:
        if file.is_file():
            assert KEY not in file.read_text(errors="replace"), file
