"""bash's process handling: abort and timeout kill the whole process group, updates are cumulative."""

from __future__ import annotations

import asyncio
import itertools
import os
import subprocess
from pathlib import Path

import pytest

from pi_lsp.agent.tools import ToolContext, ToolError, ToolResult, create_tools, run_user_bash

SPAWN_TREE = (
    "sleep 30 & echo $! > pids; (sleep 30; echo never) & echo $! >> pids; "
    "bash -c 'sleep 30' & echo $! >> pids; echo $$ >> pids; echo ready; wait"
)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as handle:
            state = handle.read().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"


async def _all_gone(pids: list[int]) -> bool:
    for _ in range(100):
        if not any(_alive(pid) for pid in pids):
            return True
        await asyncio.sleep(0.02)
    return False


async def _wait_for_pids(path: Path, count: int) -> list[int]:
    for _ in range(200):
        if path.exists():
            pids = [int(p) for p in path.read_text().split()]
            if len(pids) >= count:
                return pids
        await asyncio.sleep(0.02)
    raise AssertionError("the command did not start its processes")


async def test_abort_kills_every_process_of_the_command(tmp_path: Path) -> None:
    bash = create_tools(["bash"])[0]
    ctx = ToolContext(cwd=str(tmp_path))
    task = asyncio.ensure_future(bash.execute("t", {"command": SPAWN_TREE}, ctx))
    pids = await _wait_for_pids(tmp_path / "pids", 4)
    assert all(_alive(pid) for pid in pids)
    ctx.abort.set()
    try:
        await asyncio.wait_for(task, 5)
        raise AssertionError("an aborted command must fail")
    except ToolError as exc:
        assert str(exc) == "ready\n\n\nCommand aborted"
    assert await _all_gone(pids)


async def test_timeout_kills_the_group_and_says_so(tmp_path: Path) -> None:
    bash = create_tools(["bash"])[0]
    ctx = ToolContext(cwd=str(tmp_path))
    try:
        await bash.execute("t", {"command": SPAWN_TREE, "timeout": 0.5}, ctx)
        raise AssertionError("a timed-out command must fail")
    except ToolError as exc:
        assert str(exc) == "ready\n\n\nCommand timed out after 0.5 seconds"
    assert await _all_gone([int(p) for p in (tmp_path / "pids").read_text().split()])


async def test_user_bash_cancel_kills_the_group(tmp_path: Path) -> None:
    abort = asyncio.Event()
    task = asyncio.ensure_future(run_user_bash(SPAWN_TREE, str(tmp_path), abort))
    pids = await _wait_for_pids(tmp_path / "pids", 4)
    abort.set()
    result = await asyncio.wait_for(task, 5)
    assert (result.cancelled, result.exit_code, result.output) == (True, None, "ready\n")
    assert await _all_gone(pids)


async def test_abort_before_start_runs_nothing(tmp_path: Path) -> None:
    bash = create_tools(["bash"])[0]
    ctx = ToolContext(cwd=str(tmp_path))
    ctx.abort.set()
    try:
        await bash.execute("t", {"command": "touch made"}, ctx)
        raise AssertionError("must fail")
    except ToolError as exc:
        assert str(exc) == "Command aborted"
    await asyncio.sleep(0.2)
    assert not (tmp_path / "made").exists()


async def test_updates_are_cumulative_and_throttled(tmp_path: Path) -> None:
    updates: list[ToolResult] = []
    bash = create_tools(["bash"])[0]
    ctx = ToolContext(cwd=str(tmp_path), on_update=updates.append)
    command = "for i in 1 2 3 4 5; do echo $i; sleep 0.06; done"
    result = await bash.execute("t", {"command": command}, ctx)
    assert result.content[0]["text"] == "1\n2\n3\n4\n5\n"
    assert updates[0] == ToolResult([], None)
    texts = [u.content[0]["text"] for u in updates[1:]]
    assert texts[-1] == "1\n2\n3\n4\n5\n"
    assert all(later.startswith(earlier) for earlier, later in itertools.pairwise(texts))
    assert 2 <= len(texts) <= 6
    assert all(u.details == {} for u in updates[1:])


async def test_truncated_updates_name_the_full_output_file(tmp_path: Path) -> None:
    updates: list[ToolResult] = []
    bash = create_tools(["bash"])[0]
    result = await bash.execute(
        "t", {"command": "seq 1 5000"}, ToolContext(str(tmp_path), on_update=updates.append)
    )
    assert result.details is not None
    full = Path(result.details["fullOutputPath"])
    assert full.read_text() == "".join(f"{i}\n" for i in range(1, 5001))
    last = updates[-1].details
    assert last is not None and last["fullOutputPath"] == str(full) and last["truncation"]["truncated"]
    os.unlink(full)


async def test_find_works_with_an_fd_too_old_for_pi(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Debian 12's fdfind rejects --no-require-git (pi's find fails there); ours retries without it."""
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))  # no shims: the system's fd
    root = tmp_path / "repo"
    (root / "src").mkdir(parents=True)
    (root / "src" / "a.py").write_text("")
    (root / "skip.py").write_text("")
    (root / ".gitignore").write_text("skip.py\n")
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    find = create_tools(["find"])[0]
    result = await find.execute("1", {"pattern": "*.py"}, ToolContext(cwd=str(root)))
    assert result.content[0]["text"] == "src/a.py"


async def test_shell_settings_reach_bash(tmp_path: Path) -> None:
    """pi's shellCommandPrefix runs before the command; shellPath picks the shell (missing: pi's error)."""
    bash = create_tools(["bash"], shell_command_prefix="GREETING=prefixed")[0]
    result = await bash.execute("1", {"command": "echo $GREETING"}, ToolContext(cwd=str(tmp_path)))
    assert result.content[0]["text"] == "prefixed\n"
    sh = create_tools(["bash"], shell_path="/bin/sh")[0]
    result = await sh.execute("1", {"command": "echo $0"}, ToolContext(cwd=str(tmp_path)))
    assert result.content[0]["text"] == "/bin/sh\n"
    missing = create_tools(["bash"], shell_path=str(tmp_path / "no-shell"))[0]
    with pytest.raises(ToolError, match="Custom shell path not found: "):
        await missing.execute("1", {"command": "true"}, ToolContext(cwd=str(tmp_path)))


@pytest.mark.parametrize(
    ("tool", "args"),
    [("grep", {"pattern": "x"}), ("find", {"pattern": "*"}), ("ls", {}), ("read", {"path": "f"})],
)
async def test_read_only_tools_honour_an_abort(tmp_path: Path, tool: str, args: dict[str, object]) -> None:
    (tmp_path / "f").write_text("x")
    ctx = ToolContext(cwd=str(tmp_path))
    ctx.abort.set()
    with pytest.raises(ToolError, match=r"^Operation aborted$"):
        await create_tools([tool])[0].execute("1", dict(args), ctx)


async def test_user_bash_result_is_pis_bash_execution_message(tmp_path: Path) -> None:
    done = await run_user_bash("echo hi; exit 3", str(tmp_path), asyncio.Event())
    assert done.to_message("echo hi; exit 3", 1700000000000) == {
        "role": "bashExecution",
        "command": "echo hi; exit 3",
        "output": "hi\n",
        "exitCode": 3,
        "cancelled": False,
        "truncated": False,
        "timestamp": 1700000000000,
    }
    abort = asyncio.Event()
    abort.set()
    cancelled = await run_user_bash("echo never", str(tmp_path), abort)
    message = cancelled.to_message("echo never", 5, exclude_from_context=True)
    assert message == {
        "role": "bashExecution",
        "command": "echo never",
        "output": "",
        "cancelled": True,
        "truncated": False,
        "timestamp": 5,
        "excludeFromContext": True,
    }
