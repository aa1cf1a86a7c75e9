"""Skill folder walks are linear and bounded: symlink diamonds, a link to ``/``, deep trees.

Work is counted (directory listings), not timed: a listing counter fails the old exponential walk
long before it would finish.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from pi_lsp.prompt import skills, walk_limits
from pi_lsp.prompt.skill_discovery import discover_skills
from pi_lsp.prompt.skills import load_skills_from_dir, walk_skill_files
from pi_lsp.prompt.templates import discover_prompt_templates
from pi_lsp.prompt.watch_plan import iter_tree_files


class TooMuchWork(Exception):
    pass


def count_calls(
    monkeypatch: pytest.MonkeyPatch, owner: object, name: str, calls: list[object] | None = None
) -> list[object]:
    """Replace ``owner.name`` by a wrapper recording each call's first argument (into ``calls``
    when given); more than 2,000 calls fail the test at once (the unbounded walks make millions)."""
    calls = [] if calls is None else calls
    real = getattr(owner, name)

    def counting(first: Any, *args: Any, **kwargs: Any) -> Any:
        calls.append(first)
        if len(calls) > 2_000:
            raise TooMuchWork(first)
        return real(first, *args, **kwargs)

    monkeypatch.setattr(owner, name, counting)
    return calls


@pytest.fixture
def listings(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """Every directory the skill walk lists."""
    return count_calls(monkeypatch, skills, "_sorted_entries")


def skill(directory: Path, name: str) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "SKILL.md").write_text(f"---\nname: {name}\ndescription: The {name} skill.\n---\n")


def diamonds(root: Path, levels: int) -> None:
    """``root/d0/{a,b} -> d1``, ``d1/{a,b} -> d2``, ...: 2**levels paths to the last folder."""
    for level in range(levels + 1):
        (root / f"d{level}").mkdir(parents=True)
    for level in range(levels):
        for name in ("a", "b"):
            (root / f"d{level}" / name).symlink_to(root / f"d{level + 1}")
    skill(root / f"d{levels}" / "deep-skill", "deep-skill")


def test_symlink_diamonds_are_walked_once_per_real_folder(tmp_path: Path, listings: list[object]) -> None:
    root = tmp_path / "skills"
    diamonds(root, 24)  # 16 million paths for a walk without a visited set
    result = load_skills_from_dir(str(root), "project")
    real_dirs = {os.path.realpath(str(d)) for d in listings}
    assert len(listings) == len(real_dirs) <= 27
    assert [s.name for s in result.skills] == ["deep-skill"]
    assert result.skills[0].file_path == str(
        root / "d0/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/deep-skill/SKILL.md"
    )


def test_a_link_to_a_big_tree_is_walked_within_limits(
    tmp_path: Path, listings: list[object], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(walk_limits, "MAX_WALK_DIRS", 300)
    root = tmp_path / "skills"
    skill(root / "mine", "mine")
    for index in range(400):
        (tmp_path / "big" / f"{index:03d}").mkdir(parents=True)
    (root / "zz-everything").symlink_to(tmp_path / "big")  # after "mine": the limit leaves out the rest
    files, diagnostics = walk_skill_files(str(root))
    assert len(listings) == 300
    assert str(root / "mine" / "SKILL.md") in files
    assert [d.message for d in diagnostics if "walk stopped" in d.message] == [
        f"skill folder walk stopped at more than 300 directories below {root}; the rest is not read"
    ]
    found = discover_skills(
        str(tmp_path), str(tmp_path / "agent"), home=str(tmp_path / "home"), extra_paths=[str(root)]
    )
    assert "mine" in [s.name for s in found.skills]
    assert any("walk stopped" in d.message for d in found.diagnostics)


def test_the_depth_limit_leaves_deeper_folders_out_and_says_so(
    tmp_path: Path, listings: list[object], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(walk_limits, "MAX_WALK_DEPTH", 3)
    root = tmp_path / "skills"
    skill(root / "a" / "b" / "shallow", "shallow")
    skill(root / "a" / "b" / "c" / "d" / "deep", "deep")
    result = load_skills_from_dir(str(root), "project")
    assert [s.name for s in result.skills] == ["shallow"]
    assert [d.message for d in result.diagnostics] == [
        f"skill folders deeper than 3 levels below {root} are not read"
    ]


def test_a_loop_is_still_reported(tmp_path: Path, listings: list[object]) -> None:
    root = tmp_path / "skills"
    skill(root / "one", "one")
    (root / "one-more").mkdir()
    (root / "one-more" / "back").symlink_to(root)
    result = load_skills_from_dir(str(root), "project")
    assert [s.name for s in result.skills] == ["one"]
    assert [d.message for d in result.diagnostics] == [
        f"symlink loop: {root / 'one-more' / 'back'} leads back to {os.path.realpath(root)}; not followed"
    ]


def test_ignore_rules_are_capped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(walk_limits, "MAX_IGNORE_RULES", 5)
    root = tmp_path / "skills"
    skill(root / "kept", "kept")
    skill(root / "hidden", "hidden")
    (root / ".gitignore").write_text("".join(f"pattern-{n}\n" for n in range(5)) + "hidden/\n")
    files, diagnostics = walk_skill_files(str(root))
    assert str(root / "hidden" / "SKILL.md") in files
    assert [d.path for d in diagnostics] == [str(root / ".gitignore")]


def test_the_watcher_walk_has_the_same_limits(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(walk_limits, "MAX_WALK_DIRS", 50)
    root = tmp_path / "skills"
    diamonds(root, 24)
    (root / "everything").symlink_to("/")
    calls = count_calls(monkeypatch, os, "scandir")
    files = list(iter_tree_files(str(root)))
    assert len(calls) <= 50
    assert len(files) == len(set(files))


def test_prompt_template_folders_are_walked_once_per_real_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    prompts = tmp_path / "prompts"
    diamonds(prompts, 24)
    (prompts / "d0" / "loop").symlink_to(prompts)
    (prompts / "d24" / "review.md").write_text("Review the change.\n")
    ws = tmp_path / "ws"
    (ws / ".pi").mkdir(parents=True)
    (ws / ".pi" / "settings.json").write_text(json.dumps({"prompts": [str(prompts)]}))
    calls = count_calls(monkeypatch, os, "listdir")
    found = discover_prompt_templates(str(ws), str(tmp_path / "agent"), home=str(tmp_path / "home"))
    assert [t.name for t in found] == ["SKILL", "review"]  # diamonds() leaves a SKILL.md too
    assert len(calls) <= 30


def test_a_recursive_watch_is_not_placed_on_a_link_to_the_root(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pi_lsp.prompt.watch_backends import _walkable

    monkeypatch.setattr(walk_limits, "MAX_WALK_DIRS", 50)
    skill(tmp_path / "skills" / "one", "one")
    (tmp_path / "linked").symlink_to("/")
    assert _walkable(str(tmp_path / "skills"))
    assert not _walkable(str(tmp_path / "linked"))


def lattice(root: Path, levels: int = 20, width: int = 3) -> None:
    """``d0 .. d<levels>``: each level holds ``width`` links to the next (``width**levels`` paths to
    the last), a link back to the top (a cycle), one to itself, and ``d0`` one to ``/``."""
    for level in range(levels + 1):
        (root / f"d{level}").mkdir(parents=True)
    for level in range(levels):
        for index in range(width):
            (root / f"d{level}" / f"n{index}").symlink_to(root / f"d{level + 1}")
        (root / f"d{level}" / "up").symlink_to(root)
        (root / f"d{level}" / "self").symlink_to(".")
    (root / "d0" / "slash").symlink_to("/")
    skill(root / f"d{levels}" / "deep", "deep")


@pytest.fixture
def every_listing(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """Every directory listed by anyone (``os.scandir`` and ``os.listdir``); over 2,000 fails."""
    calls = count_calls(monkeypatch, os, "scandir")
    return count_calls(monkeypatch, os, "listdir", calls)


def test_a_lattice_of_symlinks_with_cycles_and_a_link_to_the_root_is_bounded_everywhere(
    tmp_path: Path, every_listing: list[object]
) -> None:
    """The whole system prompt (every skill root, context-file ancestors, the watch plan's walks)
    lists a bounded number of folders: 3**20 paths, cycles and ``/`` in every skill location."""
    from pi_lsp.prompt.assemble import assemble_system_prompt
    from pi_lsp.prompt.watch_plan import plan_watch

    home, agent, ctx = tmp_path / "home", tmp_path / "agent", tmp_path / "ctx"
    lattice(ctx)
    for level in range(20):  # each ancestor of the cwd has a .agents/skills: a lattice again
        (ctx / f"d{level}" / ".agents").mkdir()
        (ctx / f"d{level}" / ".agents" / "skills").symlink_to(tmp_path / "shared")
    lattice(tmp_path / "shared")
    cwd = ctx / "d0" / "n0" / "n1" / "n2" / "n0" / "n1" / "n2" / "n0"
    for location in (cwd / ".pi" / "skills", agent / "skills", home / ".agents" / "skills"):
        lattice(location)

    result = assemble_system_prompt(str(cwd), agent_dir=str(agent), home=str(home))
    plan = plan_watch(str(cwd), str(agent), home=str(home))
    watched = [path for tree in plan.trees for path in iter_tree_files(tree)]

    assert len(every_listing) < 600  # a few dozen real folders per location
    assert {s.name for s in result.skills} == {"deep"}
    assert any(
        d.message.startswith("symlink loop:") and d.path.endswith("slash") for d in result.skill_diagnostics
    )
    assert len(watched) < 100  # one SKILL.md per location, not one per path to it
    assert any(path.endswith(os.path.join("deep", "SKILL.md")) for path in watched)


def test_the_walks_of_one_discovery_share_one_budget(
    tmp_path: Path, listings: list[object], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A repository listing one big folder many times in its settings gets one walk's worth."""
    monkeypatch.setattr(walk_limits, "MAX_WALK_DIRS", 100)
    big = tmp_path / "big"
    for index in range(90):
        (big / f"folder-{index:02d}").mkdir(parents=True)
    skill(big / "folder-00" / "first", "first")
    ws = tmp_path / "ws"
    (ws / ".pi").mkdir(parents=True)
    (ws / ".pi" / "settings.json").write_text(json.dumps({"skills": [str(big)] * 10}))
    found = discover_skills(str(ws), str(tmp_path / "agent"), home=str(tmp_path / "home"))
    assert len(listings) <= 100
    assert [s.name for s in found.skills] == ["first"]
    assert any("in all skill folders together" in d.message for d in found.diagnostics)
