"""A process the command leaves behind holding its output (``setsid cmd &``, ``nohup cmd &``,
``(cmd &)``, a double fork) neither keeps bash, the user's ``!cmd``, grep nor find waiting: they
end with the command (or its timeout, or the abort), and say which processes were left running."""

from __future__ import annotations

import asyncio
import re
import shutil
from pathlib import Path

import pytest

from pi_lsp.agent.tools import ToolContext, ToolError, ToolResult, create_tools, run_user_bash
from pi_lsp.agent.tools.process import LeftRunning, pipe_holders
from tests.agent.process_support import Markers, marked_pids, wait_started

HANG_GUARD_S = 10  # the tools end within a second; this only turns a hang into a failure

DAEMONS = {
    "setsid": "setsid sleep {m} & echo started",
    "setsid -f": "setsid -f sleep {m}; echo started",
    "nohup": "nohup sleep {m} & echo started",
    "subshell": "(sleep {m} &); echo started",
    "double fork": "bash -c 'sleep {m} &'; echo started",
}


def note_for(marker: str) -> str:
    [pid] = marked_pids(marker)
    return LeftRunning(((pid, "sleep"),)).note()


def named(text: str) -> str:
    """The process names in notes made alike: one looked at before it exec'd sleep is still
    ``bash``, ``setsid`` or ``nohup``."""
    return re.sub(r"(pid \d+) \([^)]*\)", r"\1 (NAME)", text)


@pytest.mark.parametrize("command", DAEMONS.values(), ids=DAEMONS.keys())
async def test_bash_ends_with_the_command_and_names_the_daemon(
    tmp_path: Path, markers: Markers, command: str
) -> None:
    marker = markers.new()
    bash = create_tools(["bash"])[0]
    call = bash.execute("t", {"command": command.format(m=marker)}, ToolContext(cwd=str(tmp_path)))
    result = await asyncio.wait_for(call, HANG_GUARD_S)
    text = result.content[0]["text"]
    assert text.startswith("started\n")  # nohup adds its own line on stderr
    assert named(text).endswith("\n\n" + named(note_for(marker)))
    assert f"`kill {marked_pids(marker)[0]}` stops it" in text


async def test_bash_timeout_ends_the_call_while_a_daemon_holds_the_output(
    tmp_path: Path, markers: Markers
) -> None:
    daemon, child = markers.new(), markers.new()
    bash = create_tools(["bash"])[0]
    args = {"command": f"setsid sleep {daemon} & echo started; sleep {child}", "timeout": 1}
    with pytest.raises(ToolError) as raised:
        await asyncio.wait_for(bash.execute("t", args, ToolContext(cwd=str(tmp_path))), HANG_GUARD_S)
    note = note_for(daemon)
    assert str(raised.value) == f"started\n\n\n{note}\n\nCommand timed out after 1 seconds"
    assert marked_pids(child) == []  # the group was killed; the setsid daemon escaped it


async def test_bash_abort_ends_the_call_while_a_daemon_holds_the_output(
    tmp_path: Path, markers: Markers
) -> None:
    daemon, child = markers.new(), markers.new()
    started_event = asyncio.Event()

    def on_update(update: ToolResult) -> None:
        if update.content and "started" in update.content[0]["text"]:
            started_event.set()

    ctx = ToolContext(cwd=str(tmp_path), on_update=on_update)
    bash = create_tools(["bash"])[0]
    command = f"setsid sleep {daemon} & echo started; sleep {child}"
    call = asyncio.ensure_future(bash.execute("t", {"command": command}, ctx))
    await asyncio.wait_for(started_event.wait(), HANG_GUARD_S)
    await wait_started(daemon)
    ctx.abort.set()
    with pytest.raises(ToolError) as raised:
        await asyncio.wait_for(call, HANG_GUARD_S)
    assert str(raised.value) == f"started\n\n\n{note_for(daemon)}\n\nCommand aborted"
    assert marked_pids(child) == []


async def test_bash_failure_keeps_pis_status_line_last(tmp_path: Path, markers: Markers) -> None:
    marker = markers.new()
    bash = create_tools(["bash"])[0]
    call = bash.execute("t", {"command": f"setsid sleep {marker} & exit 3"}, ToolContext(cwd=str(tmp_path)))
    with pytest.raises(ToolError) as raised:
        await asyncio.wait_for(call, HANG_GUARD_S)
    expected = f"(no output)\n\n{note_for(marker)}\n\nCommand exited with code 3"
    assert named(str(raised.value)) == named(expected)


async def test_user_bash_ends_with_the_command_and_names_the_daemon(tmp_path: Path, markers: Markers) -> None:
    marker = markers.new()
    streamed: list[str] = []
    command = f"setsid sleep {marker} & echo started"
    run = run_user_bash(command, str(tmp_path), asyncio.Event(), streamed.append)
    result = await asyncio.wait_for(run, HANG_GUARD_S)
    expected = named(f"started\n\n\n{note_for(marker)}")
    assert (named(result.output), result.exit_code, result.cancelled) == (expected, 0, False)
    assert named("".join(streamed)) == expected


async def test_user_bash_cancel_ends_while_a_daemon_holds_the_output(
    tmp_path: Path, markers: Markers
) -> None:
    daemon, child = markers.new(), markers.new()
    abort = asyncio.Event()
    command = f"setsid sleep {daemon} & echo started; sleep {child}"
    run = asyncio.ensure_future(run_user_bash(command, str(tmp_path), abort))
    await wait_started(daemon)
    await wait_started(child)
    abort.set()
    result = await asyncio.wait_for(run, HANG_GUARD_S)
    assert (result.output, result.cancelled) == (f"started\n\n\n{note_for(daemon)}", True)
    assert marked_pids(child) == []


async def test_output_a_daemon_prints_after_the_exit_is_not_waited_for(
    tmp_path: Path, markers: Markers
) -> None:
    """What was written before the shell's exit is kept; the daemon's later output is not awaited."""
    marker = markers.new()
    command = f"setsid bash -c 'echo early; sleep {marker}; echo never' & sleep 0.2; echo done"
    bash = create_tools(["bash"])[0]
    result = await asyncio.wait_for(
        bash.execute("t", {"command": command}, ToolContext(cwd=str(tmp_path))), HANG_GUARD_S
    )
    text = result.content[0]["text"]
    assert text.startswith("early\ndone\n") and "never" not in text
    assert re.search(r"pid \d+ \(bash\)", text)


def test_without_proc_the_note_names_no_pid(tmp_path: Path) -> None:
    assert pipe_holders(frozenset({1, 2}), proc=str(tmp_path / "no-proc")) == ()
    note = LeftRunning(()).note()
    assert note.startswith("[A background process started by this command is still running")


# ------------------------------------------------------------------------------ rg and fd


def shim(agent: Path, name: str, body: str) -> None:
    """``<agentDir>/bin/<name>``: found before the real program, as pi's own tool folder is."""
    path = agent / "bin" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(0o755)


@pytest.mark.parametrize(("tool", "args"), [("grep", {"pattern": "needle"}), ("find", {"pattern": "*.txt"})])
async def test_a_search_program_leaving_a_daemon_does_not_wedge_the_tool(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, markers: Markers, tool: str, args: dict[str, str]
) -> None:
    """A wrapper in the tool folder that starts a daemon (a cache server, say) before the search."""
    marker = markers.new()
    agent = tmp_path / "agent"
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(agent))
    program = "rg" if tool == "grep" else "fd"
    real = shutil.which(program) or shutil.which("fdfind")
    assert real is not None
    shim(agent, program, f'setsid sleep {marker} &\nexec {real} "$@"')
    (tmp_path / "a.txt").write_text("needle\n")
    call = create_tools([tool])[0].execute("1", dict(args), ToolContext(cwd=str(tmp_path)))
    result = await asyncio.wait_for(call, HANG_GUARD_S)
    assert "a.txt" in result.content[0]["text"]


async def test_abort_ends_a_search_whose_wrapper_is_stuck(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, markers: Markers
) -> None:
    """SIGTERM to the wrapper alone would leave its child holding the pipes: the group goes."""
    marker = markers.new()
    agent = tmp_path / "agent"
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(agent))
    shim(agent, "rg", f"sleep {marker}")
    ctx = ToolContext(cwd=str(tmp_path))
    call = asyncio.ensure_future(create_tools(["grep"])[0].execute("1", {"pattern": "x"}, ctx))
    for _ in range(250):
        if marked_pids(marker):
            break
        await asyncio.sleep(0.02)
    ctx.abort.set()
    with pytest.raises(ToolError, match=r"^Operation aborted$"):
        await asyncio.wait_for(call, HANG_GUARD_S)
    assert marked_pids(marker) == []


async def test_grep_reads_a_match_on_a_line_longer_than_64_kb(tmp_path: Path) -> None:
    (tmp_path / "min.js").write_text("a" * 100_000 + "needle\n")
    result = await create_tools(["grep"])[0].execute(
        "1", {"pattern": "needle"}, ToolContext(cwd=str(tmp_path))
    )
    assert result.content[0]["text"].startswith("min.js:1: aaaa")
