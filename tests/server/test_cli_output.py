"""The command line's text output arrives whole when the process is stopped and continued mid-write.

Under ``PYTHONUNBUFFERED`` (``-u``), ``sys.stdout`` writes to a raw file, and CPython's text layer
drops what a partial write leaves: a Ctrl-Z while ``pi-lsp prompt`` printed a 2 MB prompt (or
``pi-lsp chat`` a long tool result) lost all but its first few hundred KB. The command line puts
a buffered layer between (``full_writes.whole_text_stdout``), which writes the rest.
"""

from __future__ import annotations

import subprocess
import threading
from pathlib import Path

import pytest

from tests.server.support import SERVER, server_env, stop_and_continue

LINE = "Keep answers short and run the tests before you answer.\n"


def _prompt(tmp_path: Path, cwd: Path, unbuffered: str, stops: bool) -> str:
    environment = server_env(tmp_path / "agent", HOME=str(tmp_path / "home"), PYTHONUNBUFFERED=unbuffered)
    process = subprocess.Popen(
        [*SERVER, "prompt", "--cwd", str(cwd)],
        env=environment, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert process.stdout is not None
    done = threading.Event()
    stopper = threading.Thread(target=stop_and_continue, args=(process.pid, done), daemon=True)
    if stops:
        stopper.start()
    try:
        chunks: list[bytes] = []
        while chunk := process.stdout.read(1 << 16):  # a reader slower than the writer
            chunks.append(chunk)
            done.wait(0.001)
        assert process.wait(timeout=120) == 0
        return b"".join(chunks).decode()
    finally:
        done.set()
        if stops:
            stopper.join()
        if process.poll() is None:
            process.kill()


@pytest.mark.parametrize("unbuffered", ["1", ""])
def test_a_long_prompt_prints_whole_across_stops(tmp_path: Path, unbuffered: str) -> None:
    project = tmp_path / "outer" / "project"
    project.mkdir(parents=True)
    for folder in (tmp_path / "outer", project):  # two AGENTS.md of nearly 1 MB each
        (folder / "AGENTS.md").write_text(f"# {folder.name}\n" + LINE * 17_000)
    expected = _prompt(tmp_path, project, unbuffered, stops=False)
    assert expected.count(LINE) == 2 * 17_000
    assert _prompt(tmp_path, project, unbuffered, stops=True) == expected
