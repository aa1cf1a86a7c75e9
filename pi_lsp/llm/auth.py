"""The Anthropic API key: one an editor handed over (``pi/setApiKey``, kept in memory only), else
``$ANTHROPIC_API_KEY``, else pi's credential file ``<agentDir>/auth.json``.

pi stores credentials per provider in ``auth.json``::

    {"anthropic": {"type": "api_key", "key": "sk-ant-..."}}

where ``key`` is either the key itself or the name of an environment variable holding it (pi's
``resolveConfigValue``). pi also accepts ``"!command"`` keys (run through a shell) and OAuth
logins (``"type": "oauth"``); this server runs no shell commands from configuration and does not
speak Anthropic's OAuth flow, so those entries are skipped with a log line.

The key found is registered as a secret, so it is redacted from every log record and error text.
It is never logged, echoed or written anywhere.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

import orjson

from pi_lsp.agent_dir import agent_dir
from pi_lsp.secrets import register_secret

log = logging.getLogger(__name__)

API_KEY_ENV = "ANTHROPIC_API_KEY"
AUTH_FILE = "auth.json"
PROVIDER = "anthropic"
EDITOR_SOURCE = "editor"
_warned: set[str] = set()
# A key an editor handed over (VS Code keeps it in its SecretStorage): this process's memory only,
# never a file, so a shared server's state file and logs never see it. It wins over the others:
# setting one is the user's explicit act, and takes effect without a restart.
_editor_key: str | None = None


def set_editor_api_key(key: str | None) -> None:
    """Use ``key`` from now on (None or empty: forget it, and fall back to the usual sources)."""
    global _editor_key
    _editor_key = key.strip() if key and key.strip() else None
    register_secret(_editor_key)


def _warn_once(key: str, message: str, *args: object) -> None:
    if key not in _warned:
        _warned.add(key)
        log.warning(message, *args)


def key_from_auth_file(path: Path) -> str | None:
    """The Anthropic key stored in a pi ``auth.json``, or None."""
    try:
        data = orjson.loads(path.read_bytes())
    except FileNotFoundError:
        return None
    except (OSError, orjson.JSONDecodeError) as error:
        _warn_once(str(path), "ignoring %s: %s", path, type(error).__name__)
        return None
    credential = data.get(PROVIDER) if isinstance(data, dict) else None
    if not isinstance(credential, dict):
        return None
    kind = credential.get("type")
    if kind == "oauth":
        _warn_once(f"{path}:oauth", "%s holds an Anthropic OAuth login, which pi-lsp cannot use", path)
        return None
    value = credential.get("key")
    if kind != "api_key" or not isinstance(value, str) or not value.strip():
        return None
    value = value.strip()
    if value.startswith("!"):
        _warn_once(f"{path}:command", "%s: command-based keys are not run by pi-lsp", path)
        return None
    return os.environ.get(value) or value


def _find_key(directory: Path | None) -> tuple[str, str] | None:
    """The key and where it was found (``editor``, the variable's name or ``auth.json``), or None."""
    if _editor_key:
        return _editor_key, EDITOR_SOURCE
    key = os.environ.get(API_KEY_ENV, "").strip()
    if key:
        return key, API_KEY_ENV
    key = key_from_auth_file((directory or agent_dir()) / AUTH_FILE) or ""
    if key:
        return key, AUTH_FILE
    return None


def anthropic_api_key(directory: Path | None = None) -> str | None:
    """``$ANTHROPIC_API_KEY``, else the key in ``<agentDir>/auth.json``; None when neither exists."""
    found = _find_key(directory)
    if found is None:
        return None
    register_secret(found[0])
    return found[0]


def anthropic_api_key_source(directory: Path | None = None) -> str | None:
    """Where the key would come from (``ANTHROPIC_API_KEY`` or ``auth.json``), never the key itself:
    for health reports that must say whether a key is set without showing it."""
    found = _find_key(directory)
    return found[1] if found is not None else None
