"""A session file with a line over MAX_LINE_BYTES, opened and listed by the real server: the line
is skipped with a diagnostic and the server never holds it (its peak memory stays far below it)."""

from __future__ import annotations

import os
from pathlib import Path

import orjson

from pi_lsp.session.jsonl import MAX_LINE_BYTES
from pi_lsp.session.paths import default_session_dir
from tests.server.support import start_raw
from tests.session.helpers import header, msg_entry


def _peak_rss(pid: int) -> int:
    """The process's peak resident memory (VmHWM), in bytes."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmHWM")


async def test_the_server_skips_a_line_over_the_limit_without_holding_it(tmp_path: Path) -> None:
    path = default_session_dir(str(tmp_path), tmp_path / "agent") / "huge.jsonl"  # listed for the cwd
    with open(path, "wb") as out:  # sparse: the long line is a hole of zeros
        out.write(orjson.dumps(header(cwd=str(tmp_path))) + b"\n")
        out.write(orjson.dumps(msg_entry("e1", None, "user", "before")) + b"\n")
        out.seek(MAX_LINE_BYTES + (1 << 20), os.SEEK_CUR)
        out.write(b"\n" + orjson.dumps(msg_entry("e2", "e1", "assistant", "after")) + b"\n")
    size = path.stat().st_size
    client = await start_raw(tmp_path)
    try:
        [listed] = (await client.request("pi/listSessions", {"cwd": str(tmp_path)}))["sessions"]
        assert listed["messageCount"] == 2 and listed["firstMessage"] == "before"
        state = await client.request("pi/openSession", {"path": str(path)})
        assert _peak_rss(client.process.pid) < MAX_LINE_BYTES // 2  # it held gigabytes
        assert state["entryCount"] == 2 and state["leafId"] == "e2"
        [warning] = [d for d in state["diagnostics"] if d["severity"] == "warning"]
        assert warning["line"] == 3 and "longer than" in warning["message"]
    finally:
        await client.close()
        assert path.stat().st_size == size
        path.unlink()
