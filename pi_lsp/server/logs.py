"""Logging for the server: stderr (never stdout, which carries the protocol) or a file, with API
keys redacted from every record whatever logged it (pygls logs request params on errors).

A log file is private: at ``--log-level debug`` it holds every message, so conversation text and
file contents. It is created 0600; an existing regular file of ours is tightened to 0600, one that
belongs to another user is refused (they could read what we append). Anything that is not a
regular file (``/dev/stderr``, a FIFO) is the user's explicit choice and is used as it is."""

from __future__ import annotations

import logging
import os
import stat
import sys
from typing import TextIO

from pi_lsp.secrets import RedactingFilter

LEVELS = ("debug", "info", "warning", "error")

LOG_FILE_MODE = 0o600


class LogFileError(OSError):
    """The log file cannot be kept private (it belongs to another user)."""


def open_log_file(path: str) -> TextIO:
    """``path`` opened for appending, readable by its owner (us) only; raises OSError."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, LOG_FILE_MODE)
    try:
        info = os.fstat(fd)
        if stat.S_ISREG(info.st_mode):
            if info.st_uid != os.geteuid():
                raise LogFileError(f"{path} belongs to another user, who could read the log; not used")
            if stat.S_IMODE(info.st_mode) & 0o077:
                os.fchmod(fd, LOG_FILE_MODE)
        return os.fdopen(fd, "a", encoding="utf-8")
    except BaseException:
        os.close(fd)
        raise


class PrivateFileHandler(logging.FileHandler):
    """A FileHandler (which the prompt watcher recognises, to ignore the log's own changes) whose
    file is opened by :func:`open_log_file`."""

    def _open(self) -> TextIO:  # type: ignore[override]
        return open_log_file(self.baseFilename)


def configure_logging(level: str = "info", log_file: str | None = None) -> None:
    """Send the log to ``log_file`` (see :func:`open_log_file`; raises its OSError) or stderr."""
    numeric = getattr(logging, level.upper(), logging.INFO)
    handler: logging.Handler = (
        PrivateFileHandler(log_file, encoding="utf-8") if log_file else logging.StreamHandler(sys.stderr)
    )
    handler.addFilter(RedactingFilter())
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.handlers = [handler]
    root.setLevel(numeric)
    # pygls narrates every message at INFO; keep it for --log-level debug only.
    logging.getLogger("pygls").setLevel(
        numeric if numeric <= logging.DEBUG else max(numeric, logging.WARNING)
    )
    # watchdog narrates every file event at DEBUG, including those of the log file itself when it
    # lies in a watched folder: each line would cause the next (megabytes a second, idle). The
    # prompt watcher ignores the log file's events (pi_lsp.prompt.watch); this keeps the library quiet.
    logging.getLogger("watchdog").setLevel(max(numeric, logging.WARNING))
    # websockets narrates every frame at DEBUG (the conversation again, after pygls) and logs a
    # traceback for every malformed handshake it answers 4xx: its INFO lines say what happened.
    logging.getLogger("websockets").setLevel(max(numeric, logging.INFO))
