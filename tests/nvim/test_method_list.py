"""The Neovim plugin takes its method names, codes and enums from the generated protocol table.

``nvim-client/lua/pi/protocol.lua`` is generated from ``pi_lsp/protocol`` (a stale copy fails
``tests/test_protocol_source.py``); ``M.methods`` in ``init.lua`` *is* its ``methods`` table and
becomes the plugin's Lua API (one function per entry), and no other plugin file spells a method
name itself, so a method the server adds or renames reaches Neovim by regenerating one file.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from pi_lsp.protocol import ENUMS, ERROR_CODES, EVENTS, METHODS, PROTOCOL_VERSION
from pi_lsp.protocol.render import enum_key, snake

PLUGIN = Path(__file__).resolve().parents[2] / "nvim-client" / "lua" / "pi" / "init.lua"
GENERATED = PLUGIN.with_name("protocol.lua")


def test_the_plugins_methods_are_the_generated_table() -> None:
    source = PLUGIN.read_text(encoding="utf-8")
    assert re.search(r'^M\.methods = require\("pi\.protocol"\)\.methods$', source, re.MULTILINE), (
        f"M.methods in {PLUGIN} must be the generated table"
    )


def test_no_plugin_file_spells_a_method_name() -> None:
    literals = []
    for path in sorted(GENERATED.parent.glob("*.lua")):
        if path == GENERATED:
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            code = line.split("--", 1)[0]
            literals += [f"{path.name}:{number}: {m}" for m in re.findall(r'"pi/[A-Za-z]+"', code)]
    assert not literals, "use require('pi.protocol') instead of:\n" + "\n".join(literals)


def _generated_block(name: str) -> str:
    source = GENERATED.read_text(encoding="utf-8")
    block = re.search(rf"^  {name} = \{{\n(.*?)^  \}},", source, re.MULTILINE | re.DOTALL)
    assert block is not None, f"no {name} table in {GENERATED}"
    return block.group(1)


def test_protocol_lua_has_the_sources_codes_and_enums() -> None:
    source = GENERATED.read_text(encoding="utf-8")
    assert f"  version = {PROTOCOL_VERSION}," in source
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
    rtp = json.dumps(str(GENERATED.parents[2]))
    load = f"vim.opt.rtp:append({rtp}); local t = dofile({json.dumps(str(GENERATED))})"
    load += '; t.plugin_methods = require("pi").methods'
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
    assert table["plugin_methods"] == table["methods"]
    assert table["errors"] == ERROR_CODES
    assert table["events"] == [event.type for event in EVENTS]
    assert table["enums"] == {enum_key(e): list(e.values) for e in ENUMS}
