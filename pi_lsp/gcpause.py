"""Pausing the cyclic garbage collector while building large sets of long-lived objects.

Loading a session or building its tree allocates hundreds of thousands of objects that all
survive; CPython's collector would scan the growing heap again and again meanwhile (up to 60% of
``get_tree`` on a 100k-entry session). None of these objects form reference cycles, and
reference counting still frees everything else immediately, so pausing changes no behaviour.

When the block left many objects behind (``FREEZE_AT`` or more), what is alive is frozen
(``gc.freeze``: moved out of the collector's generations, in constant time) before the collector
is turned back on. Otherwise its first pass would scan every object made during the pause (a
million after a compaction of 60k messages: half a second, the interpreter lock held, every thread
of the server stopped) and later full passes the same again. Frozen objects are still freed by
reference counting when dropped; only a reference cycle among objects alive at that moment would
never be collected, which is why small blocks (a short re-read, a small tree) do not freeze.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator
from contextlib import contextmanager

FREEZE_AT = 10_000
"""Objects left in the youngest generation from which a pause's end freezes the heap."""


def pause_collector() -> Callable[[], None]:
    """Disable the cyclic collector; the returned function turns it back on (if it was on), with
    what was left behind meanwhile frozen when that is a lot. For a pause that is not one block:
    the stdio server's start-up, from the first import to pygls taking the connection."""
    enabled = gc.isenabled()
    gc.disable()

    def resume() -> None:
        if enabled:
            if gc.get_count()[0] >= FREEZE_AT:
                gc.freeze()
            gc.enable()

    return resume


@contextmanager
def gc_paused() -> Iterator[None]:
    """Disable the cyclic collector for the block (re-enabled after, if it was enabled, with what
    the block left behind frozen when that is a lot)."""
    resume = pause_collector()
    try:
        yield
    finally:
        resume()
