"""Skill loading without the oracle: pi's skills.test.ts cases plus loops, unreadable files, JS quirks."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pi_lsp.prompt.skills import (
    Skill,
    SourceInfo,
    format_skills_for_prompt,
    load_skill_from_file,
    load_skills,
    load_skills_from_dir,
)
from tests.prompt.helpers import (
    COLLISION_FIXTURES,
    SKILL_FIXTURES,
    Tree,
    can_restrict_reads,
    copy_fixtures,
    reads_restricted,
)


@pytest.fixture
def fixtures(tmp_path: Path) -> Path:
    return copy_fixtures(SKILL_FIXTURES, tmp_path / "skills")


def _one(directory: Path) -> tuple[list[Skill], list[str]]:
    result = load_skills_from_dir(str(directory), "test")
    return result.skills, [d.message for d in result.diagnostics]


def test_valid_skill(fixtures: Path) -> None:
    skills, messages = _one(fixtures / "valid-skill")
    assert [(s.name, s.description) for s in skills] == [
        ("valid-skill", "A valid skill for testing purposes.")
    ]
    assert skills[0].source_info == SourceInfo(
        str(fixtures / "valid-skill" / "SKILL.md"),
        "test",
        "temporary",
        "top-level",
        str(fixtures / "valid-skill"),
    )
    assert messages == []


@pytest.mark.parametrize(
    ("fixture", "name", "expected"),
    [
        ("name-mismatch", "different-name", "does not match parent directory"),
        ("invalid-name-chars", "Invalid_Name", "invalid characters"),
        ("long-name", None, "exceeds 64 characters"),
        ("consecutive-hyphens", "bad--name", "consecutive hyphens"),
    ],
)
def test_name_problems_warn_but_load(fixtures: Path, fixture: str, name: str | None, expected: str) -> None:
    skills, messages = _one(fixtures / fixture)
    assert len(skills) == 1
    if name is not None:
        assert skills[0].name == name
    assert any(expected in m for m in messages)


@pytest.mark.parametrize("fixture", ["missing-description", "no-frontmatter"])
def test_missing_description_skips_the_skill(fixtures: Path, fixture: str) -> None:
    skills, messages = _one(fixtures / fixture)
    assert skills == []
    assert "description is required" in messages


def test_invalid_yaml_skips_the_skill(fixtures: Path) -> None:
    skills, messages = _one(fixtures / "invalid-yaml")
    assert skills == []
    assert len(messages) == 1 and "at line 2, column 31" in messages[0]


def test_unknown_fields_are_ignored_silently(fixtures: Path) -> None:
    skills, messages = _one(fixtures / "unknown-field")
    assert len(skills) == 1 and messages == []


def test_nested_and_root_preferred(fixtures: Path) -> None:
    skills, messages = _one(fixtures / "nested")
    assert [s.name for s in skills] == ["child-skill"] and messages == []
    skills, messages = _one(fixtures / "root-skill-preferred")
    assert [(s.name, s.description) for s in skills] == [("root-skill-preferred", "Root skill should win.")]
    assert messages == []


def test_multiline_description(fixtures: Path) -> None:
    skills, messages = _one(fixtures / "multiline-description")
    assert "\n" in skills[0].description and skills[0].description.startswith(
        "This is a multiline description."
    )
    assert messages == []


def test_disable_model_invocation(fixtures: Path) -> None:
    skills, messages = _one(fixtures / "disable-model-invocation")
    assert skills[0].disable_model_invocation is True and messages == []
    assert _one(fixtures / "valid-skill")[0][0].disable_model_invocation is False


def test_whole_fixture_dir_in_byte_order(fixtures: Path) -> None:
    skills, _ = _one(fixtures)
    assert len(skills) >= 6
    dirs = [Path(s.file_path).relative_to(fixtures).as_posix() for s in skills]
    assert dirs == sorted(dirs, key=lambda d: d.encode())


def test_nonexistent_dir_is_empty(tmp_path: Path) -> None:
    assert _one(tmp_path / "nope") == ([], [])


def test_explicit_paths_missing_and_tilde(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tree = Tree(tmp_path)
    tree.skill("home/.pi/agent/skills/tilde-skill", "Tilde.")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    cwd, agent = str(tmp_path), str(tmp_path / "home/.pi/agent")
    by_tilde = load_skills(cwd, agent, ["~/.pi/agent/skills"], include_defaults=False)
    by_path = load_skills(cwd, agent, [str(tmp_path / "home/.pi/agent/skills")], include_defaults=False)
    assert [s.name for s in by_tilde.skills] == [s.name for s in by_path.skills] == ["tilde-skill"]
    missing = load_skills(cwd, agent, ["nope"], include_defaults=False)
    assert [(d.type, d.message, d.path) for d in missing.diagnostics] == [
        ("warning", "skill path does not exist", str(tmp_path / "nope"))
    ]
    not_md = tree.write("notes.txt", "x")
    assert load_skills(cwd, agent, [not_md], include_defaults=False).diagnostics[0].message == (
        "skill path is not a markdown file"
    )


def test_collision_keeps_first_and_symlink_duplicates_are_silent(tmp_path: Path) -> None:
    root = copy_fixtures(COLLISION_FIXTURES, tmp_path / "c")
    os.symlink(root / "first", tmp_path / "first-link")
    result = load_skills(
        str(tmp_path),
        str(tmp_path / "agent"),
        [str(root / "first"), str(tmp_path / "first-link"), str(root / "second")],
        include_defaults=False,
    )
    assert [(s.name, s.description) for s in result.skills] == [("calendar", "First calendar skill.")]
    assert [(d.type, d.message) for d in result.diagnostics] == [("collision", 'name "calendar" collision')]
    collision = result.diagnostics[0].collision
    assert collision is not None and collision.loser_path.endswith("second/calendar/SKILL.md")


def test_symlink_loop_is_a_diagnostic_not_a_crash(tmp_path: Path) -> None:
    tree = Tree(tmp_path)
    tree.skill("skills/group/real", "Real.", name="real")
    os.symlink(tmp_path / "skills", tmp_path / "skills/group/loop")
    os.symlink(tmp_path / "skills/group/self", tmp_path / "skills/group/self")  # ELOOP link
    result = load_skills(
        str(tmp_path), str(tmp_path / "agent"), [str(tmp_path / "skills")], include_defaults=False
    )
    assert [s.name for s in result.skills] == ["real"]
    loops = [d for d in result.diagnostics if d.message.startswith("symlink loop")]
    assert len(loops) == 1 and loops[0].path == str(tmp_path / "skills/group/loop")


@pytest.mark.skipif(not can_restrict_reads(), reason="cannot drop CAP_DAC_OVERRIDE, so chmod 000 is readable")
def test_unreadable_file_and_directory_are_diagnostics(tmp_path: Path) -> None:
    tree = Tree(tmp_path)
    locked_file = tree.skill("skills/locked", "Locked.")
    tree.skill("skills/sealed/inner", "Inner.")
    tree.skill("skills/open", "Open.")
    os.chmod(locked_file, 0)
    os.chmod(tmp_path / "skills/sealed", 0)
    try:
        with reads_restricted():
            result = load_skills_from_dir(str(tmp_path / "skills"), "test")
    finally:
        os.chmod(tmp_path / "skills/sealed", 0o755)
    assert [s.name for s in result.skills] == ["open"]
    assert [d.message for d in result.diagnostics] == [
        f"EACCES: permission denied, open '{locked_file}'",
        f"EACCES: permission denied, scandir '{tmp_path / 'skills/sealed'}'",
    ]


def test_js_semantics_for_odd_values(tmp_path: Path) -> None:
    tree = Tree(tmp_path)
    emoji = tree.skill("emoji", "😀" * 600)
    number = tree.skill("number", "x", name="1e3")
    listed = tree.skill("listed", "[]")
    empty_name = tree.skill("empty-name", "x", name="''")
    assert load_skill_from_file(emoji, "t")[1][0].message == "description exceeds 1024 characters (1200)"
    assert [d.message for d in load_skill_from_file(number, "t")[1]] == ["name.startsWith is not a function"]
    assert [d.message for d in load_skill_from_file(listed, "t")[1]] == ["description.trim is not a function"]
    skill, diagnostics = load_skill_from_file(empty_name, "t")
    assert skill is not None and skill.name == "empty-name" and diagnostics == []


def test_root_markdown_file_quirk(tmp_path: Path) -> None:
    tree = Tree(tmp_path)
    tree.write("skills/helper.md", "---\ndescription: Root file.\n---\n")
    result = load_skills_from_dir(str(tmp_path / "skills"), "test")
    assert [s.name for s in result.skills] == ["skills"]
    assert result.diagnostics == []


def _skill(name: str, description: str, path: str, hidden: bool = False) -> Skill:
    return Skill(
        name, description, path, os.path.dirname(path), SourceInfo(path, "test", "temporary"), hidden
    )


def test_format_for_prompt() -> None:
    assert format_skills_for_prompt([]) == ""
    text = format_skills_for_prompt([_skill("test-skill", "A test skill.", "/path/to/skill/SKILL.md")])
    head, _, tail = text.partition("<available_skills>")
    assert "The following skills provide specialized instructions" in head
    assert "Use the read tool to load a skill's file" in head
    for part in (
        "<skill>",
        "<name>test-skill</name>",
        "<description>A test skill.</description>",
        "<location>/path/to/skill/SKILL.md</location>",
        "</available_skills>",
    ):
        assert part in tail
    escaped = format_skills_for_prompt([_skill("x", "Uses <special> & \"characters\" 'q'", "/a&b/SKILL.md")])
    assert "&lt;special&gt; &amp; &quot;characters&quot; &apos;q&apos;" in escaped
    assert "<location>/a&amp;b/SKILL.md</location>" in escaped


def test_format_excludes_hidden_skills() -> None:
    both = format_skills_for_prompt(
        [_skill("a", "A.", "/a/SKILL.md"), _skill("b", "B.", "/b/SKILL.md", True)]
    )
    assert both.count("<skill>") == 1 and "<name>a</name>" in both
    assert format_skills_for_prompt([_skill("b", "B.", "/b/SKILL.md", True)]) == ""
