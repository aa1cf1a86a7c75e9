"""The request's conversion: lone surrogates dropped (with a fast path for text that has none), and
the converted history cached per stored entry giving the same request bytes as no cache."""

from __future__ import annotations

import random

from pi_lsp.llm.convert import _LONE_SURROGATE, sanitize_surrogates


def test_lone_surrogates_are_dropped_and_pairs_kept() -> None:
    assert sanitize_surrogates("plain ascii") == "plain ascii"
    assert sanitize_surrogates("café ünïcode — ok") == "café ünïcode — ok"
    assert sanitize_surrogates("rocket \ud83d\ude80 ok") == "rocket \ud83d\ude80 ok"  # a pair, as JSON gives
    assert sanitize_surrogates("bad \ud800 high") == "bad  high"
    assert sanitize_surrogates("bad \udc00 low") == "bad  low"
    assert sanitize_surrogates("\ude80\ud83d") == ""  # reversed: both lone


def test_the_fast_path_agrees_with_the_pattern_on_random_text() -> None:
    rng = random.Random(7)
    alphabet = ["a", " ", "é", "—", "😀", "\ud83d", "\ude00", "\ud800", "\udfff", "\n"]
    for _ in range(2000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12)))
        assert sanitize_surrogates(text) == _LONE_SURROGATE.sub("", text), ascii(text)
