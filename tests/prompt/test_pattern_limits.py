"""Ignore rules and settings globs are workspace input: they must not backtrack exponentially, and
the linear translation must mean what the naive one meant."""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from functools import cache

from hypothesis import given, settings
from hypothesis import strategies as st

from pi_lsp.prompt.patterns import IgnoreRules, _glob_segment_regex, glob_match


def _reference(pattern: str, name: str) -> bool:
    """Wildcard matching by dynamic programming (``*`` any run, ``?`` one character)."""

    @cache
    def match(p: int, n: int) -> bool:
        if p == len(pattern):
            return n == len(name)
        if pattern[p] == "*":
            return match(p + 1, n) or (n < len(name) and match(p, n + 1))
        return n < len(name) and pattern[p] in ("?", name[n]) and match(p + 1, n + 1)

    return match(0, 0)


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet="ab*?", max_size=10), st.text(alphabet="ab", max_size=12))
def test_the_linear_translation_matches_like_wildcards(pattern: str, name: str) -> None:
    regex = re.compile(_glob_segment_regex(pattern, star="[^/]*", dot_guard=False))
    assert (regex.fullmatch(name) is not None) == _reference(pattern, name)


def _finishes(work: Callable[[], object], seconds: float = 10) -> bool:
    """Whether ``work`` ends in ``seconds`` (a guard against hanging, far above its real cost)."""
    done = threading.Event()

    def run() -> None:
        work()
        done.set()

    threading.Thread(target=run, daemon=True).start()
    return done.wait(seconds)


def test_many_stars_do_not_backtrack_exponentially() -> None:
    rules = IgnoreRules()
    rules.add(["*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b"])
    assert _finishes(lambda: rules.ignores("a" * 200))
    assert not rules.ignores("a" * 200) and rules.ignores("a" * 14 + "b")
    assert _finishes(lambda: glob_match("a" * 200, "*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b"))


def test_brace_bombs_match_nothing() -> None:
    bomb = "{a,b}" * 30  # a billion alternatives
    assert _finishes(lambda: glob_match("ab" * 15, bomb))
    assert not glob_match("a" * 30, bomb)
    assert glob_match("ab", "{a,x}{b,y}") and not glob_match("ax", "{a,x}{b,y}")
