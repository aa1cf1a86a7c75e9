"""What the method declarations share: the common params and results, the docs' area names.

``methods.py`` and ``run_methods.py`` build every declaration from these, so a shared param (the
optional ``session``) is spelled once.
"""

from __future__ import annotations

from pi_lsp.protocol.common import (
    ENTRY,
    ID,
    NULLABLE_ID,
    RESTORE_RESULT,
)
from pi_lsp.protocol.enums import (
    STOP_REASON,
)
from pi_lsp.protocol.shapes import (
    BOOLEAN,
    NUMBER,
    STRING,
    Array,
    Method,
    Obj,
    Type,
    obj,
    opt,
    req,
)

PROTOCOL_VERSION = 3  # contract v3: checkpoints and reviewed edits are served

SESSION = opt("session", ID, "the session id; default: the connection's active session")
EMPTY = obj(name="Empty")
FILES = Array(STRING)
PATHS = opt("paths", Array(STRING), "only these paths (relative to the session's cwd)")
RESTORE_OPTIONS = (
    opt("restoreFiles", BOOLEAN, "v3: then restore the workspace to the new leaf's state"),
    opt("force", BOOLEAN, "v3: overwrite conflicting files too"),
)
LEAF_RESULT = (req("leafId", NULLABLE_ID), opt("restored", RESTORE_RESULT, "v3, with `restoreFiles`"))
ID_RESULT = obj(req("id", ID))
ENTRIES = Array(ENTRY)


def method(
    area: str, name: str, params: Obj, result: Type, doc: str = "", *, since: int = 1, addition: bool = False
) -> Method:
    """A declared ``pi/<name>`` request."""
    return Method(f"pi/{name}", params, result, area, doc, since, addition)


SESSIONS = "Sessions"
TREE = "Entries and the tree"
CONTEXT = "Context"
COMPACTION = "Compaction"
PROMPT = "System prompt, context files and skills"
CHAT = "Chat: agent runs"
CHECKPOINTS = "Checkpoints"
STATUS = "Server status"

COMPACT_RESULT = obj(
    req("entryId", ID),
    req("summary", STRING),
    req("firstKeptEntryId", NULLABLE_ID),
    req("tokensBefore", NUMBER),
    req("tokensAfter", NUMBER),
    req("details", obj(req("readFiles", FILES), req("modifiedFiles", FILES))),
    req("summarizer", STRING, "`anthropic:<model>` or `offline`"),
    name="CompactResult",
)
RUN_RESULT = obj(
    req("userEntryId", NULLABLE_ID),
    req("entryIds", Array(ID)),
    req("stopReason", STOP_REASON),
    opt("errorMessage", STRING),
    name="RunResult",
)
