"""bash (the model's tool) and the user's ``!cmd`` path against pi's own implementations."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

import pytest

from pi_lsp.agent.tools import ToolContext, ToolResult, run_user_bash
from tests.pi.differential import compare
from tests.pi.pi_tools import PiTools, make_tree, run_ours, swap_root

pytestmark = pytest.mark.oracle

TEMP_LOG = re.compile(r"/pi-bash-[0-9a-f]{16}\.log")

BASH_CASES: list[tuple[str, dict[str, Any]]] = [
    ("echo", {"command": "echo hello"}),
    ("stdout and stderr", {"command": "echo out; sleep 0.05; echo err >&2; sleep 0.05; echo out2"}),
    ("no output", {"command": "true"}),
    ("no trailing newline", {"command": "printf 'a\\nb'"}),
    ("exit code", {"command": "echo partial; exit 3"}),
    ("exit code without output", {"command": "exit 7"}),
    ("killed by a signal counts as success", {"command": "echo before; kill -9 $$"}),
    ("cwd and files", {"command": "pwd >/dev/null; cat data.txt; ls"}),
    ("ansi kept", {"command": "printf '\\033[31mred\\033[0m\\n'"}),
    ("invalid utf-8 replaced", {"command": "printf 'a\\xffb\\xc3\\n'"}),
    ("timeout", {"command": "echo started; sleep 5", "timeout": 0.5}),
    ("timeout zero means none", {"command": "echo ok", "timeout": 0}),
    ("line truncation", {"command": "seq 1 2500"}),
    ("byte truncation", {"command": "for i in $(seq 1 700); do printf '%0100d\\n' $i; done"}),
    ("one huge line", {"command": "head -c 70000 /dev/zero | tr '\\0' 'z'"}),
    ("truncated and failing", {"command": "seq 1 3000; exit 2"}),
]


def _normalise(result: dict[str, Any]) -> dict[str, Any]:
    """Temp file names are random: replace them by a placeholder (after checking their form)."""
    text = TEMP_LOG.sub("/pi-bash-HEX.log", str(result))
    return {"text": text}


@pytest.mark.parametrize("args", [c[1] for c in BASH_CASES], ids=[c[0] for c in BASH_CASES])
async def test_bash_matches_pi(pi_tools: PiTools, tmp_path: Path, args: dict[str, Any]) -> None:
    files = {"data.txt": "contents\n", "sub/x": "1"}
    pi_root, our_root = tmp_path / "pi", tmp_path / "ours"
    make_tree(pi_root, files)
    make_tree(our_root, files)
    theirs = swap_root(
        pi_tools.call("execute", tool="bash", cwd=str(pi_root), args=args), str(pi_root), str(our_root)
    )
    pi_updates = theirs.pop("updates")
    updates: list[ToolResult] = []
    ours = await run_ours(
        "bash", args, str(our_root), ctx=ToolContext(cwd=str(our_root), on_update=updates.append)
    )
    assert _normalise(ours) == _normalise(theirs)
    # the partial results: the same first one, and the same last one (timing decides those between)
    assert updates[0].to_wire() == pi_updates["first"]
    assert _normalise(updates[-1].to_wire()) == _normalise(pi_updates["last"])
    details = ours.get("ok", {}).get("details")
    if details:
        full = Path(details["fullOutputPath"])
        assert TEMP_LOG.search(str(full))
        pi_full = Path(theirs["ok"]["details"]["fullOutputPath"])
        assert full.read_bytes() == pi_full.read_bytes()
        full.unlink()
        pi_full.unlink()


USER_BASH_CASES: list[tuple[str, str]] = [
    ("plain", "echo hi; echo there >&2"),
    (
        "ansi and control characters removed",
        "printf '\\033[1;32mgreen\\033[0m\\r\\n\\033]0;title\\007tab\\tend\\x01\\n'",
    ),
    ("non-zero exit is not an error", "echo no; exit 4"),
    ("truncated with full output file", "seq 1 3000"),
    ("large output in many chunks", 'for i in $(seq 1 3000); do echo "line $i with some padding text"; done'),
]


@pytest.mark.parametrize("command", [c[1] for c in USER_BASH_CASES], ids=[c[0] for c in USER_BASH_CASES])
async def test_user_bash_matches_pi(pi_tools: PiTools, tmp_path: Path, command: str) -> None:
    theirs = pi_tools.call("userBash", cwd=str(tmp_path), command=command)
    streamed: list[str] = []
    ours = await run_user_bash(command, str(tmp_path), asyncio.Event(), streamed.append)
    assert ours.output == theirs["output"]
    assert ours.exit_code == theirs.get("exitCode")
    assert ours.cancelled == theirs["cancelled"]
    assert ours.truncated == theirs["truncated"]
    assert (ours.full_output_path is None) == (theirs.get("fullOutputPath") is None)
    assert "".join(streamed) == theirs["streamed"]
    if ours.full_output_path is not None:
        assert TEMP_LOG.search(ours.full_output_path)
        pi_file = Path(theirs["fullOutputPath"])
        for _ in range(50):  # pi does not wait for its file stream to finish before answering
            if pi_file.exists() and pi_file.stat().st_size >= len(theirs["output"]):
                break
            await asyncio.sleep(0.05)
        assert Path(ours.full_output_path).read_text() == pi_file.read_text()
        Path(ours.full_output_path).unlink()
        pi_file.unlink()


async def test_user_bash_cancel_matches_pi(pi_tools: PiTools, tmp_path: Path) -> None:
    command = "echo started; sleep 10; echo never"
    theirs = pi_tools.call("userBash", cwd=str(tmp_path), command=command, abortAfterMs=400)
    abort = asyncio.Event()
    asyncio.get_running_loop().call_later(0.4, abort.set)
    ours = await run_user_bash(command, str(tmp_path), abort)
    assert (ours.output, ours.exit_code, ours.cancelled) == (theirs["output"], None, True)
    assert theirs["cancelled"] is True and "exitCode" not in theirs


async def test_bash_abort_matches_pi(pi_tools: PiTools, tmp_path: Path) -> None:
    args = {"command": "echo started; sleep 10"}
    theirs = pi_tools.call("execute", tool="bash", cwd=str(tmp_path), args=args, abortAfterMs=400)
    ours = await run_ours("bash", args, str(tmp_path), abort_after=0.4)
    assert ours == {"error": theirs["error"]}


async def test_missing_cwd_matches_pi(pi_tools: PiTools, tmp_path: Path) -> None:
    await compare(pi_tools, tmp_path, "bash", {"command": "echo hi"}, {}, cwd="missing")
