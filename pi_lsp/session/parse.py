"""pi's module-level parsing helpers (``parseSessionEntries``, ``loadEntriesFromFile``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pi_lsp.regular_files import open_regular
from pi_lsp.session.jsonl import loads_line, split_lines


def parse_session_entries(content: str | bytes) -> list[dict[str, Any]]:
    """Every parseable JSON object line, in order; blank and malformed lines skipped."""
    data = content.encode() if isinstance(content, str) else content
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]  # JS's trim() removes a leading U+FEFF
    out: list[dict[str, Any]] = []
    for raw in split_lines(data.strip()):
        try:
            value = loads_line(raw.data)
        except ValueError:
            continue
        if isinstance(value, dict):
            out.append(value)
    return out


def load_entries_from_file(path: Path | str) -> list[dict[str, Any]]:
    """Parsed objects (header included) when the first one is a valid header, else ``[]``."""
    try:
        with open_regular(path) as handle:
            data = handle.read()
    except OSError:
        return []
    entries = parse_session_entries(data)
    if not entries:
        return []
    header = entries[0]
    if header.get("type") != "session" or not isinstance(header.get("id"), str):
        return []
    return entries
