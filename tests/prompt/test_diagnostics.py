"""LSP-shaped diagnostics and hover token counts for skill and context files."""

from __future__ import annotations

import math
from pathlib import Path

from pi_lsp.prompt.assemble import assemble_system_prompt
from pi_lsp.prompt.diagnostics import LspDiagnostic, PromptFileIndex
from pi_lsp.prompt.system_prompt import PiDocsPaths
from tests.prompt.helpers import Tree

DOCS = PiDocsPaths("/pkg/README.md", "/pkg/docs", "/pkg/examples")


def _index(tree: Tree, **kwargs: int) -> PromptFileIndex:
    result = assemble_system_prompt(
        tree.path("proj"), agent_dir=tree.path("agent"), home=tree.path("home"), docs=DOCS
    )
    return PromptFileIndex(result, **kwargs)


def _brief(diagnostics: list[LspDiagnostic]) -> list[tuple[int, int, int, int, int, str]]:
    return [
        (
            d["range"]["start"]["line"],
            d["range"]["start"]["character"],
            d["range"]["end"]["line"],
            d["range"]["end"]["character"],
            d["severity"],
            d["message"],
        )
        for d in diagnostics
    ]


def test_invalid_yaml_is_an_error_at_the_yaml_position(tmp_path: Path) -> None:
    tree = Tree(tmp_path)
    path = tree.write("proj/.pi/skills/broken/SKILL.md", "---\nname: broken\ndescription: [oops\n---\n")
    diagnostics = _index(tree).diagnostics(path)
    message = "Flow sequence in block collection must be sufficiently indented and end with a ]"
    message += " at line 2, column 19"
    assert _brief(diagnostics) == [(2, 18, 2, 18, 1, message + " (skill not loaded)")]
    assert diagnostics[0]["source"] == "pi-lsp"


def test_name_and_description_problems_sit_on_their_lines(tmp_path: Path) -> None:
    tree = Tree(tmp_path)
    mismatch = tree.write("proj/.pi/skills/folder/SKILL.md", "---\ndescription: ok\nname: Other_Name\n---\n")
    missing = tree.write("proj/.pi/skills/nodesc/SKILL.md", "---\nname: nodesc\n---\n")
    index = _index(tree)
    assert _brief(index.diagnostics(mismatch)) == [
        (2, 0, 2, 16, 2, 'name "Other_Name" does not match parent directory "folder"'),
        (2, 0, 2, 16, 2, "name contains invalid characters (must be lowercase a-z, 0-9, hyphens only)"),
    ]
    assert _brief(index.diagnostics(missing)) == [
        (0, 0, 0, 3, 1, "description is required (skill not loaded)")
    ]


def test_collision_and_unknown_field(tmp_path: Path) -> None:
    tree = Tree(tmp_path)
    winner = tree.skill("proj/.pi/skills/dup", "Project.", extra="author: me")
    loser = tree.skill("agent/skills/dup", "User.")
    index = _index(tree)
    assert _brief(index.diagnostics(winner)) == [
        (2, 0, 2, 6, 3, '"author" is not a skill field pi reads; it is ignored')
    ]
    [collision] = index.diagnostics(loser)
    assert collision["severity"] == 2
    assert collision["message"] == f'name "dup" collision: {winner} has the same name and takes precedence'
    assert set(index.files()) >= {winner, loser}


def test_large_and_shadowed_context_files(tmp_path: Path) -> None:
    tree = Tree(tmp_path)
    big = tree.write("proj/AGENTS.md", "word " * 400)
    shadowed = tree.write("proj/CLAUDE.md", "never read")
    small = tree.write("AGENTS.md", "small")
    index = _index(tree, large_file_tokens=100)
    [large] = index.diagnostics(big)
    tokens = math.ceil(len(f"## {big}\n\n{'word ' * 400}\n\n") / 4)
    assert large["severity"] == 2
    assert (
        large["message"] == f"This file adds about {tokens} tokens to every request (warning threshold: 100)"
    )
    assert _brief(index.diagnostics(shadowed)) == [
        (0, 0, 0, 10, 3, "pi reads AGENTS.md in this directory; this file is not used")
    ]
    assert index.diagnostics(small) == []
    assert shadowed in index.files() and big in index.files()


def test_token_contribution_for_hovers(tmp_path: Path) -> None:
    tree = Tree(tmp_path)
    context = tree.write("proj/AGENTS.md", "Rules.")
    shown = tree.skill("proj/.pi/skills/shown", "Shown.")
    hidden = tree.skill("proj/.pi/skills/hidden", "Hidden.", extra="disable-model-invocation: true")
    index = _index(tree)
    assert index.token_contribution(context) == math.ceil(len(f"## {context}\n\nRules.\n\n") / 4)
    shown_tokens = index.token_contribution(shown)
    assert shown_tokens is not None and shown_tokens > 0
    assert index.token_contribution(hidden) == 0
    assert index.token_contribution(tree.path("proj/README.md")) is None


def test_columns_are_utf16(tmp_path: Path) -> None:
    tree = Tree(tmp_path)
    path = tree.write("proj/.pi/skills/emoji/SKILL.md", "---\nname: emoji\ndescription: [😀 x\n---\n")
    [diagnostic] = _index(tree).diagnostics(path)
    assert "column 19" in diagnostic["message"]  # pi's yaml package counts UTF-16 units, like LSP
    assert diagnostic["range"]["start"] == {"line": 2, "character": 18}
