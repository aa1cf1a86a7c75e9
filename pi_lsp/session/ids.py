"""Identifiers and timestamps in pi's formats (UUIDv7 session ids, 8-hex entry ids, ISO ms times)."""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Container
from datetime import UTC, datetime

ID_ATTEMPTS = 100


def new_session_id() -> str:
    """A time-ordered UUIDv7 string, as pi 0.67+ uses for new sessions."""
    millis = time.time_ns() // 1_000_000
    rand = int.from_bytes(os.urandom(10), "big")
    value = (millis & ((1 << 48) - 1)) << 80
    value |= 0x7 << 76
    value |= ((rand >> 62) & 0xFFF) << 64
    value |= 0b10 << 62
    value |= rand & ((1 << 62) - 1)
    return str(uuid.UUID(int=value))


def new_entry_id(existing: Container[str]) -> str:
    """First 8 hex characters of a random UUID not in ``existing``; a full UUID after 100 collisions."""
    for _ in range(ID_ATTEMPTS):
        candidate = _random_hex8()  # what a UUIDv4's first 8 hex digits are: 32 random bits
        if candidate not in existing:
            return candidate
    return str(uuid.uuid4())


_POOL_IDS = 256
_pool: list[str] = []
"""Random 8-hex strings drawn from the OS a block at a time (one ``getrandom`` per 256 entry ids
rather than per id, as Node's ``randomUUID`` buffers). ``list.pop`` hands each to one caller even
across threads; a forked child empties its copy so it never repeats its parent's ids."""


def _random_hex8() -> str:
    while True:
        try:
            return _pool.pop()
        except IndexError:
            block = os.urandom(4 * _POOL_IDS).hex()
            _pool.extend([block[start : start + 8] for start in range(0, len(block), 8)])


os.register_at_fork(after_in_child=_pool.clear)


_second_text: list[tuple[int, str]] = [(-1, "")]  # the last whole second formatted (every append asks)


def iso_now() -> str:
    """Current UTC time like JS ``new Date().toISOString()`` (``2026-01-02T03:04:05.678Z``)."""
    millis = time.time_ns() // 1_000_000
    second, milli = divmod(millis, 1000)
    cached_second, text = _second_text[0]
    if cached_second != second:
        text = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(second))
        _second_text[0] = (second, text)
    return f"{text}.{milli:03d}Z"


def format_iso(moment: datetime) -> str:
    """ISO-8601 UTC with milliseconds and a ``Z`` suffix."""
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def now_ms() -> int:
    """Unix epoch milliseconds (message ``timestamp`` fields)."""
    return time.time_ns() // 1_000_000


def file_timestamp(iso: str) -> str:
    """The header timestamp as used in file names: ``:`` and ``.`` replaced by ``-``."""
    return iso.replace(":", "-").replace(".", "-")
