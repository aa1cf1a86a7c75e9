"""Key positions in a JSON text, for diagnostics placed on a settings key."""

from __future__ import annotations

from pathlib import Path

from pi_lsp.prompt.diagnostics import WARNING, settings_file_diagnostics
from pi_lsp.prompt.json_keys import KeySpan, json_key_spans


def test_nested_keys_escapes_and_arrays() -> None:
    text = (
        "{\n"
        '  "tools": ["a", {"inArray": 1}],\n'
        '  "retry": {"enabled": true, "provider": {"maxRetries": 9}, "maxRetries": 2},\n'
        '  "q\\"k": "v,\\"{", "é": 1, "shellCommandPrefix": "x"\n'
        "}"
    )
    spans = json_key_spans(text)
    assert spans[("retry", "provider", "maxRetries")] == KeySpan(2, 42, 54)
    assert spans[("retry", "maxRetries")] == KeySpan(2, 60, 72)
    assert spans[('q"k',)] == KeySpan(3, 2, 8)
    assert spans[("shellCommandPrefix",)] == KeySpan(3, 27, 47)
    assert not any("inArray" in key for key in spans)


def test_broken_json_gives_the_keys_before_the_break() -> None:
    found = json_key_spans('{"a": 1, "b": "unterminated\n, "c": 2}')
    assert found == {("a",): KeySpan(0, 1, 4), ("b",): KeySpan(0, 9, 12)}
    assert json_key_spans("") == {}


def test_settings_diagnostics_sit_on_the_key_in_utf16_columns(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text('{"😀": 1,\r\n "shellPath": "/x"}\n')
    [on_key, fallback] = settings_file_diagnostics(
        str(path), [(("shellPath",), "ignored"), (("missing",), "also ignored")]
    )
    assert on_key["range"] == {"start": {"line": 1, "character": 1}, "end": {"line": 1, "character": 12}}
    assert on_key["severity"] == WARNING and on_key["message"] == "ignored"
    assert fallback["range"]["start"] == {"line": 0, "character": 0}
    assert settings_file_diagnostics(str(path), []) == []
