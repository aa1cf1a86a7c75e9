"""Noticing file changes by ``stat`` alone: one signature of a file and one way to compare polls.

Both pollers use it: the session watcher (appends by other processes to open session files) and
the prompt watcher's polling backend (no inotify, or watch limits exhausted). A signature is the
inode, size, modification and change time; ``None`` stands for a file that is not there.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping

Signature = tuple[int, int, int, int]
Snapshot = dict[str, Signature]


def stat_signature(path: str) -> Signature | None:
    """What a poll compares for ``path``; None when it cannot be stat'ed (missing, no access)."""
    try:
        result = os.stat(path)
    except OSError:
        return None
    return (result.st_ino, result.st_size, result.st_mtime_ns, result.st_ctime_ns)


def snapshot(paths: Iterable[str]) -> Snapshot:
    """The signatures of those of ``paths`` that exist."""
    taken: Snapshot = {}
    for path in paths:
        if path not in taken and (signature := stat_signature(path)) is not None:
            taken[path] = signature
    return taken


def changed_paths(previous: Mapping[str, Signature], current: Mapping[str, Signature]) -> list[str]:
    """Paths created, deleted or changed between two snapshots, sorted."""
    return sorted(p for p in previous.keys() | current.keys() if previous.get(p) != current.get(p))
