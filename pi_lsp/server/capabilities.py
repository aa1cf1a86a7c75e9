"""The ``initialize`` result, importable without pygls or lsprotocol.

The stdio transport answers ``initialize`` with this before the LSP machinery has finished
importing (that import alone takes ~0.4 s), and the protocol returns the same value afterwards, so
every transport reports identical capabilities. ``experimental.pi`` tells clients which contract
methods this build implements: the protocol source's (``pi_lsp/protocol``), never a list kept here.
"""

from __future__ import annotations

from typing import Any

from pi_lsp import __version__
from pi_lsp.protocol import METHOD_NAMES, NOTIFICATION_NAMES, PROTOCOL_VERSION

# The contract's field for methods a build names but does not serve yet; none today (every declared
# method has a handler), kept because clients read it.
RESERVED_METHODS: tuple[str, ...] = ()


def initialize_result() -> dict[str, Any]:
    return {
        "capabilities": {
            "positionEncoding": "utf-16",
            # Open editor buffers, so the agent's tools never overwrite unsaved changes (documents.py).
            "textDocumentSync": {"openClose": True, "change": 2, "save": {"includeText": False}},
            "hoverProvider": True,  # token counts of prompt files (pi_lsp/server/prompt_features.py)
            "workspace": {"workspaceFolders": {"supported": True, "changeNotifications": True}},
            "experimental": {
                "pi": {
                    "protocolVersion": PROTOCOL_VERSION,
                    "methods": list(METHOD_NAMES),
                    "reservedMethods": list(RESERVED_METHODS),
                    "notifications": list(NOTIFICATION_NAMES),
                    "getTreeFormats": ["nested", "flat"],
                    # Additive options (pi-lsp's own) so clients can tell this server supports them.
                    "getTreeOptions": ["parentId", "fold"],
                    "getBranchOptions": ["limit", "beforeId"],
                }
            },
        },
        "serverInfo": {"name": "pi-lsp", "version": __version__},
    }
