"""The prompt text, byte-equal to pi 0.73.1: ``buildSystemPrompt`` and the whole app pipeline."""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from pi_lsp.prompt.assemble import assemble_system_prompt
from pi_lsp.prompt.context_files import ContextFile
from pi_lsp.prompt.skills import load_skills_from_dir
from pi_lsp.prompt.system_prompt import (
    PiDocsPaths,
    SystemPromptOptions,
    build_system_prompt,
    builtin_tool_metadata,
    local_date,
    pi_docs_paths,
)
from tests.oracle import PiOracle, pi_app_system_prompt
from tests.prompt.helpers import SKILL_FIXTURES, Tree, build_rich_tree, copy_fixtures

NOW = "2026-03-02T03:00:00Z"
NOW_UTC = datetime(2026, 3, 2, 3, 0, tzinfo=UTC)


@pytest.fixture(scope="module")
def docs(pi_oracle: PiOracle) -> PiDocsPaths:
    info = pi_oracle.request("systemPrompt", options={"cwd": "/"})["info"]
    return PiDocsPaths(info["readmePath"], info["docsPath"], info["examplesPath"])


@pytest.fixture(scope="module")
def fixture_skills(tmp_path_factory: pytest.TempPathFactory) -> list[Any]:
    root = copy_fixtures(SKILL_FIXTURES, tmp_path_factory.mktemp("sp") / "skills")
    return load_skills_from_dir(str(root), "test").skills


CASES: dict[str, dict[str, Any]] = {
    "defaults": {"cwd": "/home/me/proj"},
    "no-tools": {"cwd": "/home/me/proj", "selectedTools": []},
    "all-builtins-windows-cwd": {
        "cwd": "C:\\work\\proj",
        "selectedTools": ["read", "bash", "grep", "find", "ls", "edit", "write", "custom"],
        "appendSystemPrompt": "Appended.\n\nTwo paragraphs.",
    },
    "bash-only-custom-with-context": {
        "cwd": "/p",
        "selectedTools": ["bash"],
        "customPrompt": "You are a custom agent.",
        "contextFiles": [{"path": "/p/AGENTS.md", "content": "Be nice.\n"}],
        "skills": True,
    },
    "custom-default-tools-skills": {"cwd": "/p", "customPrompt": "CUSTOM", "skills": True},
    "read-bash-skills-context-guidelines": {
        "cwd": "/p",
        "selectedTools": ["bash", "read", "dynamic_tool"],
        "skills": True,
        "contextFiles": [{"path": "/a/AGENTS.md", "content": "x"}, {"path": "/b/CLAUDE.md", "content": ""}],
        "promptGuidelines": [
            "  Use dynamic_tool for project summaries. ",
            "Use dynamic_tool for project summaries.",
            " ",
        ],
        "toolSnippets": {"dynamic_tool": "Run dynamic test behavior"},
    },
    "empty-custom-falls-back": {"cwd": "/p", "customPrompt": "", "appendSystemPrompt": "A"},
    "edit-write-only": {"cwd": "/p", "selectedTools": ["edit", "write"]},
}


@pytest.mark.oracle
@pytest.mark.parametrize("tz", ["America/Los_Angeles", "UTC"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_build_system_prompt_matches_pi(
    pi_oracle: PiOracle, docs: PiDocsPaths, fixture_skills: list[Any], case: str, tz: str
) -> None:
    options = dict(CASES[case])
    use_skills = options.pop("skills", False)
    request = dict(options, **({"skills": [s.to_json() for s in fixture_skills]} if use_skills else {}))
    expected = pi_oracle.result("systemPrompt", options=request, builtinToolMetadata=True, now=NOW, tz=tz)
    tools = options.get("selectedTools")
    metadata = builtin_tool_metadata(
        tools if tools is not None else ["read", "bash", "edit", "write"], options.get("toolSnippets")
    )
    ours = build_system_prompt(
        SystemPromptOptions(
            cwd=options["cwd"],
            custom_prompt=options.get("customPrompt"),
            selected_tools=tools,
            tool_snippets=metadata.snippets,
            prompt_guidelines=[*metadata.guidelines, *options.get("promptGuidelines", [])],
            append_system_prompt=options.get("appendSystemPrompt"),
            context_files=[ContextFile(**f) for f in options.get("contextFiles", [])],
            skills=fixture_skills if use_skills else (),
            now=NOW_UTC.astimezone(ZoneInfo(tz)),
            docs=docs,
        )
    )
    assert ours == expected


def test_local_date_uses_the_given_zone() -> None:
    assert local_date(NOW_UTC.astimezone(ZoneInfo("America/Los_Angeles"))) == "2026-03-01"
    assert local_date(NOW_UTC) == "2026-03-02"


def _prompt(**kwargs: Any) -> str:
    return build_system_prompt(SystemPromptOptions(cwd="/p", docs=PiDocsPaths("/r", "/d", "/e"), **kwargs))


def test_pi_unit_cases_without_oracle() -> None:
    none = _prompt(selected_tools=[])
    assert "Available tools:\n(none)" in none and "Show file paths clearly" in none
    meta = builtin_tool_metadata(["read", "bash", "edit", "write"])
    full = _prompt(tool_snippets=meta.snippets, prompt_guidelines=meta.guidelines)
    assert all(f"- {tool}:" in full for tool in ("read", "bash", "edit", "write"))
    custom = _prompt(
        selected_tools=["read", "dynamic_tool"],
        tool_snippets={"dynamic_tool": "Run dynamic test behavior"},
        prompt_guidelines=["  Use dynamic_tool for summaries. ", "Use dynamic_tool for summaries.", "  "],
    )
    assert "- dynamic_tool: Run dynamic test behavior" in custom
    assert custom.count("- Use dynamic_tool for summaries.") == 1 and "-  \n" not in custom


def test_exact_spacing_of_the_tail() -> None:
    plain = _prompt(selected_tools=[], now=NOW_UTC)
    assert plain.endswith("TUI API details)\nCurrent date: 2026-03-02\nCurrent working directory: /p")
    with_context = _prompt(selected_tools=[], now=NOW_UTC, context_files=[ContextFile("/p/AGENTS.md", "c")])
    assert with_context.endswith(
        "# Project Context\n\nProject-specific instructions and guidelines:\n\n"
        "## /p/AGENTS.md\n\nc\n\n\nCurrent date: 2026-03-02\nCurrent working directory: /p"
    )


def test_docs_paths_resolution(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PI_PACKAGE_DIR", str(tmp_path / "pkg"))
    assert pi_docs_paths().readme == str(tmp_path / "pkg" / "README.md")
    assert pi_docs_paths("/x").examples == "/x/examples"


# ---------------------------------------------------------------------------------------------
# The whole pipeline: pi's resource loader + buildSystemPrompt vs assemble_system_prompt.


def _pi_app_prompt(
    oracle: PiOracle,
    cwd: str,
    agent: str,
    home: str,
    tools: list[str] | None,
    tz: str,
    custom: str | None = None,
    append: str | None = None,
) -> str:
    return pi_app_system_prompt(
        oracle, cwd=cwd, agent_dir=agent, home=home, tools=tools, now=NOW, tz=tz, custom=custom, append=append
    )


PIPELINE_CASES: list[tuple[str, list[str] | None, str | None, str | None, bool]] = [
    # (name, tools, request custom prompt, request append prompt, keep SYSTEM.md)
    ("default-tools", None, None, None, False),
    ("explorer-tools", ["read", "bash", "grep", "find", "ls"], None, None, False),
    ("no-read-no-skills", ["bash", "edit"], None, None, False),
    ("no-tools", [], None, None, False),
    ("system-md", None, None, None, True),
    ("system-md-without-read", ["bash"], None, None, True),
    ("request-custom-wins", ["read"], "Request prompt.", None, True),
    ("request-empty-custom-means-default", None, "", None, True),
    ("request-append-replaces-file", None, None, "Request append.", False),
]


@pytest.mark.oracle
@pytest.mark.parametrize(("name", "tools", "custom", "append", "keep_system"), PIPELINE_CASES)
def test_assembled_prompt_matches_pi_app(
    pi_oracle: PiOracle,
    docs: PiDocsPaths,
    tmp_path: Path,
    name: str,
    tools: list[str] | None,
    custom: str | None,
    append: str | None,
    keep_system: bool,
) -> None:
    cwd, agent, home = build_rich_tree(Tree(tmp_path))
    if not keep_system:
        os.remove(os.path.join(cwd, ".pi", "SYSTEM.md"))
    tz = "Asia/Tokyo"
    expected = _pi_app_prompt(pi_oracle, cwd, agent, home, tools, tz, custom, append)
    result = assemble_system_prompt(
        cwd,
        agent_dir=agent,
        tools=tools,
        custom_prompt=custom,
        append_prompt=append,
        now=NOW_UTC.astimezone(ZoneInfo(tz)),
        home=home,
        docs=docs,
    )
    assert result.text == expected
