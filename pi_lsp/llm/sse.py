"""Server-sent events as the Messages API streams them: the body's lines, then the events.

Lines end at ``\\n``, ``\\r\\n`` or a lone ``\\r``, and nowhere else (the SSE standard, and what
pi's SDK splits on). httpx's ``aiter_lines`` splits as ``str.splitlines`` does, also at U+2028,
U+0085, U+001C and other characters JSON may carry unescaped inside a string, which would cut a
``data:`` line of a reply holding one. Splitting the bytes here also skips two of httpx's decoding
layers per chunk (a streamed reply is one chunk per delta).
"""

from __future__ import annotations

from dataclasses import dataclass, field

Frame = tuple[str | None, str, list[str]]
"""An event: its name (None when it had no ``event:`` line), its data lines joined, its raw lines."""


class SseLines:
    """Splits a body arriving in chunks into its lines (UTF-8, a bad byte replaced), without their
    ends: ``feed`` each chunk, then ``end`` gives a last line that had no end."""

    def __init__(self) -> None:
        self._held = b""

    def feed(self, chunk: bytes) -> list[str]:
        data = self._held + chunk if self._held else chunk
        tail = b""
        if b"\r" in data:
            if data.endswith(b"\r"):  # perhaps the first half of \r\n: decided by the next chunk
                data, tail = data[:-1], b"\r"
            data = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        lines = data.split(b"\n")
        self._held = lines.pop() + tail
        return [line.decode("utf-8", "replace") for line in lines]

    def end(self) -> list[str]:
        held, self._held = self._held, b""
        return [held.removesuffix(b"\r").decode("utf-8", "replace")] if held else []  # no line end inside


@dataclass
class SseState:
    """Folds lines into events: an empty line ends one; comments (``:``) are kept only as raw lines."""

    event: str | None = None
    data: list[str] = field(default_factory=list)
    raw: list[str] = field(default_factory=list)

    def flush(self) -> Frame | None:
        if self.event is None and not self.data:
            return None
        data = self.data[0] if len(self.data) == 1 else "\n".join(self.data)
        result = (self.event, data, self.raw)
        self.event, self.data, self.raw = None, [], []
        return result

    def feed(self, line: str) -> Frame | None:
        if line == "":
            return self.flush()
        self.raw.append(line)
        if line.startswith(":"):
            return None
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if name == "event":
            self.event = value
        elif name == "data":
            self.data.append(value)
        return None
