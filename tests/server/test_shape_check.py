"""The tests' shape check sees the real traffic of both test clients (``tests/shape_check.py``).

A declaration narrowed on purpose must make the server's real answer, notification and ``pi/event``
count as a problem, through ``RpcClient`` and through pytest-lsp's client alike; otherwise the
suite-wide check would pass by checking nothing.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from pytest_lsp import LanguageClient

from pi_lsp.protocol import check
from pi_lsp.protocol.shapes import Obj
from tests import shape_check
from tests.server.support import call, start_raw, wait_until

NARROW = Obj(name="Narrowed")


def narrow(monkeypatch: pytest.MonkeyPatch, method: str) -> None:
    """Declare ``method``'s result (or params, for a notification) as an empty closed object."""
    methods = tuple(dataclasses.replace(m, result=NARROW) if m.name == method else m for m in check.METHODS)
    notes = tuple(
        dataclasses.replace(n, params=NARROW) if n.name == method else n for n in check.NOTIFICATIONS
    )
    monkeypatch.setattr(check, "METHODS", methods)
    monkeypatch.setattr(check, "NOTIFICATIONS", notes)


async def test_rpc_client_results_and_notifications_are_checked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    client = await start_raw(tmp_path)
    try:
        await client.request("pi/newSession", {"cwd": str(tmp_path), "sessionDir": str(tmp_path / "s")})
        assert shape_check.take_problems() == []
        narrow(monkeypatch, "pi/getSessionState")
        narrow(monkeypatch, "pi/sessionChanged")
        await client.request("pi/getSessionState", {})
        await client.request("pi/setSessionName", {"name": "checked"})
        await client.next_notification("pi/sessionChanged")
        found = shape_check.take_problems()
        assert [problem.split(":")[0] for problem in found] == [
            "pi/getSessionState result",
            "pi/sessionChanged params",
        ]
        assert "undeclared field(s) ['sessionId', " in found[0] and found[0].endswith("in Narrowed")
    finally:
        await client.close()


async def test_pytest_lsp_client_results_and_notifications_are_checked(
    client: LanguageClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    await call(client, "pi/newSession", {})
    assert shape_check.take_problems() == []
    narrow(monkeypatch, "pi/setSessionName")
    narrow(monkeypatch, "pi/sessionChanged")
    await call(client, "pi/setSessionName", {"name": "checked"})
    await wait_until(lambda: client.changes)  # type: ignore[attr-defined]
    found = shape_check.take_problems()
    assert sorted(problem.split(":")[0] for problem in found) == [
        "pi/sessionChanged params",
        "pi/setSessionName result",
    ]
