"""``session/list`` in pages: ACP's ``cursor`` / ``nextCursor`` over pi's listing.

The order is pi's (newest ``updatedAt`` first), made total by the session id for equal times, and
a cursor names the last session of its page by that key (not by a position). So the next page
starts right after it whatever happened in between: a session added meanwhile (it is newer) does
not push the rest along, nothing is listed twice and nothing of the first listing is skipped. A
session that gets a new message between pages moves to the front: it is not listed again by that
paging. Cursors carry no state in the process and stay valid across processes; one that was not
made by this module, or for another ``cwd``, is invalid params naming ``cursor``.
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

from pi_lsp.jscompat import iso_to_ms
from pi_lsp.service.errors import InvalidParams

PAGE_SIZE = 50
"""Sessions per page (a client shows them as a scrolling list)."""
_CURSOR_VERSION = 1

SortKey = tuple[float, str]
"""(minus the update time in ms, the session id): ascending is pi's order, ties broken by id."""


def acp_session(info: dict[str, Any], cwd: str | None) -> dict[str, Any]:
    """A listing's ``SessionInfo`` as ACP's: ``title`` = name or first message, ``updatedAt``."""
    item: dict[str, Any] = {"sessionId": info["id"], "cwd": info["cwd"] or cwd or "/"}
    title = info.get("name") or info.get("firstMessage")
    if title:
        item["title"] = title
    if info.get("modified"):
        item["updatedAt"] = info["modified"]
    return item


def _key(item: dict[str, Any]) -> SortKey:
    updated = iso_to_ms(item.get("updatedAt"))
    return (-float(updated) if updated is not None else 0.0, item["sessionId"])


def page(
    items: list[dict[str, Any]], cwd: str | None, after: SortKey | None, size: int = PAGE_SIZE
) -> dict[str, Any]:
    """The page of ``items`` (ACP ``SessionInfo``s, any order) after the session ``after``
    (:func:`decode_cursor`), with a ``nextCursor`` when more follow."""
    ordered = sorted(items, key=_key)
    if after is not None:
        ordered = [item for item in ordered if _key(item) > after]
    answer: dict[str, Any] = {"sessions": ordered[:size]}
    if len(ordered) > size:
        answer["nextCursor"] = _encode(_key(ordered[size - 1]), cwd)
    return answer


def _encode(key: SortKey, cwd: str | None) -> str:
    data = {"v": _CURSOR_VERSION, "t": key[0], "id": key[1], "cwd": cwd}
    return base64.urlsafe_b64encode(json.dumps(data, separators=(",", ":")).encode()).decode().rstrip("=")


def decode_cursor(cursor: str, cwd: str | None) -> SortKey:
    """The last session of the page ``cursor`` ended, checked (invalid params naming ``cursor``)."""
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        data = json.loads(raw)
    except (binascii.Error, ValueError):
        data = None
    if (
        not isinstance(data, dict)
        or data.get("v") != _CURSOR_VERSION
        or not isinstance(data.get("t"), int | float)
        or isinstance(data.get("t"), bool)
        or not isinstance(data.get("id"), str)
    ):
        raise InvalidParams(
            "cursor must be a nextCursor from an earlier session/list answer (this one is not)",
            {"field": "cursor"},
        )
    if data.get("cwd") != cwd:
        raise InvalidParams(
            "cursor was made for a session/list of another cwd: send the same cwd as for the first page",
            {"field": "cursor"},
        )
    return (float(data["t"]), data["id"])
