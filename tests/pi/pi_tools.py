"""Differential harness: run pi's own tools (node + the pi npm package) and ours on the same files.

``tools_driver.mjs`` (next to this file) loads pi's tool definitions from the installed package
and answers one JSON request per line. Tests build the same directory tree twice, run pi in one
copy and us in the other, and compare the results (with the two roots swapped) and the files.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pi_lsp.agent.tools import ToolContext, ToolError, create_tools, validate_tool_arguments
from tests.oracle import PiOracle, require_oracle

DRIVER = Path(__file__).with_name("tools_driver.mjs")


class PiTools(PiOracle):
    """The tools driver in one long-lived process (the oracle's line protocol, ``fail`` on errors)."""

    def __init__(self, agent_dir: Path) -> None:
        super().__init__(script=DRIVER, env={"PI_CODING_AGENT_DIR": str(agent_dir)})

    def call(self, op: str, **fields: Any) -> Any:
        answer = self.request(op, **fields)
        if "fail" in answer:
            raise RuntimeError(f"pi tools driver failed on {op}: {answer['fail']}")
        return answer["result"]


FD_WITHOUT_NO_REQUIRE_GIT = """#!/bin/sh
# Test shim: this fd predates --no-require-git (fd < 8.7, e.g. Debian 12's fdfind), which makes pi's
# find fail outright. Both pi and we find this script first in <agentDir>/bin, so the parity tests
# compare everything else; trees are git repositories, where old fd honours .gitignore anyway.
for arg; do shift; [ "$arg" = --no-require-git ] || set -- "$@" "$arg"; done
exec {fd} "$@"
"""


def prepare_agent_dir(agent_dir: Path) -> None:
    """An agent dir for both pi and us; with an fd shim when the system's fd is too old for pi."""
    fd = shutil.which("fd") or shutil.which("fdfind")
    if fd is None:
        return
    help_text = subprocess.run([fd, "--help"], capture_output=True, text=True, check=False).stdout
    if "--no-require-git" in help_text:
        return
    shim = agent_dir / "bin" / "fd"
    shim.parent.mkdir(parents=True, exist_ok=True)
    shim.write_text(FD_WITHOUT_NO_REQUIRE_GIT.replace("{fd}", fd))
    shim.chmod(0o755)


def make_tree(root: Path, files: Mapping[str, bytes | str | None]) -> None:
    """Create ``files`` under ``root``: bytes/str contents, None = an empty directory."""
    root.mkdir(parents=True, exist_ok=True)
    for rel, content in files.items():
        target = root / rel
        if content is None:
            target.mkdir(parents=True, exist_ok=True)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, str):
            target.write_bytes(content.encode("utf-8"))
        else:
            target.write_bytes(content)


def snapshot(root: Path) -> dict[str, bytes | None]:
    """Every file (bytes) and directory (None) under ``root``, by relative path."""
    found: dict[str, bytes | None] = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        found[rel] = None if path.is_dir() else path.read_bytes()
    return found


async def run_ours(
    tool_name: str, args: Any, cwd: str, *, abort_after: float | None = None, ctx: ToolContext | None = None
) -> dict[str, Any]:
    """Our tool like pi's loop runs it: prepare, validate, execute; errors as ``{error}``."""
    tool = create_tools([tool_name])[0]
    context = ctx or ToolContext(cwd=cwd)
    if abort_after is not None:
        asyncio.get_running_loop().call_later(abort_after, context.abort.set)
    try:
        prepared = tool.prepare_arguments(args)
        result = await tool.execute("call-1", prepared, context)
    except ToolError as exc:
        return {"error": str(exc)}
    return {"ok": result.to_wire()}


def ours_validate(tool_name: str, args: Any) -> dict[str, Any]:
    tool = create_tools([tool_name])[0]
    try:
        return {"ok": validate_tool_arguments(tool, tool.prepare_arguments(args))}
    except ToolError as exc:
        return {"error": str(exc)}


def swap_root(value: Any, old: str, new: str) -> Any:
    """``value`` with every occurrence of the ``old`` root path replaced by ``new`` (JSON round trip)."""
    return json.loads(json.dumps(value).replace(json.dumps(old)[1:-1], json.dumps(new)[1:-1]))


def pi_or_skip() -> None:
    """Skip where pi is missing, fail where it is required (CI): as every pi test."""
    require_oracle()
