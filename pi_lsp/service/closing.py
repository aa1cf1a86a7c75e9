"""Closing a model client at the end of its use, where a failing close must not hide the result
(a summary's client; the runs' shared clients when ``model_clients.py`` retires them or at exit)."""

from __future__ import annotations

import logging
from typing import Any

log = logging.getLogger(__name__)


async def close_quietly(client: Any, method: str, what: str) -> None:
    """Await ``client.<method>()`` if it has one; a failure is logged at debug level and dropped
    (the reply or the summary is already in hand; the connection pool goes with the client)."""
    close = getattr(client, method, None)
    if close is None:
        return
    try:
        await close()
    except Exception:
        log.debug("closing the %s failed", what, exc_info=True)
