"""What to watch for one cwd so that no change to the prompt's inputs goes unnoticed.

The plan names paths, not files that exist: every context-file candidate in the agent dir and in
each ancestor of the cwd, SYSTEM.md/APPEND_SYSTEM.md/settings.json in ``<cwd>/.pi`` and the agent
dir, and every skill root (watched recursively). A path that does not exist yet is covered by
watching its nearest existing ancestor, so creating it is seen too.
"""

from __future__ import annotations

import contextlib
import functools
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from pi_lsp.prompt.context_files import context_file_candidates
from pi_lsp.prompt.resources import load_settings, prompt_resource_candidates
from pi_lsp.prompt.skill_discovery import skill_locations
from pi_lsp.prompt.skills import IGNORE_FILE_NAMES
from pi_lsp.prompt.walk_limits import WalkBudget, walk_dirs

__all__ = ["WatchPlan", "dir_checker", "iter_tree_files", "nearest_existing_dir", "plan_watch"]


def nearest_existing_dir(path: str, isdir: Callable[[str], bool] = os.path.isdir) -> str:
    """``path`` if it is a directory, else its closest ancestor that is one."""
    current = path
    while not isdir(current):
        parent = os.path.dirname(current)
        if parent == current:
            return current
        current = parent
    return current


def _under(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def _tree_relevant(relative: str, is_dir: bool | None) -> bool:
    """Inside a skill root: Markdown and ignore files, and (non-hidden) directories."""
    if not relative:
        return True
    parts = relative.split(os.sep)
    name = parts[-1]
    if any(part.startswith(".") or part == "node_modules" for part in parts[:-1]):
        return False
    if name in IGNORE_FILE_NAMES:
        return is_dir is not True
    if name.startswith(".") or name == "node_modules":
        return False
    if name.endswith(".md"):
        return True
    return is_dir if is_dir is not None else "." not in name


@dataclass(frozen=True)
class WatchPlan:
    """The paths that matter for one cwd's prompt."""

    cwd: str
    files: frozenset[str]
    trees: tuple[str, ...]

    def relevant(self, path: str, is_dir: bool | None = None) -> bool:
        """Whether a change at ``path`` can change this cwd's prompt (``is_dir`` None: unknown)."""
        path = os.path.normpath(path)
        if path in self.files:
            return True
        for tree in self.trees:
            if _under(path, tree):
                return _tree_relevant("" if path == tree else os.path.relpath(path, tree), is_dir)
        return False

    def structural(self, path: str) -> bool:
        """Whether ``path`` is a directory on the way to a watched location (e.g. a new ``.pi``)."""
        path = os.path.normpath(path)
        targets = [*(os.path.dirname(f) for f in self.files), *self.trees]
        return any(_under(target, path) for target in targets)

    def watch_dirs(self, isdir: Callable[[str], bool] = os.path.isdir) -> set[tuple[str, bool]]:
        """Existing directories to watch, each with whether to watch it recursively.

        ``isdir`` may be one answer per path shared by the plans of one update
        (:func:`dir_checker`): their ancestors, agent dir and home are mostly the same.
        """
        dirs: set[tuple[str, bool]] = set()
        for tree in self.trees:
            if isdir(tree):
                dirs.add((tree, True))
            else:
                dirs.add((nearest_existing_dir(tree, isdir), False))
        for directory in {os.path.dirname(file_path) for file_path in self.files}:  # 4 names a folder
            dirs.add((nearest_existing_dir(directory, isdir), False))
        recursive = {path for path, is_recursive in dirs if is_recursive}
        return {(path, rec) for path, rec in dirs if rec or path not in recursive}

    def existing_inputs(self, directory: str, recursive: bool) -> Iterator[str]:
        """Relevant files that already exist in ``directory`` (to catch writes racing a new watch)."""
        for file_path in self.files:
            inside = _under(file_path, directory) if recursive else os.path.dirname(file_path) == directory
            if inside and os.path.exists(file_path):
                yield file_path
        if recursive:
            for tree in self.trees:
                if _under(tree, directory) or _under(directory, tree):
                    start = tree if _under(tree, directory) else directory
                    yield from (p for p in iter_tree_files(start) if self.relevant(p, False))


def dir_checker() -> Callable[[str], bool]:
    """``os.path.isdir`` that asks once per path: for finding many plans' watch directories at
    one moment (a thousand session roots share ``/``, their parents, the agent dir and home)."""
    return functools.lru_cache(maxsize=None)(os.path.isdir)


def iter_tree_files(root: str) -> Iterator[str]:
    """Files below ``root`` (symlinks followed once, hidden dirs and node_modules skipped), within
    the same limits as the skill walk (:mod:`~pi_lsp.prompt.walk_limits`)."""
    if os.path.isfile(root):
        yield root
        return
    for _, entries in walk_dirs(root, WalkBudget(), follow_symlinks=True, skip=_hidden):
        for entry in entries:
            if not _hidden(entry.name):
                with contextlib.suppress(OSError):
                    if entry.is_file():
                        yield entry.path


def _hidden(name: str) -> bool:
    return name == "node_modules" or (name.startswith(".") and name not in IGNORE_FILE_NAMES)


def plan_watch(cwd: str, agent_dir: str, *, home: str | None = None) -> WatchPlan:
    """The watch plan for ``cwd`` given the settings files as they are now."""
    cwd = os.path.abspath(cwd)
    settings = load_settings(cwd, agent_dir)
    locations = skill_locations(cwd, agent_dir, home=home, settings=settings)
    files = {
        os.path.normpath(p)
        for p in (*context_file_candidates(cwd, agent_dir), *prompt_resource_candidates(cwd, agent_dir))
    }
    trees = tuple(dict.fromkeys(os.path.normpath(root) for root in locations.all_roots))
    return WatchPlan(cwd, frozenset(files), trees)
