"""The full-output file of a truncated command stays under its cap (the head is kept, with a note
where it stops; the command runs on), is private to the user, and goes with its owner."""

from __future__ import annotations

import asyncio
import os
import stat
from pathlib import Path

import pytest

from pi_lsp.agent.tools import ToolContext, create_tools, output_files, run_user_bash
from pi_lsp.agent.tools.output_files import OutputFiles, cap_note

CAP = 1024 * 1024
HUGE = "yes | head -c 5000000"  # 5 MB of "y\n": five times the cap used here


@pytest.fixture(autouse=True)
def _small_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(output_files, "FULL_OUTPUT_MAX_BYTES", CAP)


def assert_capped_head(path: str) -> None:
    data = Path(path).read_bytes()
    note = cap_note(CAP)
    assert len(data) <= CAP and data.endswith(note)
    head = data[: -len(note)]
    assert len(head) > CAP - len(note) - 64 * 1024  # cut after the last whole line that fits
    assert head == b"y\n" * (len(head) // 2)


async def test_bash_keeps_the_head_under_the_cap_and_the_tail_in_the_result(tmp_path: Path) -> None:
    bash = create_tools(["bash"])[0]
    result = await bash.execute("t", {"command": HUGE}, ToolContext(cwd=str(tmp_path)))
    details = result.details
    assert details is not None and details["truncation"]["totalBytes"] == 5_000_000  # it ran to the end
    path = details["fullOutputPath"]
    try:
        assert_capped_head(path)
        text = result.content[0]["text"]
        assert text.startswith("y\ny\n")
        assert text.endswith(f"[Showing lines 2498002-2500001 of 2500001. First 1.0MB of the output: {path}]")
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    finally:
        os.unlink(path)


async def test_user_bash_keeps_the_head_under_the_cap(tmp_path: Path) -> None:
    result = await run_user_bash(HUGE, str(tmp_path), asyncio.Event())
    assert result.truncated and result.exit_code == 0 and result.full_output_path is not None
    try:
        assert_capped_head(result.full_output_path)
    finally:
        os.unlink(result.full_output_path)


async def test_output_files_remove_what_their_owner_wrote(tmp_path: Path) -> None:
    files = OutputFiles()
    bash = create_tools(["bash"])[0]
    ctx = ToolContext(cwd=str(tmp_path), output_files=files)
    first = await bash.execute("t", {"command": "seq 1 5000"}, ctx)
    user = await run_user_bash("seq 1 5000", str(tmp_path), asyncio.Event(), output_files=files)
    assert first.details is not None
    assert files.paths == [first.details["fullOutputPath"], user.full_output_path]
    files.remove_all()
    assert files.paths == [] and not any(
        os.path.exists(p) for p in (first.details["fullOutputPath"], user.full_output_path)
    )


async def test_under_the_cap_the_file_is_the_whole_output(tmp_path: Path) -> None:
    bash = create_tools(["bash"])[0]
    result = await bash.execute("t", {"command": "seq 1 5000"}, ToolContext(cwd=str(tmp_path)))
    assert result.details is not None
    path = result.details["fullOutputPath"]
    assert Path(path).read_text() == "".join(f"{i}\n" for i in range(1, 5001))
    assert result.content[0]["text"].endswith(f"Full output: {path}]")
    os.unlink(path)
