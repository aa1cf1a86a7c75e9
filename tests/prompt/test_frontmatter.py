"""Frontmatter splitting and YAML 1.2 parsing (pi's frontmatter.test.ts plus the 1.1/1.2 gaps)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pi_lsp.prompt.frontmatter import (
    FrontmatterError,
    frontmatter_key_spans,
    parse_frontmatter,
    split_frontmatter,
    strip_frontmatter,
)


def test_parses_keys_strips_quotes_and_returns_body() -> None:
    text = "---\nname: \"skill-name\"\ndescription: 'A desc'\nfoo-bar: value\n---\n\nBody text"
    parsed = parse_frontmatter(text)
    assert parsed.data == {"name": "skill-name", "description": "A desc", "foo-bar": "value"}
    assert parsed.body == "Body text"


def test_normalizes_crlf_and_lone_cr() -> None:
    parsed = parse_frontmatter("---\r\nname: test\r\n---\r\nLine one\rLine two")
    assert parsed.data == {"name": "test"}
    assert parsed.body == "Line one\nLine two"


def test_invalid_yaml_raises_with_pi_position() -> None:
    with pytest.raises(FrontmatterError) as caught:
        parse_frontmatter("---\nfoo: [bar\n---\nBody")
    assert "at line 1, column 10" in caught.value.message
    assert caught.value.file_line == 1


def test_block_scalar_keeps_trailing_newline() -> None:
    parsed = parse_frontmatter("---\ndescription: |\n  Line one\n  Line two\n---\n\nBody")
    assert parsed.data == {"description": "Line one\nLine two\n"}
    assert parsed.body == "Body"


@pytest.mark.parametrize(
    "text", ["Just text\nno frontmatter", "---\nname: x\nno closing", "\ufeff---\na: 1\n---\n"]
)
def test_missing_or_unterminated_frontmatter_returns_the_text(text: str) -> None:
    parsed = parse_frontmatter(text)
    assert parsed.data == {}
    assert parsed.body == text


@pytest.mark.parametrize("text", ["---\n---\nBody", "---\n# only a comment\n---\nBody", "---\n~\n---\nBody"])
def test_empty_or_comment_only_frontmatter_is_empty(text: str) -> None:
    assert parse_frontmatter(text).data == {}


def test_strip_frontmatter_trims_only_with_frontmatter() -> None:
    assert strip_frontmatter("---\na: 1\n---\n\n  Body  \n") == "Body"
    assert strip_frontmatter("  plain body \n") == "  plain body \n"


@pytest.mark.parametrize("closer", ["\n----\nbody", "\n--- trailing\nbody", "\n---"])
def test_closing_delimiter_is_a_plain_prefix_match(closer: str) -> None:
    assert parse_frontmatter("---\na: b" + closer).data == {"a": "b"}


def test_yaml_12_core_schema_scalars() -> None:
    text = (
        "---\nyes_: yes\non_: on\ndate: 2024-01-02\noct: 0o17\nlead: 017\nhex: 0x1F\nexp: 1e3\n"
        "under: 1_000\nt: True\nf: FALSE\nn: Null\n<<: {a: 1}\n---\n"
    )
    assert parse_frontmatter(text).data == {
        "yes_": "yes",
        "on_": "on",
        "date": "2024-01-02",
        "oct": 15,
        "lead": 17,
        "hex": 31,
        "exp": 1000.0,
        "under": "1_000",
        "t": True,
        "f": False,
        "n": None,
        "<<": {"a": 1},
    }


def test_duplicate_keys_are_an_error_like_the_yaml_package() -> None:
    with pytest.raises(FrontmatterError) as caught:
        parse_frontmatter("---\nname: dup\ndescription: a\ndescription: b\n---\n")
    assert caught.value.message == (
        "Map keys must be unique at line 3, column 1:\n\ndescription: a\ndescription: b\n^\n"
    )
    assert caught.value.file_line == 3


def test_split_reports_where_the_yaml_starts() -> None:
    assert split_frontmatter("---\na: 1\n---\nbody") == ("a: 1", "body", 1)
    assert split_frontmatter("no") == (None, "no", 0)


def test_key_spans_point_at_top_level_keys() -> None:
    spans = frontmatter_key_spans("---\nname: x\n  # c\ndescription: >\n  folded\n---\n")
    assert (spans["name"].line, spans["name"].start, spans["name"].end) == (1, 0, 4)
    assert spans["description"].line == 3
    assert frontmatter_key_spans("---\n[bad\n---\n") == {}


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_any_text_parses_or_raises_frontmatter_error(body: str) -> None:
    for text in (body, "---\n" + body + "\n---\nrest"):
        try:
            parsed = parse_frontmatter(text)
        except FrontmatterError as error:
            assert error.message
        else:
            assert isinstance(parsed.body, str)
