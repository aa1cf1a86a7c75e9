"""What an ``initialize`` request tells the server about its client, read from the plain params.

Both the start-up phase (before pygls is imported) and pygls' ``initialize`` handler call
:func:`apply_initialize`; applying the same params twice leaves the client as once.
"""

from __future__ import annotations

import logging
from typing import Any

from pi_lsp.paths import uri_to_path, usable_path
from pi_lsp.service.registry import Client

log = logging.getLogger(__name__)


def _uri_path(uri: Any) -> str | None:
    return uri_to_path(uri) if isinstance(uri, str) and uri else None


def workspace_folders(params: dict[str, Any]) -> list[str]:
    """Every workspace folder, else ``[rootUri]``, else ``[rootPath]``, else none; one that cannot be a
    path (NUL, lone surrogate) is left out with a warning: ``initialize`` is answered before it is
    read, so the server works without it instead of failing every request."""
    folders = params.get("workspaceFolders")
    if isinstance(folders, list) and folders:
        paths = [_uri_path(f.get("uri")) for f in folders if isinstance(f, dict)]
    else:
        root_path = params.get("rootPath")
        paths = [_uri_path(params.get("rootUri")) or (root_path if isinstance(root_path, str) else None)]
    usable = []
    for path in paths:
        if path and not usable_path(path):
            log.warning("the workspace root %s is not a usable path; ignored", ascii(path))
        elif path:
            usable.append(path)
    return usable


def declares_approvals(params: dict[str, Any]) -> bool:
    """``capabilities.experimental.pi.approvals: true``."""
    capabilities = params.get("capabilities")
    experimental = capabilities.get("experimental") if isinstance(capabilities, dict) else None
    pi = experimental.get("pi") if isinstance(experimental, dict) else None
    return isinstance(pi, dict) and pi.get("approvals") is True


async def apply_initialize(client: Client, params: dict[str, Any]) -> None:
    """Workspace root, initialization options, approvals capability and the workspace's settings."""
    client.workspace_folders = workspace_folders(params)
    root = client.workspace_folders[0] if client.workspace_folders else None
    client.workspace_root = root
    client.settings.set_initialization_options(params.get("initializationOptions"))
    client.approvals = declares_approvals(params)
    await client.settings.set_cwd(root)  # the workspace's settings.json: read in a worker
