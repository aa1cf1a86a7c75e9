"""Paths as clients send them: ``file:`` URIs, ``~``, and paths relative to the workspace.

The one place that turns what an editor sends into a file system path (and back), for session
params, prompt params, workspace folders and watched-file events alike.
"""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import unquote, urlparse

from pi_lsp.agent_dir import expand_home


def file_uri_path(uri: str) -> str | None:
    """The normalised file system path of a ``file:`` URI; None for other schemes (``untitled:``)."""
    if not uri.startswith("file:"):
        return None
    return os.path.normpath(unquote(urlparse(uri).path))


def uri_to_path(uri: str) -> str:
    """The path of a ``file:`` URI; anything else (a plain path) is returned as it is."""
    path = file_uri_path(uri)
    return uri if path is None else path


def usable_path(path: str) -> bool:
    """Whether ``path`` can be handed to the OS at all: no NUL character and no lone UTF-16
    surrogate (JSON lets a client send both; either makes every file call raise)."""
    if "\x00" in path:
        return False
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def path_to_uri(path: str) -> str:
    """A ``file://`` URI for an absolute path (ValueError for a relative one)."""
    return Path(path).as_uri()


def resolve_client_path(value: str, base: str) -> str:
    """A client's path param as an absolute normalised path: ``file:`` URIs decoded, ``~``
    expanded, relative paths taken from ``base`` (the client's workspace root)."""
    path = expand_home(uri_to_path(value))
    if not os.path.isabs(path):
        path = os.path.join(base, path)
    return os.path.normpath(path)
