"""Skills compared with pi 0.73.1 itself: every shared fixture, odd YAML, and app-level discovery."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pi_lsp.prompt.context_files import load_project_context_files
from pi_lsp.prompt.resources import resolve_prompt_sources
from pi_lsp.prompt.skill_discovery import discover_skills
from pi_lsp.prompt.skills import SkillLoadResult, format_skills_for_prompt, load_skills, load_skills_from_dir
from tests.oracle import PiOracle, require_oracle
from tests.prompt.helpers import (
    COLLISION_FIXTURES,
    SKILL_FIXTURES,
    RestrictedOracle,
    Tree,
    build_rich_tree,
    can_restrict_reads,
    copy_fixtures,
    reads_restricted,
)

pytestmark = pytest.mark.oracle


def _json(result: SkillLoadResult) -> dict[str, Any]:
    return {
        "skills": [s.to_json() for s in result.skills],
        "diagnostics": [d.to_json() for d in result.diagnostics],
    }


FIXTURE_DIRS = [
    *(f"skills/{p.name}" for p in sorted(SKILL_FIXTURES.iterdir())),
    "skills",
    "skills-collision/first",
    "skills-collision/second",
]


@pytest.fixture(scope="module")
def fixture_copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("fixtures")
    copy_fixtures(SKILL_FIXTURES, root / "skills")
    copy_fixtures(COLLISION_FIXTURES, root / "skills-collision")
    return root


@pytest.mark.parametrize("rel", FIXTURE_DIRS)
def test_fixture_dirs_match_pi(pi_oracle: PiOracle, fixture_copy: Path, rel: str) -> None:
    directory = str(fixture_copy / rel)
    response = pi_oracle.request("skills", dir=directory, source="test", format=True)
    ours = load_skills_from_dir(directory, "test")
    assert _json(ours) == response["result"]
    assert format_skills_for_prompt(ours.skills) == response["info"]["prompt"]


def test_explicit_dirs_collision_matches_pi(pi_oracle: PiOracle, fixture_copy: Path) -> None:
    dirs = [str(fixture_copy / "skills-collision/first"), str(fixture_copy / "skills-collision/second")]
    cwd, agent = str(fixture_copy), str(fixture_copy / "agent")
    expected = pi_oracle.result("skills", dirs=dirs, cwd=cwd, agentDir=agent)
    assert _json(load_skills(cwd, agent, dirs, include_defaults=False)) == expected


def test_standalone_defaults_user_first_matches_pi(pi_oracle: PiOracle, tmp_path: Path) -> None:
    tree = Tree(tmp_path)
    tree.skill("agent/skills/shared", "User copy.")
    tree.skill("proj/.pi/skills/shared", "Project copy.")
    tree.skill("proj/.pi/skills/only-project", "Project only.")
    cwd, agent = tree.path("proj"), tree.path("agent")
    expected = pi_oracle.result("skills", cwd=cwd, agentDir=agent, skillPaths=[], includeDefaults=True)
    assert _json(load_skills(cwd, agent, [], include_defaults=True)) == expected


YAML_CASES = {
    "dup": "---\nname: dup\ndescription: a\ndescription: b\n---\n",
    "yes": "---\ndescription: yes\n---\n",
    "date": "---\ndescription: 2024-01-02\n---\n",
    "num": "---\ndescription: 123\n---\n",
    "name-num": "---\nname: 1e3\ndescription: x\n---\n",
    "name-true": "---\nname: true\ndescription: x\n---\n",
    "name-list": "---\nname: [a, b]\ndescription: x\n---\n",
    "name-float": "---\nname: 1.0\ndescription: x\n---\n",
    "desc-empty": "---\ndescription: ''\n---\n",
    "desc-list": "---\ndescription: []\n---\n",
    "dmi-yes": "---\ndescription: x\ndisable-model-invocation: yes\n---\n",
    "dmi-true": "---\ndescription: x\ndisable-model-invocation: True\n---\n",
    "tab": "---\ndescription: x\n\tfoo: 1\n---\n",
    "quote": '---\ndescription: "abc\n---\n',
    "comment-only": "---\n# c\n---\n",
    "scalar": "---\njust text\n---\n",
    "crlf": "---\r\ndescription: crlf <&>\r\n---\r\nbody",
    "dash4": "---\ndescription: d4\n----\nbody",
    "bom": "\ufeff---\ndescription: bom\n---\n",
    "emoji": "---\ndescription: " + "😀" * 600 + "\n---\n",
    "anchor": "---\nbase: &b x\ndescription: *b\n---\n",
    "merge": "---\n<<: {description: m}\n---\n",
    "octal": "---\nname: 017\ndescription: x\n---\n",
    "null-desc": "---\ndescription: ~\n---\n",
    "blank-desc": "---\ndescription: '   '\n---\n",
    "long-desc": "---\ndescription: " + "a" * 1025 + "\n---\n",
    "hyphens": "---\nname: -ab-\ndescription: x\n---\n",
    "empty-name": "---\nname: ''\ndescription: x\n---\n",
    "directive": "---\n%YAML 1.2\n---\ndescription: x\n---\n",
    "doc-end": "---\ndescription: x\n...\n---\n",
    "tagged": "---\ndescription: !!str 12\n---\n",
    "int-key": "---\n1: x\ndescription: y\n---\n",
    "folded": "---\ndescription: >-\n  folded\n  text\n---\n",
    "keep": "---\ndescription: |+\n  kept\n\n---\n",
    "emoji-error": "---\ndescription: [😀 x\n---\n",
    "emoji-key-error": "---\n😀: [\n---\n",
}
# The yaml package points "nested mapping" errors at the value's start, PyYAML at the colon:
# the skill is dropped either way and the wording matches, only the position differs.
POSITION_ONLY = {
    "colon": "---\ndescription: a: b\n---\n",
    "bad-indent": "---\ndescription: x\n  y: z\n---\n",
}


def _write_cases(root: Path, cases: dict[str, str]) -> None:
    for name, text in cases.items():
        (root / name).mkdir(parents=True)
        (root / name / "SKILL.md").write_bytes(text.encode("utf-8"))


def test_odd_yaml_matches_pi(pi_oracle: PiOracle, tmp_path: Path) -> None:
    _write_cases(tmp_path, YAML_CASES)
    expected = pi_oracle.result("skills", dir=str(tmp_path), source="test")
    assert _json(load_skills_from_dir(str(tmp_path), "test")) == expected


def test_nested_mapping_errors_match_pi_except_position(pi_oracle: PiOracle, tmp_path: Path) -> None:
    _write_cases(tmp_path, POSITION_ONLY)
    expected = pi_oracle.result("skills", dir=str(tmp_path), source="test")
    ours = _json(load_skills_from_dir(str(tmp_path), "test"))
    assert ours["skills"] == expected["skills"] == []
    strip = [(d["type"], d["path"], d["message"].split(" at line ")[0]) for d in expected["diagnostics"]]
    assert [(d["type"], d["path"], d["message"].split(" at line ")[0]) for d in ours["diagnostics"]] == strip


# ---------------------------------------------------------------------------------------------
# App level (DefaultResourceLoader)


def _compare_resources(oracle: PiOracle, cwd: str, agent: str, home: str) -> dict[str, Any]:
    expected: dict[str, Any] = oracle.result("resources", cwd=cwd, agentDir=agent, home=home)
    ours = discover_skills(cwd, agent, home=home)
    assert [s.to_json() for s in ours.skills] == expected["skills"]
    assert [d.to_json() for d in ours.diagnostics] == expected["skillDiagnostics"]
    context = load_project_context_files(cwd, agent)
    assert [{"path": f.path, "content": f.content} for f in context.files] == expected["agentsFiles"]
    sources = resolve_prompt_sources(cwd, agent)
    assert sources.custom_prompt == expected["systemPrompt"]
    assert [item.text for item in sources.append] == expected["appendSystemPrompt"]
    return expected


def test_app_level_discovery_matches_pi(pi_oracle: PiOracle, tmp_path: Path) -> None:
    cwd, agent, home = build_rich_tree(Tree(tmp_path))
    expected = _compare_resources(pi_oracle, cwd, agent, home)
    names = [s["name"] for s in expected["skills"]]
    assert "user-skill" in names and "skip-me" not in names and "ignored" not in names


def test_app_level_with_shared_fixtures_matches_pi(pi_oracle: PiOracle, tmp_path: Path) -> None:
    cwd = tmp_path / "proj"
    copy_fixtures(SKILL_FIXTURES, cwd / ".pi" / "skills")
    copy_fixtures(COLLISION_FIXTURES / "first", tmp_path / "agent" / "skills")
    copy_fixtures(COLLISION_FIXTURES / "second", tmp_path / "home" / ".agents" / "skills")
    copy_fixtures(SKILL_FIXTURES / "nested", cwd / ".agents" / "skills")
    _compare_resources(pi_oracle, str(cwd), str(tmp_path / "agent"), str(tmp_path / "home"))


def test_extra_paths_come_last_like_pi_skill_flag(pi_oracle: PiOracle, tmp_path: Path) -> None:
    tree = Tree(tmp_path)
    tree.skill("proj/.pi/skills/cal", "Project calendar.")
    tree.skill("extra/cal", "Extra calendar loses.")
    single = tree.write("extra2/single.md", "---\ndescription: One file.\n---\n")
    cwd, agent, home = tree.path("proj"), tree.path("agent"), tree.path("home")
    extra = [tree.path("extra"), "missing-relative-dir", single]
    expected = pi_oracle.result("resources", cwd=cwd, agentDir=agent, home=home, additionalSkillPaths=extra)
    ours = discover_skills(cwd, agent, home=home, extra_paths=extra)
    assert [s.to_json() for s in ours.skills] == expected["skills"]
    assert [d.to_json() for d in ours.diagnostics] == expected["skillDiagnostics"]


def test_app_level_symlink_loop_differs_only_in_path_and_warning(pi_oracle: PiOracle, tmp_path: Path) -> None:
    """pi follows the loop until ELOOP and keeps the deepest copy (a path with ~40 ``loop/group``
    repetitions); we stop at the loop, keep the direct path and say so in one warning."""
    tree = Tree(tmp_path)
    tree.skill("proj/.pi/skills/group/real", "Real.", name="real")
    os.symlink(tree.path("proj/.pi/skills"), tree.path("proj/.pi/skills/group/loop"))
    cwd, agent, home = tree.path("proj"), tree.path("agent"), tree.path("home")
    expected = pi_oracle.result("resources", cwd=cwd, agentDir=agent, home=home)
    ours = discover_skills(cwd, agent, home=home)
    assert [(s.name, os.path.realpath(s.file_path)) for s in ours.skills] == [
        (s["name"], os.path.realpath(s["filePath"])) for s in expected["skills"]
    ]
    assert ours.skills[0].file_path == tree.path("proj/.pi/skills/group/real/SKILL.md")
    assert expected["skillDiagnostics"] == []
    assert [d.message.split(":")[0] for d in ours.diagnostics] == ["symlink loop"]


@pytest.fixture(scope="module")
def restricted_oracle() -> Iterator[PiOracle]:
    require_oracle()
    if not can_restrict_reads():
        pytest.skip("cannot drop CAP_DAC_OVERRIDE, so chmod 000 files stay readable")
    oracle = RestrictedOracle()
    yield oracle
    oracle.close()


def test_unreadable_skill_file_matches_pi(restricted_oracle: PiOracle, tmp_path: Path) -> None:
    tree = Tree(tmp_path)
    locked = tree.skill("skills/locked", "Locked.")
    tree.skill("skills/open", "Open.")
    tree.skill("skills/sealed/inner", "Inner.")
    os.chmod(locked, 0)
    os.chmod(tree.path("skills/sealed"), 0)
    try:
        expected = restricted_oracle.result("skills", dir=tree.path("skills"), source="test")
        with reads_restricted():
            ours = _json(load_skills_from_dir(tree.path("skills"), "test"))
    finally:
        os.chmod(tree.path("skills/sealed"), 0o755)
    assert ours["skills"] == expected["skills"]
    # pi skips an unreadable directory silently; we add one warning for it.
    assert ours["diagnostics"][: len(expected["diagnostics"])] == expected["diagnostics"]
    assert [d["message"].split(":")[0] for d in ours["diagnostics"][len(expected["diagnostics"]) :]] == [
        "EACCES"
    ]
