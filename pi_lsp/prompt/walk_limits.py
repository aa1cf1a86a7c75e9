"""Bounds on walking a skill tree, which a workspace controls.

A skills folder may hold symlink "diamonds" (``a -> .``, ``b -> .`` at every level: exponentially
many paths to the same directories) or a link to ``/``. Every walk therefore visits each real
directory once, does not follow a link to a folder that holds the walk's own root (``/``, a
parent: a loop, however long the way round; :func:`leads_back`), and stops at a depth, a
directory count and an entry count that no real skill tree comes near, saying so once
(``WalkBudget.exceeded``). The walks of one discovery (every skill root of a cwd, which a
repository's settings can list many times over) share one budget of the same size
(:meth:`WalkBudget.part`), so a whole discovery is bounded, not each of its walks.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

__all__ = [
    "MAX_IGNORE_RULES",
    "MAX_WALK_DEPTH",
    "MAX_WALK_DIRS",
    "MAX_WALK_ENTRIES",
    "RuleBudget",
    "WalkBudget",
    "leads_back",
]

MAX_WALK_DEPTH = 32
"""Directories below the walk's root (the root is depth 0)."""

MAX_WALK_DIRS = 10_000
"""Distinct real directories listed per walk."""

MAX_WALK_ENTRIES = 200_000
"""Directory entries looked at per walk."""

MAX_IGNORE_RULES = 1_000
"""gitignore rules gathered per walk (each is tried on every path below its folder)."""


@dataclass
class WalkBudget:
    """What one walk has spent; ``exceeded`` says which limit stopped it (None: none did)."""

    dirs: int = 0
    entries: int = 0
    exceeded: str | None = None
    too_deep: bool = False
    shared: WalkBudget | None = None
    """The budget of the whole discovery this walk is part of (charged too)."""

    def part(self) -> WalkBudget:
        """A budget for one walk that also spends this one (depth and messages are the walk's)."""
        return WalkBudget(shared=self)

    def enter(self, depth: int) -> bool:
        """Whether a directory at ``depth`` may be listed (counts it when it may)."""
        if self.exceeded is not None:
            return False
        if depth > MAX_WALK_DEPTH:
            self.too_deep = True
            return False
        if self.dirs >= MAX_WALK_DIRS:
            self.exceeded = f"more than {MAX_WALK_DIRS:,} directories"
            return False
        if self.shared is not None and not self.shared.enter(0):
            self.exceeded = f"{self.shared.exceeded} in all skill folders together"
            return False
        self.dirs += 1
        return True

    def problems(self, root: str) -> list[str]:
        """What the walk below ``root`` left out, as diagnostic messages."""
        found: list[str] = []
        if self.exceeded is not None:
            found.append(f"skill folder walk stopped at {self.exceeded} below {root}; the rest is not read")
        if self.too_deep:
            found.append(f"skill folders deeper than {MAX_WALK_DEPTH} levels below {root} are not read")
        return found

    def listed(self, count: int) -> bool:
        """Count ``count`` entries of a listed directory; False once over the entry limit."""
        self.entries += count
        if self.shared is not None and not self.shared.listed(count):
            self.exceeded = self.exceeded or f"{self.shared.exceeded} in all skill folders together"
            return False
        if self.entries > MAX_WALK_ENTRIES:
            self.exceeded = self.exceeded or f"more than {MAX_WALK_ENTRIES:,} entries"
            return False
        return True


def leads_back(real_target: str, real_root: str) -> bool:
    """Whether a symlinked folder whose real path is ``real_target`` holds the walk's root (is it
    or one of its parents, ``/`` included): following it only comes round again."""
    return real_root == real_target or real_root.startswith(real_target.rstrip(os.sep) + os.sep)


@dataclass
class RuleBudget:
    """Ignore rules one walk may still gather; ``dropped_at`` is the first file cut short."""

    left: int = field(default_factory=lambda: MAX_IGNORE_RULES)
    dropped_at: str | None = None

    def take(self, patterns: list[str], source: str) -> list[str]:
        """The patterns of ``source`` that fit (all of them while the budget lasts)."""
        if len(patterns) > self.left:
            patterns = patterns[: self.left]
            self.dropped_at = self.dropped_at or source
        self.left -= len(patterns)
        return patterns

    def problem(self, root: str) -> str:
        return (
            f"more than {MAX_IGNORE_RULES:,} ignore rules below {root};"
            f" rules from {self.dropped_at} on are not applied"
        )


def walk_dirs(
    root: str,
    budget: WalkBudget,
    *,
    follow_symlinks: bool,
    skip: Callable[[str], bool] = lambda name: False,
) -> Iterator[tuple[str, list[os.DirEntry[str]]]]:
    """Each directory below ``root`` (itself included) with its entries, depth first, each real
    directory once, within ``budget``; entries whose name ``skip`` accepts are not descended into,
    nor links that lead back to a folder holding ``root``. Unreadable directories are passed over."""
    seen: set[str] = set()
    real_root = os.path.realpath(root) if follow_symlinks else root
    stack = [(root, 0)]
    while stack:
        directory, depth = stack.pop()
        real = os.path.realpath(directory) if follow_symlinks else directory
        if real in seen or (depth > 0 and follow_symlinks and leads_back(real, real_root)):
            continue
        if not budget.enter(depth):
            if budget.exceeded is not None:
                return
            continue
        seen.add(real)
        try:
            with os.scandir(directory) as iterator:
                entries = list(iterator)
        except OSError:
            continue
        if not budget.listed(len(entries)):
            return
        yield directory, entries
        for entry in entries:
            if not skip(entry.name):
                with contextlib.suppress(OSError):
                    if entry.is_dir(follow_symlinks=follow_symlinks):
                        stack.append((entry.path, depth + 1))
