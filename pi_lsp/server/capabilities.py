"""The ``initialize`` result, importable without pygls or lsprotocol.

The stdio transport answers ``initialize`` with this before the LSP machinery has finished
importing (that import alone takes ~0.4 s), and the protocol returns the same value afterwards, so
every transport reports identical capabilities. ``experimental.pi`` tells clients which contract
methods this build implements and which are reserved for later.
"""

from __future__ import annotations

from typing import Any

from pi_lsp import __version__
from pi_lsp.server.reserved import RESERVED_METHODS

PROTOCOL_VERSION = 2
IMPLEMENTED_METHODS = (
    "pi/newSession",
    "pi/openSession",
    "pi/continueRecent",
    "pi/listSessions",
    "pi/forkSession",
    "pi/branchToNewSession",
    "pi/getSessionState",
    "pi/closeSession",
    "pi/appendEntry",
    "pi/getEntry",
    "pi/getEntries",
    "pi/getBranch",
    "pi/getTree",
    "pi/setLeaf",
    "pi/navigate",
    "pi/setLabel",
    "pi/setSessionName",
    "pi/buildContext",
    "pi/prepareCompaction",
    "pi/compact",
    "pi/getSystemPrompt",
    "pi/listSkills",
    "pi/prompt",
    "pi/abort",
    "pi/clearQueue",
    "pi/getRunState",
    "pi/listModels",
    "pi/setModel",
    "pi/getSessionStats",
    "pi/getCommands",
    "pi/bash",
    "pi/setApiKey",
    "pi/previewRestore",
    "pi/restoreFiles",
    "pi/undoRestore",
    "pi/getChanges",
    "pi/getServerStatus",
)
NOTIFICATIONS = (
    "pi/sessionChanged",
    "pi/compactionStarted",
    "pi/compactionEnded",
    "pi/systemPromptChanged",
    "pi/event",
)


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
                    "methods": list(IMPLEMENTED_METHODS),
                    "reservedMethods": list(RESERVED_METHODS),
                    "notifications": list(NOTIFICATIONS),
                    "getTreeFormats": ["nested", "flat"],
                    # Additive options (pi-lsp's own) so clients can tell this server supports them.
                    "getTreeOptions": ["parentId", "fold"],
                    "getBranchOptions": ["limit", "beforeId"],
                }
            },
        },
        "serverInfo": {"name": "pi-lsp", "version": __version__},
    }
