"""The Neovim plugin offers exactly the methods the server implements or reserves.

``M.methods`` in ``nvim-client/lua/pi/init.lua`` becomes the plugin's Lua API (one function per
entry), so a method missing there cannot be called from Neovim, and a stale one calls nothing.
"""

from __future__ import annotations

import re
from pathlib import Path

from pi_lsp.server.capabilities import IMPLEMENTED_METHODS
from pi_lsp.server.reserved import RESERVED_METHODS

PLUGIN = Path(__file__).resolve().parents[2] / "nvim-client" / "lua" / "pi" / "init.lua"


def plugin_methods() -> dict[str, str]:
    """``M.methods`` of the plugin as Lua name → method (read from the source, entry by entry)."""
    source = PLUGIN.read_text(encoding="utf-8")
    block = re.search(r"^M\.methods = \{\n(.*?)^\}", source, re.MULTILINE | re.DOTALL)
    assert block is not None, f"no M.methods table in {PLUGIN}"
    entries: dict[str, str] = {}
    for line in block.group(1).splitlines():
        line = line.split("--", 1)[0].strip()
        if not line:
            continue
        match = re.fullmatch(r'([a-z_]+)\s*=\s*"([^"]+)",?', line)
        assert match is not None, f"unexpected line in M.methods: {line!r}"
        name, method = match.groups()
        assert name not in entries, f"{name} listed twice"
        entries[name] = method
    return entries


def test_plugin_lists_every_server_method() -> None:
    methods = list(plugin_methods().values())
    assert len(methods) == len(set(methods)), "a method is listed under two names"
    assert sorted(methods) == sorted({*IMPLEMENTED_METHODS, *RESERVED_METHODS})
