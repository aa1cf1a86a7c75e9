"""``session/list`` in pages through the official SDK: 120 sessions of a folder listed with
``cursor`` / ``nextCursor``, in pi's order (newest first, ties by id), with nothing listed twice
or skipped, also when a session is added between two pages; a bad cursor is invalid params."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pi_lsp.acp.session_list import PAGE_SIZE
from pi_lsp.session.paths import default_session_dir
from tests.acp.sdk_support import require_sdk, run_client
from tests.agent.chat_support import workspace

SESSIONS = 120
BASE_MS = 1_760_000_000_000


def iso(ms: int) -> str:
    seconds, millis = divmod(ms, 1000)
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{millis:03d}Z"


def session_lines(session_id: str, cwd: str, ms: int) -> str:
    header = {"type": "session", "version": 3, "id": session_id, "timestamp": iso(ms), "cwd": cwd}
    message = {"role": "user", "content": f"question of {session_id}", "timestamp": ms}
    entry = {"type": "message", "id": "e1", "parentId": None, "timestamp": iso(ms), "message": message}
    return "".join(json.dumps(line) + "\n" for line in (header, entry))


def write_session(folder: Path, session_id: str, cwd: str, ms: int) -> None:
    (folder / f"{session_id}.jsonl").write_text(session_lines(session_id, cwd, ms))


async def test_every_session_is_listed_once_page_by_page_also_when_one_is_added_between() -> None:
    require_sdk()
    with workspace() as ws:
        folder = default_session_dir(str(ws.cwd), ws.agent_dir)
        expected: list[tuple[int, str]] = []
        for number in range(SESSIONS):
            session_id = f"s{(number * 37) % SESSIONS:03d}"  # file order is not id order
            ms = BASE_MS + (number % 40) * 1000  # three sessions share each time: ties by id
            write_session(folder, session_id, str(ws.cwd), ms)
            expected.append((-ms, session_id))
        added = {"path": str(folder / "s-new.jsonl"),
                 "text": session_lines("s-new", str(ws.cwd), BASE_MS + 10**6)}  # fmt: skip

        report = await run_client(ws, "http://127.0.0.1:9", "pages", addBetween=added)

        pages: list[dict[str, Any]] = report["pages"]
        assert [len(page["sessions"]) for page in pages] == [PAGE_SIZE, PAGE_SIZE, SESSIONS - 2 * PAGE_SIZE]
        assert all("nextCursor" in page for page in pages[:-1]) and "nextCursor" not in pages[-1]
        listed = [item["sessionId"] for page in pages for item in page["sessions"]]
        # the first listing's sessions, each once, in pi's order; the one added meanwhile is newer
        # than the first page's last one, so it belongs before the cursor and is not listed here
        assert listed == [session_id for _, session_id in sorted(expected)]
        first = pages[0]["sessions"][0]
        assert first["cwd"] == str(ws.cwd) and first["title"] == f"question of {first['sessionId']}"
        assert first["updatedAt"] == iso(BASE_MS + 39 * 1000)

        bad = report["errors"]["badCursor"]
        assert bad["code"] == -32602 and bad["data"] == {"field": "cursor"}, bad
        assert "nextCursor" in bad["message"]
        assert report["results"]["fresh"]["sessions"][0]["sessionId"] == "s-new"  # a new listing has it
        other = report["errors"]["otherCwd"]
        assert other["code"] == -32602 and other["data"] == {"field": "cursor"}, other
