"""One file's edits and writes happen one after another (pi's ``withFileMutationQueue``).

Calls of one batch run in parallel; two that change the same file (same real path, so a symlink
and its target count as one) are serialised in the order they asked. Different files still run
at once. Locks are dropped when nobody holds or waits for them.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager


def mutation_key(path: str) -> str:
    """The real path when it resolves, else the absolute path."""
    absolute = os.path.abspath(path)
    try:
        return os.path.realpath(absolute, strict=True)
    except OSError:
        return absolute


class _Entry:
    __slots__ = ("lock", "users")

    def __init__(self) -> None:
        self.lock = asyncio.Lock()
        self.users = 0


_entries: dict[str, _Entry] = {}


@asynccontextmanager
async def file_mutation(path: str) -> AsyncIterator[None]:
    """Hold the file's turn for the body of the ``async with`` (FIFO, like pi's promise chain)."""
    key = mutation_key(path)
    entry = _entries.get(key)
    if entry is None:
        entry = _entries[key] = _Entry()
    entry.users += 1
    try:
        async with entry.lock:
            yield
    finally:
        entry.users -= 1
        if entry.users == 0 and _entries.get(key) is entry:
            del _entries[key]


def pending_files() -> int:
    """How many files have a holder or waiter now (tests check nothing leaks)."""
    return len(_entries)
