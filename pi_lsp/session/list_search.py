"""The session picker's query: ``re:<regex>``, ``"quoted phrases"`` and words, all must match.

Matching is case-insensitive over each session's id, name, message text and cwd, with runs of
whitespace counting as one space. Words are looked up in the lowercased UTF-8 text each SessionInfo
keeps once made (a search as you type over a cached folder then costs one substring scan per
session); a phrase is its words with any whitespace between them, the same thing as a substring
of the whitespace-collapsed text, without collapsing megabytes of text for every query.
"""

from __future__ import annotations

import re
import time

from pi_lsp.session.errors import SearchTimeoutError
from pi_lsp.session.listing import SessionInfo, utf8

# A regex search of the picker gives up after this many seconds (all sessions together).
REGEX_TIME_LIMIT = 2.0
_QUOTED = re.compile(r'"([^"]*)"')
# What str.split() splits at (Py_UNICODE_ISSPACE), as UTF-8: one run of it between a phrase's words.
UNICODE_WHITESPACE = "\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680" + "".join(
    chr(code) for code in (*range(0x2000, 0x200B), 0x2028, 0x2029, 0x202F, 0x205F, 0x3000)
)
_WHITESPACE_RUN = b"(?:" + b"|".join(re.escape(utf8(char)) for char in UNICODE_WHITESPACE) + b")+"


def search_sessions(
    infos: list[SessionInfo], query: str | None, time_limit: float = REGEX_TIME_LIMIT
) -> list[SessionInfo]:
    """Filter by a picker query: ``re:<regex>``, ``"quoted phrases"`` and words (all must match).

    Order is kept. A regex search stops after ``time_limit`` seconds in all (SearchTimeoutError).
    """
    if not query or not query.strip():
        return infos
    query = query.strip()
    if query.startswith("re:"):
        return _regex_search(infos, query[3:], time_limit)
    balanced = query.count('"') % 2 == 0
    phrases = [p.lower().split() for p in _QUOTED.findall(query)] if balanced else []
    rest = _QUOTED.sub(" ", query) if phrases else query
    words = [word.lower() for word in rest.split()]
    # A one-word phrase is a word; longer ones match their words separated by any whitespace.
    # A phrase's words are each in the text too: checked first, as words.
    words += [word for phrase in phrases for word in phrase if word not in words]
    patterns = [
        re.compile(_WHITESPACE_RUN.join(re.escape(utf8(word)) for word in phrase))
        for phrase in phrases
        if len(phrase) > 1
    ]
    needles = [(word, utf8(word)) for word in words]
    return [info for info in infos if _matches(info, needles, patterns)]


def prepare_search(infos: list[SessionInfo]) -> None:
    """Make the lowercased text of each info now (a listing was shown; typing will follow), so
    the first keystroke does not pay for it (~0.2 s for a folder holding 20 MB of text)."""
    for info in infos:
        info.lowered_haystack()


def _matches(info: SessionInfo, words: list[tuple[str, bytes]], patterns: list[re.Pattern[bytes]]) -> bool:
    return all(info.has_word(word, encoded) for word, encoded in words) and all(
        pattern.search(info.lowered_haystack()) for pattern in patterns
    )


def _regex_search(infos: list[SessionInfo], source: str, time_limit: float) -> list[SessionInfo]:
    """The sessions whose text ``source`` matches, with a time bound: a backtracking pattern
    (``(a|aa)+$``) would otherwise hold a worker, and the interpreter lock, for hours. The
    ``regex`` module checks a timeout while it matches and releases the lock (``concurrent``)."""
    if not source:
        return []
    import regex  # 15 ms to import: only a `re:` query loads it, not the server start

    try:
        pattern = regex.compile(source, regex.IGNORECASE)
    except regex.error:
        return []
    deadline = time.monotonic() + time_limit
    found: list[SessionInfo] = []
    for info in infos:
        remaining = deadline - time.monotonic()
        try:
            if remaining <= 0:
                raise TimeoutError
            if pattern.search(info.haystack(), concurrent=True, timeout=remaining):
                found.append(info)
        except TimeoutError:
            raise SearchTimeoutError(
                f"the regular expression took longer than {time_limit:g} s to search the sessions; "
                "simplify it"
            ) from None
    return found
