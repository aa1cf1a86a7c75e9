"""Logging for the server: stderr (never stdout, which carries the protocol) or a file, with API
keys redacted from every record whatever logged it (pygls logs request params on errors)."""

from __future__ import annotations

import logging
import sys

from pi_lsp.secrets import RedactingFilter

LEVELS = ("debug", "info", "warning", "error")


def configure_logging(level: str = "info", log_file: str | None = None) -> None:
    numeric = getattr(logging, level.upper(), logging.INFO)
    handler: logging.Handler = (
        logging.FileHandler(log_file, encoding="utf-8") if log_file else logging.StreamHandler(sys.stderr)
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
