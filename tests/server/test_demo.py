"""``pi-lsp demo`` as a user runs it: offline, a consistent story, its folder removed unless kept,
and a closing hint that works as printed."""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import orjson

from tests.server.support import run_cli, server_env


def _demo_folder(out: str) -> Path:
    return Path(out.split("demo folder: ", 1)[1].splitlines()[0])


def _session_file(out: str) -> Path:
    return Path(out.rsplit("session file: ", 1)[1].splitlines()[0])


def test_demo_runs_offline_in_a_given_folder(tmp_path: Path) -> None:
    result = run_cli(tmp_path, "demo", "--dir", str(tmp_path / "demo"))
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "editor: 'Show main() with type hints.'" in out
    assert "├─ " in out and "[fork point]" in out and "← leaf" in out
    assert out.count("context of the") == 2 and "toolResult read" in out
    file = _session_file(out)
    assert file.exists() and file.is_relative_to(tmp_path / "demo")  # --dir is kept
    assert "compacted by offline (no API key" in out and "│ *Offline summary" in out
    assert "tokensBefore 2940 → tokensAfter" in out and "1. compactionSummary: *Offline summary" in out
    lines = file.read_text().splitlines()
    assert len(lines) == 1 + 10 and '"type":"compaction"' in lines[-1]
    chat = out.split("Chat with the agent (scripted loopback model)", 1)[1]
    assert "scripted model (not Anthropic" in chat
    assert "approval asked for bash `python3 main.py` → allow" in chat
    assert "bash → hello" in chat and "assistant: main.py prints hello" in chat
    # model_change, thinking_level_change, the checkpoint of the workspace before the user message,
    # the user message, two replies and two tool results
    assert "stopReason stop, 8 entries written" in chat
    rewind = out.split("Rewind the code with the tree (checkpoints)", 1)[1]
    before = "main.py: \"print('hello')\", greet.py: absent"
    after = "main.py: 'from greet import greet', greet.py: 'def greet(name):'"
    assert f"before the run: {before}" in rewind and f"after the run:  {after}" in rewind
    assert "pi/getChanges: greet.py added, main.py modified" in rewind
    assert "restoreFiles: greet.py delete, main.py modify; conflicts []" in rewind
    assert f"back in the tree: {before} (editor text 'Greet the world.')" in rewind
    assert f"after the undo: {after}" in rewind
    project = tmp_path / "demo" / "project"
    assert (project / "greet.py").read_text() == "def greet(name):\n    return f'hello, {name}'\n"


def test_the_answer_matches_what_the_tool_read(tmp_path: Path) -> None:
    out = run_cli(tmp_path, "demo", "--dir", str(tmp_path / "demo")).stdout
    messages = [
        entry["message"]
        for entry in map(orjson.loads, _session_file(out).read_bytes().splitlines())
        if entry.get("type") == "message"
    ]
    call = messages[1]["content"][1]
    assert call["type"] == "toolCall" and call["name"] == "read"
    read = (tmp_path / "demo" / "project" / call["arguments"]["path"]).read_text()
    assert messages[2]["role"] == "toolResult" and messages[2]["content"][0]["text"] == read
    answer = messages[3]["content"][0]["text"]
    helpers = re.findall(r"^def (helper_\d+)\(", read, re.MULTILINE)
    claimed = re.search(r"defines (\d+) helpers, (helper_\d+) to (helper_\d+)", answer)
    assert claimed is not None, answer
    assert (int(claimed[1]), claimed[2], claimed[3]) == (len(helpers), helpers[0], helpers[-1])
    assert "def main():\n    print('hello')" in read and "main(), which prints 'hello'" in answer
    for reply in (messages[5], messages[7]):  # the two branches' answers show code, claim no edit
        text = reply["content"][0]["text"]
        assert "print('hello')" in text and "Done" not in text and reply["stopReason"] == "stop"


def test_demo_removes_its_temporary_folder(tmp_path: Path) -> None:
    result = run_cli(tmp_path, "demo")
    assert result.returncode == 0, result.stderr
    folder = _demo_folder(result.stdout)
    assert not folder.exists()
    assert f"removed the demo folder {folder}" in result.stdout
    assert "demo --keep` keeps it" in result.stdout


def test_demo_keep_prints_a_hint_that_works_as_printed(tmp_path: Path) -> None:
    """Run as ``bin/pi-lsp demo --keep`` from the virtualenv's folder, the way ``make demo`` does
    from the checkout; the printed command then runs from that same folder."""
    venv = Path(sys.executable).parent.parent
    launcher = Path("bin") / "pi-lsp"
    assert (venv / launcher).exists()
    env = server_env(tmp_path / "agent")
    result = subprocess.run(
        [str(launcher), "demo", "--keep"], cwd=venv, env=env, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    folder = _demo_folder(result.stdout)
    try:
        assert folder.exists() and f"kept the demo folder {folder}" in result.stdout
        hint = result.stdout.split("look at it with: ", 1)[1].splitlines()[0]
        assert shlex.split(hint)[-2:] == ["tree", str(_session_file(result.stdout))]
        shown = subprocess.run(shlex.split(hint), cwd=venv, env=env, capture_output=True, text=True)
        assert shown.returncode == 0, shown.stderr
        assert "[fork point]" in shown.stdout and "← leaf" in shown.stdout
    finally:
        shutil.rmtree(folder, ignore_errors=True)
