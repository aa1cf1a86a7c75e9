"""Sorting names as pi's ``ls`` does: ``a.toLowerCase().localeCompare(b.toLowerCase())``.

Node compares with ICU's root collation (en-US here), which orders punctuation before digits
before letters and ignores accents until everything else is equal. Printable ASCII gets ICU's
exact order (taken from node); other characters sort by their unaccented base letter and then
by code point — the same as ICU for accented Latin letters, an approximation beyond that.
"""

from __future__ import annotations

import unicodedata

# Lower-case printable ASCII in ICU root order (node: chars.sort((a, b) => a.localeCompare(b))).
_ICU_ASCII_ORDER = " _-,;:!?.'\"()[]{}@*/\\&#%`^+<=>|~$0123456789abcdefghijklmnopqrstuvwxyz"
_RANK = {char: rank for rank, char in enumerate(_ICU_ASCII_ORDER)}
_OTHER = len(_ICU_ASCII_ORDER)


def _weights(char: str) -> tuple[int, int]:
    """(primary, secondary) for one character of a lower-cased name."""
    rank = _RANK.get(char)
    if rank is not None:
        return rank, 0
    decomposed = unicodedata.normalize("NFD", char)
    base = _RANK.get(decomposed[0])
    if base is not None and len(decomposed) > 1:
        return base, ord(decomposed[1])
    return _OTHER + ord(char), 0


def collation_key(name: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
    weights = [_weights(char) for char in name.lower()]
    return tuple(p for p, _ in weights), tuple(s for _, s in weights)


def sort_names(names: list[str]) -> list[str]:
    """Names in pi's ls order: directory listing order (byte order, as libuv gives it) for ties."""
    return sorted(sorted(names), key=collation_key)
