"""Entry ids and timestamps in pi's formats."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest

from pi_lsp.session import ids


@pytest.mark.parametrize(
    "nanoseconds",
    [
        0,
        999_999_999,
        1_000_000_000,
        1_764_720_000_123_456_789,
        1_764_720_059_999_000_000,
        4_102_444_799_999_999_999,
    ],
)
def test_iso_now_is_what_to_iso_string_gives(monkeypatch: pytest.MonkeyPatch, nanoseconds: int) -> None:
    monkeypatch.setattr(ids.time, "time_ns", lambda: nanoseconds)
    moment = datetime.fromtimestamp(nanoseconds // 1_000_000 / 1000, UTC)
    expected = moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")
    assert ids.iso_now() == expected


def test_iso_now_follows_the_clock_across_seconds(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = iter([1_764_720_000_999_000_000, 1_764_720_001_000_000_000, 1_764_720_000_500_000_000])
    monkeypatch.setattr(ids.time, "time_ns", lambda: next(clock))
    assert [ids.iso_now() for _ in range(3)] == [
        "2025-12-03T00:00:00.999Z",
        "2025-12-03T00:00:01.000Z",
        "2025-12-03T00:00:00.500Z",  # a clock set back is written as it is
    ]


def test_entry_ids_are_8_hex_and_avoid_the_existing() -> None:
    taken = {ids.new_entry_id(()) for _ in range(200)}
    assert all(re.fullmatch(r"[0-9a-f]{8}", entry_id) for entry_id in taken)
    assert ids.new_entry_id(taken) not in taken


def test_entry_ids_are_not_repeated_across_refills_threads_or_forks() -> None:
    """Ids come from a pool of OS randomness: each is handed out once, and a forked child draws
    its own instead of repeating the ids its parent was about to use."""
    import os
    import threading

    drawn: list[str] = []

    def draw() -> None:
        drawn.extend(ids.new_entry_id(()) for _ in range(3000))

    threads = [threading.Thread(target=draw) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(drawn) == 12000
    # 12,000 draws of 32 random bits: a repeat has odds of about 1 in 60,000 unless one is handed
    # out twice, which would give thousands
    assert len(set(drawn)) >= len(drawn) - 1
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.write(write, "".join(ids.new_entry_id(()) for _ in range(20)).encode())
        os._exit(0)
    os.close(write)
    os.waitpid(pid, 0)
    with os.fdopen(read, "rb") as pipe:
        child = pipe.read().decode()
    parent = "".join(ids.new_entry_id(()) for _ in range(20))
    assert len(child) == 160 and child != parent
