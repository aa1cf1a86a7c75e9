"""Streaming command output with bounded memory (pi's ``OutputAccumulator``).

Bytes are decoded as they come (a split UTF-8 character waits for its rest), only a tail of
about 100 KB of text is kept for display, and once the output passes a limit every raw byte so
far goes to a temporary file (``<tmp>/pi-bash-<16 hex>.log``) that the model is told about; that
file is capped and owned by an :class:`~pi_lsp.agent.tools.output_files.OutputFiles`.
"""

from __future__ import annotations

import codecs
from typing import Any

from pi_lsp.agent.tools.output_files import SERVER_OUTPUT_FILES, CappedFile, OutputFiles
from pi_lsp.agent.tools.truncate import (
    DEFAULT_MAX_BYTES,
    DEFAULT_MAX_LINES,
    Truncation,
    truncate_tail,
    utf8_len,
)


class OutputAccumulator:
    def __init__(
        self,
        temp_prefix: str = "pi-bash",
        max_lines: int = DEFAULT_MAX_LINES,
        max_bytes: int = DEFAULT_MAX_BYTES,
        files: OutputFiles = SERVER_OUTPUT_FILES,
    ) -> None:
        self.max_lines = max_lines
        self.max_bytes = max_bytes
        self._rolling = max(max_bytes * 2, 1)
        self._prefix = temp_prefix
        self._files = files
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self._raw_chunks: list[bytes] = []
        self._tail = ""
        self._tail_bytes = 0
        self._tail_at_line_start = True
        self._raw_bytes = 0
        self._decoded_bytes = 0
        self.total_lines = 1
        self.last_line_bytes = 0
        self._finished = False
        self.temp_path: str | None = None
        self._temp: CappedFile | None = None

    def append(self, data: bytes) -> None:
        self._raw_bytes += len(data)
        self._add_text(self._decoder.decode(data))
        if self._temp is not None or self._needs_file():
            self._ensure_file()
            assert self._temp is not None
            self._temp.write(data)
        elif data:
            self._raw_chunks.append(data)

    def finish(self) -> None:
        if self._finished:
            return
        self._finished = True
        self._add_text(self._decoder.decode(b"", final=True))
        if self._needs_file():
            self._ensure_file()

    def snapshot(self, persist_if_truncated: bool = False) -> tuple[str, Truncation, str | None]:
        """(visible text, truncation record, full output path)."""
        tail = truncate_tail(self._snapshot_text(), self.max_lines, self.max_bytes)
        truncated = self.total_lines > self.max_lines or self._decoded_bytes > self.max_bytes
        by = None
        if truncated:
            by = tail["truncatedBy"] or ("bytes" if self._decoded_bytes > self.max_bytes else "lines")
        record: dict[str, Any] = dict(tail)
        record.update(
            truncated=truncated,
            truncatedBy=by,
            totalLines=self.total_lines,
            totalBytes=self._decoded_bytes,
            maxLines=self.max_lines,
            maxBytes=self.max_bytes,
        )
        if persist_if_truncated and truncated:
            self._ensure_file()
        return record["content"], record, self.temp_path

    @property
    def file_cap(self) -> int | None:
        """The full-output file's size limit once reached (it then holds the output's head)."""
        return self._temp.limit if self._temp is not None and self._temp.capped else None

    def close(self) -> None:
        if self._temp is not None:
            self._temp.close()

    def _add_text(self, text: str) -> None:
        if not text:
            return
        size = utf8_len(text)
        self._decoded_bytes += size
        self._tail += text
        self._tail_bytes += size
        if self._tail_bytes > self._rolling * 2:
            self._trim_tail()
        newlines = text.count("\n")
        if newlines == 0:
            self.last_line_bytes += size
        else:
            self.total_lines += newlines
            self.last_line_bytes = utf8_len(text[text.rindex("\n") + 1 :])

    def _trim_tail(self) -> None:
        data = self._tail.encode("utf-8", "surrogatepass")
        if len(data) <= self._rolling:
            self._tail_bytes = len(data)
            return
        start = len(data) - self._rolling
        while start < len(data) and (data[start] & 0xC0) == 0x80:
            start += 1
        self._tail_at_line_start = data[start - 1] == 0x0A if start else self._tail_at_line_start
        self._tail = data[start:].decode("utf-8", "replace")
        self._tail_bytes = utf8_len(self._tail)

    def _snapshot_text(self) -> str:
        if self._tail_at_line_start:
            return self._tail
        newline = self._tail.find("\n")
        return self._tail if newline == -1 else self._tail[newline + 1 :]

    def _needs_file(self) -> bool:
        return (
            self._raw_bytes > self.max_bytes
            or self._decoded_bytes > self.max_bytes
            or self.total_lines > self.max_lines
        )

    def _ensure_file(self) -> None:
        if self.temp_path is not None:
            return
        self._temp = self._files.create(self._prefix)
        self.temp_path = self._temp.path
        for chunk in self._raw_chunks:
            self._temp.write(chunk)
        self._raw_chunks = []
