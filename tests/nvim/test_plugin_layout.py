"""The plugin's structure (issue 21): the client module requires no UI module (the UI subscribes to
its events), and every :Pi... command is created from the one table in ``user_commands.lua``."""

from __future__ import annotations

import re
from pathlib import Path

LUA = Path(__file__).resolve().parents[2] / "nvim-client" / "lua" / "pi"


def _requires(path: Path) -> set[str]:
    return set(re.findall(r"""require\(["']([\w.]+)["']\)""", path.read_text(encoding="utf-8")))


def test_client_requires_no_ui_module() -> None:
    assert _requires(LUA / "client.lua") <= {"pi.messages", "pi.protocol"}  # pure data, no UI


def test_every_command_is_in_the_one_table() -> None:
    creators = [p.name for p in LUA.glob("*.lua") if "nvim_create_user_command" in p.read_text()]
    assert creators == ["user_commands.lua"]
    table = (LUA / "user_commands.lua").read_text(encoding="utf-8")
    names = re.findall(r"^  (Pi\w+) = \{$", table, re.MULTILINE)
    assert len(names) == len(set(names)) >= 17
    documented = (LUA.parents[1] / "doc" / "pi.txt").read_text(encoding="utf-8")
    missing = [name for name in names if f":{name}" not in documented]
    assert not missing, f"commands without help in doc/pi.txt: {missing}"
