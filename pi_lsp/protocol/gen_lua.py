"""``nvim-client/lua/pi/protocol.lua``: the protocol's names, error codes and enums as a Lua table.

The Neovim plugin builds its API from ``methods`` (one function per entry, named by the key).
"""

from __future__ import annotations

from pi_lsp.protocol.enums import ENUMS, ERRORS
from pi_lsp.protocol.events import EVENTS, NOTIFICATIONS, SERVER_REQUESTS
from pi_lsp.protocol.methods import METHODS, PROTOCOL_VERSION
from pi_lsp.protocol.render import HEADER, enum_key, snake


def _names(pairs: list[tuple[str, str]]) -> list[str]:
    return [f'    {key} = "{value}",' for key, value in pairs]


def render() -> str:
    out = [
        f"-- {HEADER}",
        "-- The pi-lsp protocol (docs/protocol.md): method names, notifications, event types, error codes",
        "-- and enums. Laid out by the generator, not by StyLua; one line per enum, however long.",
        "-- luacheck: no max line length",
        "-- stylua: ignore",
        "return {",
        f"  version = {PROTOCOL_VERSION},",
        "  --- Lua name -> JSON-RPC method (client -> server requests).",
        "  methods = {",
        *_names([(snake(m.short), m.name) for m in METHODS]),
        "  },",
        "  --- server -> client notifications",
        "  notifications = {",
        *_names([(snake(n.short), n.name) for n in NOTIFICATIONS]),
        "  },",
        "  --- server -> client requests",
        "  server_requests = {",
        *_names([(snake(r.short), r.name) for r in SERVER_REQUESTS]),
        "  },",
        "  --- `pi/event` `event.type`s",
        "  events = {",
        *[f'    "{e.type}",' for e in EVENTS],
        "  },",
        "  --- JSON-RPC error codes",
        "  errors = {",
        *[f"    {error.name} = {error.code}," for error in ERRORS],
        "  },",
        "  enums = {",
        *[f"    {enum_key(e)} = {{ " + ", ".join(f'"{v}"' for v in e.values) + " }," for e in ENUMS],
        "  },",
        "}",
    ]
    return "\n".join(out) + "\n"
