"""YAML alias bombs in SKILL.md frontmatter are rejected exactly where pi's ``yaml`` parser rejects
them (``maxAliasCount`` 100), checked against pi itself."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pi_lsp.prompt.frontmatter import ALIAS_BOMB, FrontmatterError, parse_frontmatter
from pi_lsp.prompt.skills import load_skills_from_dir
from tests.oracle import PiOracle

pytestmark = pytest.mark.oracle


def _aliases(target: str, count: int) -> str:
    return "[" + ", ".join([f"*{target}"] * count) + "]"


def _laughs(levels: int) -> str:
    """The classic billion laughs: each level is nine aliases of the one before."""
    lines = ['l0: &l0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    lines += [f"l{n}: &l{n} {_aliases(f'l{n - 1}', 9)}" for n in range(1, levels + 1)]
    return "\n".join(lines)


YAML_CASES = {
    "few-aliases": "x: &x [1]\ny: [*x, *x, *x]",
    "99-scalar-aliases": "x: &x v\ny: " + _aliases("x", 99),
    "100-scalar-aliases": "x: &x v\ny: " + _aliases("x", 100),
    "100-list-aliases": "x: &x [a, b]\ny: " + _aliases("x", 100),
    "empty-collections-never-count": "x: &x {}\ny: &y []\nz: "
    + _aliases("x", 300)
    + "\nw: "
    + _aliases("y", 300),
    "self-reference": "x: &x [*x]",
    "nested-under-limit": "a: &a v\nb: &b " + _aliases("a", 10) + "\nc: " + _aliases("b", 9),
    "nested-over-limit": "a: &a v\nb: &b " + _aliases("a", 10) + "\nc: " + _aliases("b", 10),
    "alias-as-key": "? &k key\n: v\nz: *k",
    "billion-laughs": _laughs(9),
    "two-levels": _laughs(2),
}


def _skill(root: Path, name: str, yaml_text: str) -> None:
    folder = root / name
    folder.mkdir(parents=True)
    text = f"---\nname: {name}\ndescription: Aliases.\n{yaml_text}\n---\nBody.\n"
    (folder / "SKILL.md").write_text(text)


def _outcome(result: dict[str, Any]) -> tuple[list[str], list[str]]:
    return [s["name"] for s in result["skills"]], [d["message"] for d in result["diagnostics"]]


@pytest.mark.parametrize("case", sorted(YAML_CASES))
def test_aliases_load_or_fail_as_in_pi(pi_oracle: PiOracle, tmp_path: Path, case: str) -> None:
    _skill(tmp_path, case, YAML_CASES[case])
    pi = pi_oracle.result("skills", dir=str(tmp_path), source="test")
    ours = load_skills_from_dir(str(tmp_path), "test")
    assert _outcome(
        {"skills": [s.to_json() for s in ours.skills], "diagnostics": [d.to_json() for d in ours.diagnostics]}
    ) == _outcome(pi)


def test_the_bomb_is_refused_with_pis_words() -> None:
    with pytest.raises(FrontmatterError) as info:
        parse_frontmatter("---\n" + _laughs(9) + "\n---\n")
    assert info.value.message == ALIAS_BOMB


def test_pathological_alias_work_is_bounded() -> None:
    """An anchor of many empty lists has aliasCount 0, which pi recomputes on every alias
    (quadratic); past a fixed amount of work the document counts as a bomb."""
    body = "x: &x [" + ", ".join(["[]"] * 20_000) + "]\ny: " + _aliases("x", 20_000)
    with pytest.raises(FrontmatterError) as info:
        parse_frontmatter("---\n" + body + "\n---\n")
    assert info.value.message == ALIAS_BOMB
