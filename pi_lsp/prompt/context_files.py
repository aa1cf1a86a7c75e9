"""Context files (AGENTS.md / CLAUDE.md) in pi 0.73.1's discovery order.

The agent dir's file comes first, then one file per directory from the filesystem root down to
the cwd (no git-root stop, nothing below the cwd). Per directory the first existing, readable
candidate of ``AGENTS.md``, ``AGENTS.MD``, ``CLAUDE.md``, ``CLAUDE.MD`` wins; an unreadable one is
reported and the next candidate is tried, as pi does. Duplicates are removed by exact path string.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from pi_lsp.safe_io import read_error_message, read_text

__all__ = [
    "CONTEXT_FILE_NAMES",
    "ContextFile",
    "ContextFileProblem",
    "ContextFilesResult",
    "ancestor_dirs",
    "context_file_candidates",
    "load_context_file_from_dir",
    "load_project_context_files",
]

CONTEXT_FILE_NAMES = ("AGENTS.md", "AGENTS.MD", "CLAUDE.md", "CLAUDE.MD")


@dataclass(frozen=True)
class ContextFile:
    """A context file as it goes into the prompt: the path as discovered and the raw content."""

    path: str
    content: str


@dataclass(frozen=True)
class ContextFileProblem:
    """A candidate that exists but could not be read (pi only logs these)."""

    path: str
    message: str


@dataclass
class ContextFilesResult:
    """Files in prompt order plus read problems."""

    files: list[ContextFile] = field(default_factory=list)
    problems: list[ContextFileProblem] = field(default_factory=list)


def load_context_file_from_dir(directory: str) -> tuple[ContextFile | None, list[ContextFileProblem]]:
    """The directory's context file, trying the candidates in pi's order."""
    problems: list[ContextFileProblem] = []
    for name in CONTEXT_FILE_NAMES:
        path = os.path.normpath(os.path.join(directory, name))
        if not os.path.exists(path):
            continue
        try:
            return ContextFile(path, read_text(path)), problems
        except OSError as error:
            problems.append(ContextFileProblem(path, read_error_message(error, path)))
    return None, problems


def ancestor_dirs(cwd: str) -> list[str]:
    """``cwd`` and each of its ancestors, cwd first, ending at the filesystem root."""
    current = os.path.normpath(cwd)
    dirs = [current]
    while True:
        parent = os.path.dirname(current)
        if parent == current:
            return dirs
        dirs.append(parent)
        current = parent


def load_project_context_files(cwd: str, agent_dir: str) -> ContextFilesResult:
    """pi's ``loadProjectContextFiles``: ``[global?, root-most ancestor, ..., cwd]``."""
    result = ContextFilesResult()
    seen: set[str] = set()
    global_file, problems = load_context_file_from_dir(agent_dir)
    result.problems.extend(problems)
    if global_file is not None:
        result.files.append(global_file)
        seen.add(global_file.path)
    ancestors: list[ContextFile] = []
    for directory in ancestor_dirs(cwd):
        found, problems = load_context_file_from_dir(directory)
        result.problems.extend(problems)
        if found is not None and found.path not in seen:
            ancestors.insert(0, found)
            seen.add(found.path)
    result.files.extend(ancestors)
    return result


def context_file_candidates(cwd: str, agent_dir: str) -> list[str]:
    """Every path whose creation, change or removal can change the context files."""
    dirs = [os.path.normpath(agent_dir), *ancestor_dirs(cwd)]
    return [os.path.join(directory, name) for directory in dirs for name in CONTEXT_FILE_NAMES]
