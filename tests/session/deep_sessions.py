"""Session files whose values nest thousands of levels deep (the session and server tests of deep lines)."""

from __future__ import annotations

from pathlib import Path

HEADER = '{"type":"session","version":3,"id":"deep-1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/proj"}'


def deep_session(path: Path, depth: int, shape: str = "[]") -> Path:
    """Header, a custom entry and a user message each holding a value nested ``depth`` deep, a reply."""
    opener, closer = shape
    nested = opener * depth + closer * depth if shape == "[]" else '{"a":' * depth + "1" + "}" * depth
    lines = [
        HEADER,
        '{"type":"custom","customType":"x","data":'
        + nested
        + ',"id":"d1","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z"}',
        '{"type":"message","id":"d2","parentId":"d1","timestamp":"2026-01-01T00:00:00.001Z","message":'
        '{"role":"user","content":[{"type":"text","text":"deep"}],"deep":' + nested + ',"timestamp":1}}',
        '{"type":"message","id":"d3","parentId":"d2","timestamp":"2026-01-01T00:00:00.002Z","message":'
        '{"role":"user","content":"after","timestamp":2}}',
    ]
    path.write_text("\n".join(lines) + "\n")
    return path
