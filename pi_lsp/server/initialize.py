"""What an ``initialize`` request tells the server about its client, read from the plain params.

Both the start-up phase (before pygls is imported) and pygls' ``initialize`` handler call
:func:`apply_initialize`; applying the same params twice leaves the client as once.
"""

from __future__ import annotations

from typing import Any

from pi_lsp.paths import uri_to_path
from pi_lsp.service.registry import Client


def _uri_path(uri: Any) -> str | None:
    return uri_to_path(uri) if isinstance(uri, str) and uri else None


def workspace_root(params: dict[str, Any]) -> str | None:
    """The first workspace folder, else ``rootUri``, else ``rootPath``."""
    folders = params.get("workspaceFolders")
    if isinstance(folders, list) and folders and isinstance(folders[0], dict):
        return _uri_path(folders[0].get("uri"))
    root_path = params.get("rootPath")
    return _uri_path(params.get("rootUri")) or (root_path if isinstance(root_path, str) else None)


def declares_approvals(params: dict[str, Any]) -> bool:
    """``capabilities.experimental.pi.approvals: true``."""
    capabilities = params.get("capabilities")
    experimental = capabilities.get("experimental") if isinstance(capabilities, dict) else None
    pi = experimental.get("pi") if isinstance(experimental, dict) else None
    return isinstance(pi, dict) and pi.get("approvals") is True


async def apply_initialize(client: Client, params: dict[str, Any]) -> None:
    """Workspace root, initialization options, approvals capability and the workspace's settings."""
    root = workspace_root(params)
    client.workspace_root = root
    client.settings.set_initialization_options(params.get("initializationOptions"))
    client.approvals = declares_approvals(params)
    await client.settings.set_cwd(root)  # the workspace's settings.json: read in a worker
