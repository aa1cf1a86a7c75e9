"""assemble_system_prompt / list_skills: sources, token accounting, precedence and wire shapes."""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime
from pathlib import Path

from pi_lsp.prompt.assemble import CharEstimateTokenizer, assemble_system_prompt, list_skills
from pi_lsp.prompt.system_prompt import PiDocsPaths
from tests.prompt.helpers import Tree

DOCS = PiDocsPaths("/pkg/README.md", "/pkg/docs", "/pkg/examples")
NOW = datetime(2026, 1, 2, 12, tzinfo=UTC)


class WordCounter:
    def __init__(self) -> None:
        self.calls = 0

    def count(self, text: str) -> int:
        self.calls += 1
        return len(text.split())


def _workspace(tree: Tree) -> tuple[str, str, str]:
    tree.write("agent/AGENTS.md", "Global rules.\n")
    tree.write("agent/APPEND_SYSTEM.md", "Global append.")
    tree.write("ws/proj/CLAUDE.md", "Project rules.\n")
    tree.write("ws/proj/.pi/SYSTEM.md", "Project system prompt.")
    tree.skill("ws/proj/.pi/skills/visible", "Shown to the model.")
    tree.skill("ws/proj/.pi/skills/hidden", "Only by /skill.", extra="disable-model-invocation: true")
    tree.skill("home/.agents/skills/mine", "From home.")
    return tree.path("ws/proj"), tree.path("agent"), tree.path("home")


def test_sources_are_files_in_prompt_order(tmp_path: Path) -> None:
    cwd, agent, home = _workspace(Tree(tmp_path))
    result = assemble_system_prompt(cwd, agent_dir=agent, home=home, now=NOW, docs=DOCS)
    assert [(s.kind, Path(s.path).relative_to(tmp_path).as_posix()) for s in result.sources] == [
        ("system", "ws/proj/.pi/SYSTEM.md"),
        ("append", "agent/APPEND_SYSTEM.md"),
        ("agents", "agent/AGENTS.md"),
        ("agents", "ws/proj/CLAUDE.md"),
        ("skill", "ws/proj/.pi/skills/visible/SKILL.md"),
        ("skill", "home/.agents/skills/mine/SKILL.md"),
    ]
    assert result.text.startswith("Project system prompt.\n\nGlobal append.\n\n# Project Context")
    assert result.tokens == math.ceil(len(result.text) / 4)
    assert sum(s.tokens for s in result.sources) <= result.tokens
    assert {s.name for s in result.skills} == {"visible", "hidden", "mine"}


def test_tokenizer_is_used_for_every_count(tmp_path: Path) -> None:
    cwd, agent, home = _workspace(Tree(tmp_path))
    counter = WordCounter()
    result = assemble_system_prompt(cwd, agent_dir=agent, home=home, tokenizer=counter, docs=DOCS)
    assert result.tokens == len(result.text.split())
    assert counter.calls == len(result.sources) + 1
    assert CharEstimateTokenizer().count("😀abc") == 2  # UTF-16 length 5 -> ceil(5/4)


def test_request_prompts_win_and_have_no_source(tmp_path: Path) -> None:
    cwd, agent, home = _workspace(Tree(tmp_path))
    result = assemble_system_prompt(
        cwd, agent_dir=agent, home=home, custom_prompt="Mine.", append_prompt="More.", docs=DOCS
    )
    assert result.text.startswith("Mine.\n\nMore.\n\n# Project Context")
    assert {s.kind for s in result.sources} == {"agents", "skill"}
    empty = assemble_system_prompt(cwd, agent_dir=agent, home=home, custom_prompt="", docs=DOCS)
    assert empty.text.startswith("You are an expert coding assistant")
    assert "system" not in {s.kind for s in empty.sources}


def test_skills_need_the_read_tool(tmp_path: Path) -> None:
    cwd, agent, home = _workspace(Tree(tmp_path))
    result = assemble_system_prompt(cwd, agent_dir=agent, home=home, tools=["bash"], docs=DOCS)
    assert "<available_skills>" not in result.text
    assert "skill" not in {s.kind for s in result.sources}


def test_to_json_is_the_wire_shape(tmp_path: Path) -> None:
    cwd, agent, home = _workspace(Tree(tmp_path))
    Tree(tmp_path).write("ws/proj/.pi/settings.json", "{not json")
    data = assemble_system_prompt(cwd, agent_dir=agent, home=home, docs=DOCS).to_json()
    assert set(data) == {"text", "tokens", "sources", "skills", "diagnostics"}
    assert set(data["sources"][0]) == {"kind", "path", "tokens"}
    assert {"name", "description", "path", "baseDir", "source", "disableModelInvocation"} <= set(
        data["skills"][0]
    )
    assert [d["path"] for d in data["diagnostics"]] == [str(tmp_path / "ws/proj/.pi/settings.json")]
    assert data["diagnostics"][0]["severity"] == "warning"
    json.dumps(data)  # plain JSON, nothing exotic


def test_list_skills_shape_and_sources(tmp_path: Path) -> None:
    tree = Tree(tmp_path)
    cwd, agent, home = _workspace(tree)
    tree.skill("agent/skills/visible", "User copy loses.")
    listed = list_skills(cwd, agent, home=home)
    rows = {(s["name"], s["source"]) for s in listed["skills"]}
    assert rows == {("visible", "project"), ("hidden", "project"), ("mine", "user")}
    hidden = next(s for s in listed["skills"] if s["name"] == "hidden")
    assert hidden["disableModelInvocation"] is True
    assert hidden["baseDir"] == str(tmp_path / "ws/proj/.pi/skills/hidden")
    assert [(d["severity"], d["message"]) for d in listed["diagnostics"]] == [
        ("warning", 'name "visible" collision')
    ]
