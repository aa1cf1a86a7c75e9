"""pi's module-level parsing helpers (``parseSessionEntries``, ``loadEntriesFromFile``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pi_lsp.regular_files import open_regular
from pi_lsp.session.jsonl import iter_lines, loads_line, split_lines
from pi_lsp.session.loader import UTF8_BOM as _BOM


def parse_session_entries(content: str | bytes) -> list[dict[str, Any]]:
    """Every parseable JSON object line, in order; blank and malformed lines skipped."""
    data = content.encode() if isinstance(content, str) else content
    if data.startswith(_BOM):
        data = data[len(_BOM) :]  # JS's trim() removes a leading U+FEFF
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
    """Parsed objects (header included) when the first one is a valid header, else ``[]``. The
    file is read a line at a time: a line over MAX_LINE_BYTES is skipped unread, as a malformed
    one is."""
    out: list[dict[str, Any]] = []
    try:
        with open_regular(path) as handle:
            for number, line in enumerate(iter_lines(handle)):
                if line is None:
                    continue
                if number == 0 and line.startswith(_BOM):
                    line = line[len(_BOM) :]  # JS's trim() removes a leading U+FEFF
                try:
                    value = loads_line(line)
                except ValueError:
                    continue
                if isinstance(value, dict):
                    out.append(value)
    except OSError:
        return []
    if not out:
        return []
    header = out[0]
    if header.get("type") != "session" or not isinstance(header.get("id"), str):
        return []
    return out
