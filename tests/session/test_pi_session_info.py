"""pi's session info and search (behaviours 77–83). Not applicable here: 81 and 84–86 (relevance
sort and the name filter belong to the picker UI, not to ``search_sessions``) and 87–94 (TUI keys).

The numbers are session spec §6's (pi's own session-manager tests); the rules for where pi's
versions or ours differ are in ``test_pi_build_context.py``.
"""

from __future__ import annotations

from pathlib import Path

from pi_lsp.session import (
    SessionInfo,
    SessionManager,
    list_sessions,
    search_sessions,
)
from tests.session.helpers import (
    assistant_msg,
    file_lines,
    header,
    user_msg,
    write_jsonl,
)

# ---------------------------------------------------------------------------------------------
# session-info-modified-timestamp.test.ts


def test_77_modified_uses_last_message_timestamp(session_dir: Path) -> None:
    path = session_dir / "s.jsonl"
    write_jsonl(path, [{**header("s1"), "timestamp": "1970-01-01T00:00:00.000Z"}])
    before = path.read_bytes()
    manager = SessionManager.open(path)
    stamp = 1_767_225_600_123  # 2026-01-01T00:00:00.123Z
    manager.append_message(assistant_msg("done", timestamp=stamp))
    lines = file_lines(path)
    assert len(lines) == 2 and path.read_bytes().startswith(before)
    infos = list_sessions("/somewhere/else", session_dir)
    assert len(infos) == 1
    assert infos[0].modified == "2026-01-01T00:00:00.123Z"
    assert infos[0].modified_ms == stamp
    assert infos[0].message_count == 1


def test_77b_session_info_fields_and_name_clearing(session_dir: Path) -> None:
    """Delta §1: the last session_info in file order wins, an empty name clears it."""
    manager = SessionManager.create("/proj", session_dir)
    manager.append_message(user_msg("hello world"))
    manager.append_message(assistant_msg("hi"))
    manager.append_session_info("  Old name  ")
    assert manager.get_session_name() == "Old name"
    assert manager.get_entries()[-1]["name"] == "Old name"
    [info] = list_sessions("/proj", session_dir)
    assert (info.name, info.first_message, info.message_count, info.cwd) == (
        "Old name",
        "hello world",
        2,
        "/proj",
    )
    manager.append_session_info("")
    assert manager.get_session_name() is None
    [info] = list_sessions("/proj", session_dir)
    assert info.name is None


# ---------------------------------------------------------------------------------------------
# session-selector-search.test.ts, as far as search_sessions covers it (78–80, 82, 83)


def _info(session_id: str, text: str, modified_ms: float = 0.0, name: str | None = None) -> SessionInfo:
    return SessionInfo(
        path=f"/s/{session_id}.jsonl",
        id=session_id,
        cwd="/proj",
        name=name,
        parent_session_path=None,
        created="",
        modified="",
        modified_ms=modified_ms,
        message_count=1,
        first_message=text,
        messages_text=text.encode(),
    )


def test_78_quoted_phrase_with_whitespace_normalisation() -> None:
    infos = [_info("a", "node\n\n   cve was discussed"), _info("b", "node something cve")]
    assert [i.id for i in search_sessions(infos, '"node cve"')] == ["a"]


def test_79_regex_is_case_insensitive() -> None:
    infos = [_info("a", "Brave is great"), _info("b", "bravery is not brave-free"), _info("c", "nothing")]
    result = search_sessions(infos, r"re:\bbrave\b")
    assert [i.id for i in result] == ["a", "b"]  # "brave-free" has a word boundary after "brave"
    infos = [_info("a", "Brave is great"), _info("b", "bravery")]
    assert [i.id for i in search_sessions(infos, r"re:\bbrave\b")] == ["a"]


def test_80_filter_keeps_input_order() -> None:
    infos = [_info("c", "apple pie", 3), _info("a", "banana"), _info("b", "apple tart", 1)]
    assert [i.id for i in search_sessions(infos, "apple")] == ["c", "b"]


def test_80b_all_tokens_must_match() -> None:
    infos = [_info("a", "apple pie"), _info("b", "apple tart")]
    assert [i.id for i in search_sessions(infos, 'apple "pie"')] == ["a"]
    assert [i.id for i in search_sessions(infos, "APPLE tart")] == ["b"]


def test_82_invalid_regex_returns_empty() -> None:
    assert search_sessions([_info("a", "(")], "re:(") == []
    assert search_sessions([_info("a", "x")], "re:") == []


def test_83_empty_query_returns_all_in_order() -> None:
    infos = [_info("b", "x"), _info("a", "y")]
    assert search_sessions(infos, "") == infos
    assert search_sessions(infos, "   ") == infos
    assert search_sessions(infos, None) == infos
