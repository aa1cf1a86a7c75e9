"""API keys never leave the process: one registry of secrets and one redactor for every layer.

Everything that can reach a log, an error response, a notification or the terminal passes through
:func:`redact`: the values of the key environment variables, every key registered with
:func:`register_secret` (a key read from pi's ``auth.json``, a key handed to the Anthropic client),
anything shaped like an Anthropic key, and the value of ``x-api-key`` / ``Authorization`` headers.

Registering the first secret also installs a log-record factory that redacts records of the HTTP
stack and of pi-lsp as they are created. A factory rather than logger filters: filters do not apply
to records of child loggers (``httpcore2.http11`` logs raw request headers, i.e. the credential).
"""

from __future__ import annotations

import logging
import os
import re
from typing import Any, Final

REDACTED: Final = "[redacted]"
SECRET_ENV_VARS: Final = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")
MIN_SECRET_LENGTH: Final = 8

_SECRETS: set[str] = set()
_KEY_PATTERN = re.compile(r"sk-ant-[A-Za-z0-9_\-]+")
_HEADER_PATTERN = re.compile(r"(?i)(x-api-key|authorization)(['\"]?\s*[:=]\s*['\"]?)(bearer\s+)?[^\s'\",}]+")
_LOG_PREFIXES: Final = ("anthropic", "httpx", "httpcore", "pi_lsp")
_factory_installed = False


def register_secret(value: str | None) -> None:
    """Redact ``value`` from now on (short values are ignored: they would redact ordinary words)."""
    if value and len(value) >= MIN_SECRET_LENGTH:
        _SECRETS.add(value)
        _install_log_factory()


def redact(text: str) -> str:
    """``text`` with known credentials and anything key-shaped replaced by ``[redacted]``."""
    for name in SECRET_ENV_VARS:
        value = os.environ.get(name)
        if value and len(value) >= MIN_SECRET_LENGTH and value in text:
            text = text.replace(value, REDACTED)
    for value in tuple(_SECRETS):
        if value in text:
            text = text.replace(value, REDACTED)
    text = _KEY_PATTERN.sub(REDACTED, text)
    return _HEADER_PATTERN.sub(lambda m: m.group(1) + m.group(2) + REDACTED, text)


def redact_record(record: logging.LogRecord) -> None:
    """Redact a log record's message and traceback in place (the arguments are folded in)."""
    try:
        message = record.getMessage()
    except Exception:  # a broken record is not ours to fix; logging reports it later
        return
    if record.exc_info and record.exc_info[1] is not None and not record.exc_text:
        record.exc_text = logging.Formatter().formatException(record.exc_info)
    if record.exc_text:
        record.exc_text = redact(record.exc_text)
        record.exc_info = None
    cleaned = redact(message)
    if cleaned != message or record.args:
        record.msg, record.args = cleaned, None


class RedactingFilter(logging.Filter):
    """A handler filter for records created before any secret was registered (pygls logs params)."""

    def filter(self, record: logging.LogRecord) -> bool:
        redact_record(record)
        return True


def _install_log_factory() -> None:
    global _factory_installed
    if _factory_installed:
        return
    previous = logging.getLogRecordFactory()

    def factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
        record = previous(*args, **kwargs)
        if record.name.startswith(_LOG_PREFIXES):
            redact_record(record)
        return record

    logging.setLogRecordFactory(factory)
    _factory_installed = True
