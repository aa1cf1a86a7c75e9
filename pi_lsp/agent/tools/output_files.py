"""The full-output files of truncated commands (``<tmp>/pi-bash-<16 hex>.log``): capped in size,
owned by the run that made them and removed with it.

pi writes every byte of a truncated command's output to such a file and keeps it forever; a
runaway command (``yes``) fills the disk at hundreds of MB a second. Here a file keeps the first
:data:`FULL_OUTPUT_MAX_BYTES` (the result already shows the output's last lines, so head and
tail are both at hand), ends with a note saying where it was cut, and the command goes on
running: the cap bounds the disk, not the command (its timeout and the abort do that).

Each file belongs to an :class:`OutputFiles`: the model's bash calls use their run's, removed
when the run ends (the result names the file so the model can read it during the run); the
user's own commands use :data:`SERVER_OUTPUT_FILES`. Whatever is left goes when the process exits.
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import os
import secrets
import tempfile

from pi_lsp.agent.tools.truncate import format_size

log = logging.getLogger(__name__)

FULL_OUTPUT_MAX_BYTES = 32 * 1024 * 1024

_LIVE: set[str] = set()  # every file made and not removed yet: removed at exit


def temp_output_path(prefix: str) -> str:
    return os.path.join(tempfile.gettempdir(), f"{prefix}-{secrets.token_hex(8)}.log")


def cap_note(limit: int) -> bytes:
    """The line a capped file ends with."""
    return (
        f"\n[Output file limit of {format_size(limit)} reached: the rest of the output was not saved "
        "here. The end of the output is in the command's result.]\n"
    ).encode()


class CappedFile:
    """A new file (created exclusively, mode 0600: command output may hold secrets) that takes
    bytes until ``limit``, cut after the last whole line that fits, then the cap note."""

    def __init__(self, path: str, limit: int) -> None:
        self.path = path
        self.limit = limit
        self.capped = False
        self.written = 0
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
        self._handle: int | None = fd

    def write(self, data: bytes) -> None:
        if self._handle is None or not data:
            return
        note = cap_note(self.limit)
        room = self.limit - len(note) - self.written
        if len(data) <= room:
            self._write(data)
            return
        cut = data.rfind(b"\n", 0, room) + 1 or max(room, 0)
        self._write(data[:cut])
        self._write(note)
        self.capped = True
        self.close()

    def close(self) -> None:
        if self._handle is not None:
            with contextlib.suppress(OSError):
                os.close(self._handle)
            self._handle = None

    def _write(self, data: bytes) -> None:
        if self._handle is None:
            return
        try:
            view = memoryview(data)
            while view:
                count = os.write(self._handle, view)
                view = view[count:]
                self.written += count
        except OSError as error:  # a full disk: the result still shows the output's end
            log.warning("could not write %s: %s", self.path, error)
            self.close()


class OutputFiles:
    """The full-output files of one owner (a run, or the server): removed together."""

    def __init__(self) -> None:
        self._paths: list[str] = []

    def create(self, prefix: str) -> CappedFile:
        while True:
            path = temp_output_path(prefix)
            try:
                file = CappedFile(path, FULL_OUTPUT_MAX_BYTES)
            except FileExistsError:
                continue
            self._paths.append(path)
            _LIVE.add(path)
            return file

    @property
    def paths(self) -> list[str]:
        return list(self._paths)

    def remove_all(self) -> None:
        for path in self._paths:
            _remove(path)
        self._paths.clear()


def _remove(path: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(path)
    _LIVE.discard(path)


@atexit.register
def _remove_live_files() -> None:
    for path in list(_LIVE):
        _remove(path)


SERVER_OUTPUT_FILES = OutputFiles()
"""The owner of files no run owns (the user's ``!cmd``): they live until the process exits."""
