"""Services built on first use (``service/build.py`` ``Lazy``): a build in progress holds up only
those who need that service, not every other first use (the warm-up builds the run service for
seconds while requests need the compaction service)."""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING

from pi_lsp.service.build import build_service

if TYPE_CHECKING:
    from pi_lsp.service.runs import RunService


async def test_a_build_under_way_does_not_hold_up_another_service() -> None:
    service = build_service(workers=2)
    started, release = threading.Event(), threading.Event()
    real_make = service.lazy.runs._make

    def slow_runs() -> RunService:
        started.set()
        release.wait(10)
        return real_make()

    service.lazy.runs._make = slow_runs
    builder = threading.Thread(target=service.lazy.runs.get)
    builder.start()
    try:
        assert started.wait(10)
        took = time.monotonic()
        compaction = service.lazy.compaction.get()  # while the runs' build holds its own lock
        assert compaction is not None and time.monotonic() - took < 5
        assert service.lazy.runs.built is None
    finally:
        release.set()
        builder.join(30)
    assert service.lazy.runs.built is not None
    assert service.lazy.runs.built.compaction is service.lazy.compaction.built  # one of each
    await service.close()
