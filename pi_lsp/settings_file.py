"""Reading one of pi's ``settings.json`` files, the way pi reads it, for every part that needs one.

pi reads ``<agentDir>/settings.json`` (global) and ``<cwd>/.pi/settings.json`` (project). A missing
or empty file is no settings; an unreadable file, invalid JSON or a non-object counts as ``{}`` too,
with a problem the caller reports (the prompt as a diagnostic, the server in its log). A JSON array
is ignored silently, as pi does. A workspace controls its ``.pi/settings.json``: it is read with the
bounded reader (:mod:`pi_lsp.safe_io`), so a FIFO, a device or a huge file is a problem, not a hang.
"""

from __future__ import annotations

import json
import os
from typing import Any

from pi_lsp.safe_io import MAX_SETTINGS_BYTES, read_error_message, read_text

CONFIG_DIR_NAME = ".pi"
SETTINGS_FILE = "settings.json"


def project_settings_path(cwd: str) -> str:
    """``<cwd>/.pi/settings.json``."""
    return os.path.normpath(os.path.join(cwd, CONFIG_DIR_NAME, SETTINGS_FILE))


def global_settings_path(agent_dir: str) -> str:
    """``<agentDir>/settings.json``."""
    return os.path.normpath(os.path.join(agent_dir, SETTINGS_FILE))


def read_settings_file(path: str) -> tuple[dict[str, Any], str | None]:
    """The file's settings object and, when it could not be used, why (one sentence)."""
    try:
        content = read_text(path, MAX_SETTINGS_BYTES)
    except FileNotFoundError:
        return {}, None
    except OSError as error:
        return {}, read_error_message(error, path)
    if not content:
        return {}, None
    try:
        data = json.loads(content)
    except ValueError as error:
        return {}, f"invalid JSON: {error}"
    if isinstance(data, dict):
        return data, None
    return {}, None if isinstance(data, list) else "settings must be a JSON object"
