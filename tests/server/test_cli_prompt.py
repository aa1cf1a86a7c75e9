"""``pi-lsp prompt`` and ``pi-lsp skills`` as subprocesses on real folders, and against pi."""

from __future__ import annotations

import json
import subprocess
from datetime import UTC, datetime
from pathlib import Path

import pytest

from pi_lsp.prompt.workspace import workspace_prompt
from tests.oracle import PiOracle, pi_app_system_prompt
from tests.prompt.helpers import Tree, build_rich_tree
from tests.server.support import SERVER, server_env


def cli(tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    environment = server_env(tmp_path / "agent", HOME=str(tmp_path / "home"), TZ="UTC", **env)
    return subprocess.run(
        [*SERVER, *args], env=environment, capture_output=True, text=True, timeout=120,
        cwd=tmp_path, stdin=subprocess.DEVNULL,
    )  # fmt: skip


def workspace(tmp_path: Path) -> Path:
    tree = Tree(tmp_path)
    tree.write("ws/AGENTS.md", "Run the tests before you answer.\n")
    skill = "---\nname: deploy\ndescription: Ships the app.\n---\nSteps.\n"
    tree.write("ws/.pi/skills/deploy/SKILL.md", skill)
    tree.write("agent/settings.json", json.dumps({"tools": ["read", "bash"]}))
    (tmp_path / "home").mkdir()
    return tmp_path / "ws"


def test_prompt_prints_what_a_run_sends_with_the_tools_setting(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    result = cli(tmp_path, "prompt", "--cwd", str(ws))
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    text = result.stdout
    assert "Run the tests before you answer." in text
    assert "<name>deploy</name>" in text
    assert "- read:" in text and "- bash:" in text and "- edit:" not in text  # the user's tools setting
    assert text.rstrip("\n").endswith(f"Current working directory: {ws}")


def test_prompt_json_has_sources_and_tokens_and_tools_can_be_given(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    result = cli(tmp_path, "prompt", "--cwd", str(ws), "--json", "--tools", "read,edit")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert "- edit:" in data["text"] and "- bash:" not in data["text"]
    assert [(s["kind"], s["path"]) for s in data["sources"]] == [
        ("agents", str(ws / "AGENTS.md")),
        ("skill", str(ws / ".pi" / "skills" / "deploy" / "SKILL.md")),
    ]
    assert all(s["tokens"] > 0 for s in data["sources"]) and data["tokens"] > sum(
        s["tokens"] for s in data["sources"]
    )


def test_a_broken_skill_is_reported_on_stderr_with_a_non_zero_exit(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    broken = ws / ".pi" / "skills" / "half" / "SKILL.md"
    broken.parent.mkdir(parents=True)
    broken.write_text("---\nname: half\n---\nNo description.\n")
    result = cli(tmp_path, "prompt", "--cwd", str(ws))
    assert result.returncode == 1
    assert "<name>deploy</name>" in result.stdout and "half" not in result.stdout
    assert result.stderr == f"pi-lsp: warning: {broken}: description is required\n"
    listed = cli(tmp_path, "skills", "--cwd", str(ws))
    assert listed.returncode == 1
    assert listed.stdout == f"deploy\tShips the app.\t{ws / '.pi' / 'skills' / 'deploy' / 'SKILL.md'}\n"
    assert listed.stderr == result.stderr


def test_skills_json_is_the_list_skills_shape(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    result = cli(tmp_path, "skills", "--cwd", str(ws), "--json")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert [(s["name"], s["description"], s["source"]) for s in data["skills"]] == [
        ("deploy", "Ships the app.", "project")
    ]
    assert data["diagnostics"] == []


def test_a_missing_folder_is_an_error(tmp_path: Path) -> None:
    result = cli(tmp_path, "skills", "--cwd", str(tmp_path / "nowhere"))
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr == f"pi-lsp: error: not a folder: {tmp_path / 'nowhere'}\n"


def test_the_python_entry_point_gives_the_same_text(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = workspace(tmp_path)
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    ours = workspace_prompt(str(ws), tools=["read", "bash"]).text
    assert cli(tmp_path, "prompt", "--cwd", str(ws)).stdout == ours + "\n"


@pytest.mark.oracle
@pytest.mark.parametrize("tools", [None, ["read", "bash", "grep"]])
def test_prompt_equals_pis_for_the_same_folder(
    pi_oracle: PiOracle, tmp_path: Path, tools: list[str] | None
) -> None:
    cwd, agent, home = build_rich_tree(Tree(tmp_path))
    info = pi_oracle.request("systemPrompt", options={"cwd": "/"})["info"]
    package_dir = str(Path(info["readmePath"]).parent)
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    expected = pi_app_system_prompt(
        pi_oracle, cwd=cwd, agent_dir=agent, home=home, tools=tools, now=now, tz="UTC"
    )
    args = ["prompt", "--cwd", cwd, *(["--tools", *tools] if tools is not None else [])]
    environment = server_env(Path(agent), HOME=home, TZ="UTC", PI_PACKAGE_DIR=package_dir)
    result = subprocess.run(
        [*SERVER, *args], env=environment, capture_output=True, text=True, timeout=120, cwd=cwd,
        stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert result.stdout == expected + "\n"
