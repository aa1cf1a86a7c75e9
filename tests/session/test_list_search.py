"""The picker search matches what its definition says: every word and every quoted phrase is a
substring of the session's text lowercased with whitespace runs collapsed to one space. The fast
path (words in the lowercased text, phrases as words with any whitespace between) must agree."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from pi_lsp.session.list_search import search_sessions
from pi_lsp.session.listing import SessionInfo

_QUOTED = re.compile(r'"([^"]*)"')


def _by_definition(info: SessionInfo, query: str) -> bool:
    """The picker's rule as stated (slow: collapses the whole text for each needle)."""
    query = query.strip()
    balanced = query.count('"') % 2 == 0
    phrases = [" ".join(p.lower().split()) for p in _QUOTED.findall(query)] if balanced else []
    rest = _QUOTED.sub(" ", query) if phrases else query
    needles = [p for p in phrases if p] + [word.lower() for word in rest.split()]
    text = " ".join(info.haystack().lower().split())
    return all(needle in text for needle in needles)


def _info(index: int, text: str, name: str | None) -> SessionInfo:
    return SessionInfo(
        path=f"/s/{index}.jsonl",
        id=f"id{index}",
        cwd="/proj",
        name=name,
        parent_session_path=None,
        created="",
        modified="",
        modified_ms=0.0,
        message_count=1,
        first_message=text,
        messages_text=text.encode("utf-8", "surrogatepass"),
    )


# Letters with case (Greek final sigma, dotted I), Unicode whitespace, quotes and regex syntax.
_ALPHABET = st.sampled_from(list("abAB ΣσςİıK\t\n\r\u00a0\u2003\u3000\u2028\"'.*(\\"))
_TEXT = st.text(_ALPHABET, max_size=30)


@settings(max_examples=300, deadline=None)
@given(
    texts=st.lists(st.tuples(_TEXT, st.none() | _TEXT), min_size=1, max_size=5),
    queries=st.lists(_TEXT, min_size=1, max_size=6),
)
def test_search_agrees_with_its_definition(texts: list[tuple[str, str | None]], queries: list[str]) -> None:
    """Query after query on the same infos (what they remember of earlier queries must not leak),
    and each query typed one character at a time."""
    infos = [_info(index, text, name) for index, (text, name) in enumerate(texts)]
    for query in queries:
        if query.strip().startswith("re:"):
            continue
        for typed in [query[:end] for end in range(1, len(query) + 1)]:
            expected = [info for info in infos if not typed.strip() or _by_definition(info, typed)]
            assert search_sessions(infos, typed) == expected, typed


def test_phrases_span_any_whitespace_and_words_any_case() -> None:
    infos = [
        _info(0, "Fix the\u00a0\n  Parser bug", None),
        _info(1, "fix theparser", None),
        _info(2, "parser fix", "The Name"),
    ]
    assert [i.id for i in search_sessions(infos, '"fix the parser"')] == ["id0"]
    assert [i.id for i in search_sessions(infos, '"ix th"')] == ["id0", "id1"]
    assert [i.id for i in search_sessions(infos, "PARSER fix")] == ["id0", "id1", "id2"]
    assert [i.id for i in search_sessions(infos, '"the name" parser')] == ["id2"]
    assert [i.id for i in search_sessions(infos, '"(x"')] == []
