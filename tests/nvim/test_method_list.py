"""The Neovim plugin offers exactly the methods the protocol source declares.

``M.methods`` in ``nvim-client/lua/pi/init.lua`` becomes the plugin's Lua API (one function per
entry), so a method missing there cannot be called from Neovim, and a stale one calls nothing. The
generated ``nvim-client/lua/pi/protocol.lua`` (which the plugin will read its table from) must hold
the same names, the error codes (FileError included) and the enums.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from pi_lsp.protocol import ENUMS, ERROR_CODES, EVENTS, METHOD_NAMES, METHODS, PROTOCOL_VERSION
from pi_lsp.protocol.render import enum_key, snake

PLUGIN = Path(__file__).resolve().parents[2] / "nvim-client" / "lua" / "pi" / "init.lua"
GENERATED = PLUGIN.with_name("protocol.lua")


def plugin_methods() -> dict[str, str]:
    """``M.methods`` of the plugin as Lua name → method (read from the source, entry by entry)."""
    source = PLUGIN.read_text(encoding="utf-8")
    block = re.search(r"^M\.methods = \{\n(.*?)^\}", source, re.MULTILINE | re.DOTALL)
    assert block is not None, f"no M.methods table in {PLUGIN}"
    return _entries(block.group(1))


def _entries(block: str) -> dict[str, str]:
    entries: dict[str, str] = {}
    for line in block.splitlines():
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
    assert sorted(methods) == sorted(METHOD_NAMES)


def _generated_block(name: str) -> str:
    source = GENERATED.read_text(encoding="utf-8")
    block = re.search(rf"^  {name} = \{{\n(.*?)^  \}},", source, re.MULTILINE | re.DOTALL)
    assert block is not None, f"no {name} table in {GENERATED}"
    return block.group(1)


def test_protocol_lua_has_the_plugins_methods_and_the_sources_codes_and_enums() -> None:
    source = GENERATED.read_text(encoding="utf-8")
    assert f"  version = {PROTOCOL_VERSION}," in source
    assert _entries(_generated_block("methods")) == plugin_methods()
    codes = dict(re.findall(r"^    (\w+) = (-\d+),$", _generated_block("errors"), re.MULTILINE))
    assert {name: int(code) for name, code in codes.items()} == ERROR_CODES
    assert codes["FileError"] == "-32007"
    enums = _generated_block("enums")
    for enum in ENUMS:
        values = ", ".join(f'"{value}"' for value in enum.values)
        assert f"    {enum_key(enum)} = {{ {values} }}," in enums


@pytest.mark.skipif(shutil.which("nvim") is None, reason="nvim is not installed (apt-get install neovim)")
def test_protocol_lua_loads_in_neovim_as_the_source_says(tmp_path: Path) -> None:
    """Neovim's own Lua reads the generated table: what the plugin will ``require``."""
    out = tmp_path / "protocol.json"
    load = f"local t = dofile({json.dumps(str(GENERATED))})"
    script = f"{load}; vim.fn.writefile({{vim.json.encode(t)}}, {json.dumps(str(out))})"
    subprocess.run(
        [
            "nvim",
            "--headless",
            "--clean",
            "-u",
            "NONE",
            "-i",
            "NONE",
            "-n",
            "-c",
            f"lua {script}",
            "-c",
            "qa!",
        ],
        check=True,
        timeout=60,
        capture_output=True,
    )
    table = json.loads(out.read_text(encoding="utf-8"))
    assert table["version"] == PROTOCOL_VERSION
    assert table["methods"] == {snake(m.short): m.name for m in METHODS}
    assert table["errors"] == ERROR_CODES
    assert table["events"] == [event.type for event in EVENTS]
    assert table["enums"] == {enum_key(e): list(e.values) for e in ENUMS}
