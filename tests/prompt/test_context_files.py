"""AGENTS.md / CLAUDE.md discovery, compared with pi's ``loadProjectContextFiles``."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pi_lsp.prompt.context_files import ancestor_dirs, context_file_candidates, load_project_context_files
from tests.oracle import PiOracle
from tests.prompt.helpers import Tree


def _as_json(cwd: str, agent: str) -> list[dict[str, str]]:
    return [{"path": f.path, "content": f.content} for f in load_project_context_files(cwd, agent).files]


def _mixed_case_tree(tree: Tree) -> None:
    tree.write("agent/AGENTS.md", "global agents\n")
    tree.write("agent/CLAUDE.md", "global claude, shadowed\n")
    tree.write("repo/CLAUDE.md", "repo claude\n")
    tree.write("repo/sub/AGENTS.MD", "upper-case AGENTS\n")
    tree.write("repo/sub/CLAUDE.MD", "upper-case CLAUDE, shadowed\n")
    tree.write("repo/sub/deep/AGENTS.md", "deep agents\n")
    tree.write("repo/sub/deep/CLAUDE.md", "deep claude, shadowed\n")
    tree.write("repo/sub/deep/agents.md", "lower-case name is not a candidate\n")
    tree.write("repo/other/CLAUDE.MD", "not an ancestor\n")
    tree.write("repo/sub/deep/below/AGENTS.md", "below the cwd: not read\n")


@pytest.mark.oracle
def test_mixed_case_tree_matches_pi(pi_oracle: PiOracle, tmp_path: Path) -> None:
    tree = Tree(tmp_path)
    _mixed_case_tree(tree)
    cwd, agent = tree.path("repo/sub/deep"), tree.path("agent")
    expected = pi_oracle.result("contextFiles", cwd=cwd, agentDir=agent)
    assert _as_json(cwd, agent) == expected
    assert [Path(f["path"]).relative_to(tmp_path).as_posix() for f in expected] == [
        "agent/AGENTS.md",
        "repo/CLAUDE.md",
        "repo/sub/AGENTS.MD",
        "repo/sub/deep/AGENTS.md",
    ]


@pytest.mark.oracle
def test_agent_dir_inside_the_tree_is_not_listed_twice(pi_oracle: PiOracle, tmp_path: Path) -> None:
    tree = Tree(tmp_path)
    tree.write("proj/AGENTS.md", "one file\n")
    tree.write("proj/CLAUDE.MD", "shadowed\n")
    cwd = tree.path("proj")
    expected = pi_oracle.result("contextFiles", cwd=cwd, agentDir=cwd)
    assert _as_json(cwd, cwd) == expected and len(expected) == 1


@pytest.mark.oracle
def test_unreadable_candidate_falls_through_like_pi(pi_oracle: PiOracle, tmp_path: Path) -> None:
    tree = Tree(tmp_path)
    os.makedirs(tree.path("proj/AGENTS.md"))  # exists but cannot be read as a file (EISDIR)
    tree.write("proj/CLAUDE.md", "fallback\n")
    cwd, agent = tree.path("proj"), tree.path("agent")
    assert _as_json(cwd, agent) == pi_oracle.result("contextFiles", cwd=cwd, agentDir=agent)
    problems = load_project_context_files(cwd, agent).problems
    assert [(p.path, p.message) for p in problems] == [
        (
            tree.path("proj/AGENTS.md"),
            f"EISDIR: illegal operation on a directory, open '{tree.path('proj/AGENTS.md')}'",
        )
    ]


@pytest.mark.oracle
def test_symlinked_dir_paths_are_kept_as_discovered(pi_oracle: PiOracle, tmp_path: Path) -> None:
    tree = Tree(tmp_path)
    tree.write("real/AGENTS.md", "via link\n")
    os.symlink(tree.path("real"), tree.path("link"))
    cwd, agent = tree.path("link"), tree.path("real")
    assert _as_json(cwd, agent) == pi_oracle.result("contextFiles", cwd=cwd, agentDir=agent)


def test_content_is_raw_and_order_is_root_first(tmp_path: Path) -> None:
    tree = Tree(tmp_path)
    tree.write("a/AGENTS.md", "---\nfront: matter\n---\n  raw  \r\n")
    tree.write("a/b/CLAUDE.md", "b")
    files = load_project_context_files(tree.path("a/b"), tree.path("agent")).files
    assert [f.content for f in files] == ["---\nfront: matter\n---\n  raw  \r\n", "b"]


def test_candidates_cover_every_ancestor_and_the_agent_dir(tmp_path: Path) -> None:
    cwd = str(tmp_path / "x" / "y")
    candidates = context_file_candidates(cwd, str(tmp_path / "agent"))
    assert len(candidates) == 4 * (len(ancestor_dirs(cwd)) + 1)
    assert os.path.join(cwd, "CLAUDE.MD") in candidates and "/AGENTS.md" in candidates
