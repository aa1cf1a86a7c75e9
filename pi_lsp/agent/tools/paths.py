"""How a tool turns the model's path argument into a file: pi's ``@`` prefix, Unicode spaces, ``~``."""

from __future__ import annotations

import os
import re
import unicodedata

_UNICODE_SPACES = re.compile("[\u00a0\u2000-\u200a\u202f\u205f\u3000]")
_AM_PM = re.compile(r" (AM|PM)\.", re.IGNORECASE)


def expand_path(path: str) -> str:
    """Drop one leading ``@`` (models copy it from mentions), plain spaces, then ``~`` / ``~/``."""
    if path.startswith("@"):
        path = path[1:]
    path = _UNICODE_SPACES.sub(" ", path)
    home = os.path.expanduser("~")
    if path == "~":
        return home
    if path.startswith("~/"):
        return home + path[1:]
    return path


def resolve_to_cwd(path: str, cwd: str) -> str:
    """Absolute, normalised path: relative paths are taken from the session's cwd."""
    expanded = expand_path(path)
    if os.path.isabs(expanded):
        return expanded
    return os.path.normpath(os.path.join(cwd, expanded))


def resolve_read_path(path: str, cwd: str) -> str:
    """Like :func:`resolve_to_cwd`, also trying the spellings macOS uses in screenshot names."""
    resolved = resolve_to_cwd(path, cwd)
    if os.path.exists(resolved):
        return resolved
    nfd = unicodedata.normalize("NFD", resolved)
    for variant in (
        _AM_PM.sub(lambda m: f"\u202f{m.group(1)}.", resolved),
        nfd,
        resolved.replace("'", "\u2019"),
        nfd.replace("'", "\u2019"),
    ):
        if variant != resolved and os.path.exists(variant):
            return variant
    return resolved
