"""The pi-lsp protocol as one typed source: methods, notifications, ``pi/event`` types, errors, enums.

Everything that speaks the protocol derives from here: the server's method table and
``initialize`` capabilities, the editors' generated definitions (``vscode-client/src/shared/protocol.ts``,
``nvim-client/lua/pi/protocol.lua``, made by ``python -m pi_lsp.protocol.generate``), the method
tables of ``docs/protocol.md`` and the tests' shape checks of real traffic. This package is the
lowest layer: it imports nothing else from pi_lsp, and it is cheap to import (the server's
start-up answers ``initialize`` from it).
"""

from __future__ import annotations

from pi_lsp.protocol.enums import ENUMS, ERROR_CODES, ERRORS, THINKING_LEVELS
from pi_lsp.protocol.events import (
    EVENTS,
    EVENTS_BY_TYPE,
    NOTIFICATIONS,
    NOTIFICATIONS_BY_NAME,
    SERVER_REQUESTS,
)
from pi_lsp.protocol.methods import BY_NAME as METHODS_BY_NAME
from pi_lsp.protocol.methods import METHODS, PROTOCOL_VERSION

METHOD_NAMES: tuple[str, ...] = tuple(method.name for method in METHODS)
NOTIFICATION_NAMES: tuple[str, ...] = tuple(notification.name for notification in NOTIFICATIONS)

__all__ = [
    "ENUMS",
    "ERRORS",
    "ERROR_CODES",
    "EVENTS",
    "EVENTS_BY_TYPE",
    "METHODS",
    "METHODS_BY_NAME",
    "METHOD_NAMES",
    "NOTIFICATIONS",
    "NOTIFICATIONS_BY_NAME",
    "NOTIFICATION_NAMES",
    "PROTOCOL_VERSION",
    "SERVER_REQUESTS",
    "THINKING_LEVELS",
]
