"""Every client → server request of the contract: name, params, result, and where it is documented.

The order is the server's ``initialize`` order (``experimental.pi.methods``), so adding a method
here is what makes the server announce it; ``server/handlers.py`` must then have its handler.
"""

from __future__ import annotations

from pi_lsp.protocol.common import (
    AGENT_MESSAGE,
    ANY_ID,
    CHILD_TREE_NODE,
    CONTEXT_USAGE,
    ENTRY,
    FLAT_TREE_NODE,
    ID,
    MODEL_REF,
    NULLABLE_ID,
    PATH_DIAGNOSTIC,
    PROMPT_SOURCE,
    SESSION_INFO,
    SESSION_STATE,
    SKILL,
    TREE_NODE,
    TREE_SEGMENT,
)
from pi_lsp.protocol.enums import (
    TREE_FORMAT,
)
from pi_lsp.protocol.method_parts import (
    COMPACT_RESULT,
    COMPACTION,
    CONTEXT,
    EMPTY,
    ENTRIES,
    FILES,
    ID_RESULT,
    LEAF_RESULT,
    PROMPT,
    RESTORE_OPTIONS,
    SESSION,
    SESSIONS,
    TREE,
    method,
)
from pi_lsp.protocol.method_parts import PROTOCOL_VERSION as PROTOCOL_VERSION
from pi_lsp.protocol.run_methods import RUN_METHODS
from pi_lsp.protocol.shapes import (
    BOOLEAN,
    INTEGER,
    NUMBER,
    STRING,
    Array,
    Literal,
    Method,
    nullable,
    obj,
    one_of,
    opt,
    req,
)

METHODS: tuple[Method, ...] = (
    # ---------------------------------------------------------------------------- sessions
    method(
        SESSIONS,
        "newSession",
        obj(
            opt("cwd", STRING),
            opt("sessionDir", STRING),
            opt("parentSession", STRING),
            opt("id", STRING, "part of the file name"),
            opt("persist", BOOLEAN, "default true"),
        ),
        SESSION_STATE,
        "a new, empty session; it becomes active",
    ),
    method(
        SESSIONS,
        "openSession",
        obj(req("path", STRING)),
        SESSION_STATE,
        "migrates v1/v2 files atomically; a missing or empty `.jsonl` path becomes a new session",
    ),
    method(
        SESSIONS,
        "continueRecent",
        obj(opt("cwd", STRING)),
        SESSION_STATE,
        "the most recent session of that cwd, else a new one",
    ),
    method(
        SESSIONS,
        "listSessions",
        obj(
            opt("cwd", STRING),
            opt("all", BOOLEAN),
            opt("query", STRING),
            opt("limit", INTEGER),
        ),
        obj(req("sessions", Array(SESSION_INFO))),
        "newest `modified` first",
    ),
    method(
        SESSIONS,
        "forkSession",
        obj(req("sourcePath", STRING), opt("cwd", STRING)),
        SESSION_STATE,
        "a copy of every branch of the source (pi `forkFrom`)",
    ),
    method(
        SESSIONS,
        "branchToNewSession",
        obj(SESSION, req("entryId", ID)),
        SESSION_STATE,
        "a new file holding the path to `entryId` (pi `createBranchedSession`)",
    ),
    method(SESSIONS, "getSessionState", obj(SESSION), SESSION_STATE),
    method(SESSIONS, "closeSession", obj(SESSION), EMPTY),
    # ---------------------------------------------------------------------------- entries
    method(
        TREE,
        "appendEntry",
        obj(SESSION, req("entry", ENTRY)),
        obj(req("id", ID), req("entry", ENTRY)),
        "the server assigns `id`, `parentId` (the leaf) and `timestamp`; the leaf moves to it",
    ),
    method(TREE, "getEntry", obj(SESSION, req("id", ID)), obj(req("entry", ENTRY))),
    method(
        TREE,
        "getEntries",
        obj(SESSION, opt("offset", INTEGER), opt("limit", INTEGER)),
        obj(req("entries", ENTRIES), req("total", INTEGER)),
        "file order",
    ),
    method(
        TREE,
        "getBranch",
        obj(
            SESSION,
            opt("fromId", NULLABLE_ID),
            opt("limit", INTEGER, "addition: one page"),
            opt("beforeId", ID, "addition: the page before this entry"),
        ),
        obj(
            req("entries", ENTRIES), opt("hasMore", BOOLEAN, "with `limit` or `beforeId`"), name="BranchPage"
        ),
        "root first",
    ),
    method(
        TREE,
        "getTree",
        obj(
            SESSION,
            opt("format", TREE_FORMAT),
            opt("parentId", NULLABLE_ID, "addition: one level"),
            opt("fold", BOOLEAN, "addition: linear chains folded into segments"),
        ),
        one_of(
            obj(req("leafId", NULLABLE_ID), req("roots", Array(TREE_NODE)), name="NestedTree"),
            obj(
                req("leafId", NULLABLE_ID),
                req("format", Literal("flat")),
                req("rootIds", Array(NULLABLE_ID)),
                req("nodes", Array(FLAT_TREE_NODE)),
                name="FlatTree",
            ),
            obj(
                req("leafId", NULLABLE_ID),
                req("parentId", NULLABLE_ID),
                req("children", Array(CHILD_TREE_NODE)),
                name="TreeLevel",
            ),
            obj(
                req("leafId", NULLABLE_ID),
                req("format", Literal("folded")),
                req("rootIds", Array(NULLABLE_ID)),
                req("leafSegmentId", NULLABLE_ID),
                req("segments", Array(TREE_SEGMENT)),
                name="FoldedTree",
            ),
        ),
        "children ordered as pi orders them",
    ),
    method(
        TREE,
        "setLeaf",
        obj(SESSION, req("id", NULLABLE_ID, "null: before the first entry"), *RESTORE_OPTIONS),
        obj(*LEAF_RESULT),
    ),
    method(
        TREE,
        "navigate",
        obj(
            SESSION,
            req("targetId", ID),
            opt("summarize", BOOLEAN),
            opt("customInstructions", STRING),
            opt("replaceInstructions", BOOLEAN),
            opt("label", STRING),
            *RESTORE_OPTIONS,
        ),
        obj(*LEAF_RESULT, opt("editorText", STRING), opt("summaryEntryId", ID), name="NavigateResult"),
        "pi `navigateTree`",
    ),
    method(
        TREE,
        "setLabel",
        obj(SESSION, req("targetId", ID), opt("label", nullable(STRING))),
        ID_RESULT,
        "the label entry is appended at the leaf and becomes the leaf",
    ),
    method(
        TREE,
        "setSessionName",
        obj(SESSION, req("name", STRING)),
        ID_RESULT,
        "a `session_info` entry, appended and made the leaf",
    ),
    # ---------------------------------------------------------------------------- context
    method(
        CONTEXT,
        "buildContext",
        obj(SESSION, opt("leafId", NULLABLE_ID)),
        obj(
            req("messages", Array(AGENT_MESSAGE)),
            req("thinkingLevel", STRING),
            req("model", nullable(MODEL_REF)),
            req("usage", CONTEXT_USAGE),
        ),
        "pi's `buildSessionContext`; does not move the leaf",
    ),
    method(
        COMPACTION,
        "prepareCompaction",
        obj(SESSION, opt("keepRecentTokens", NUMBER)),
        obj(
            req("firstKeptEntryId", NULLABLE_ID),
            req("isSplitTurn", BOOLEAN),
            req("tokensBefore", NUMBER),
            req("summarizeCount", INTEGER),
            req("turnPrefixCount", INTEGER),
            req("readFiles", FILES),
            req("modifiedFiles", FILES),
            req("hasPreviousSummary", BOOLEAN),
            name="CompactionPlan",
        ),
        "a dry run of pi's `prepareCompaction`; writes nothing",
    ),
    method(
        COMPACTION,
        "compact",
        obj(SESSION, opt("customInstructions", STRING), opt("workDoneToken", ANY_ID)),
        COMPACT_RESULT,
        "`$/progress` with a token; cancellable; on failure nothing is written",
    ),
    # ---------------------------------------------------------------------------- prompt
    method(
        PROMPT,
        "getSystemPrompt",
        obj(
            SESSION,
            opt("cwd", STRING),
            opt("tools", Array(STRING)),
            opt("customPrompt", STRING),
            opt("appendPrompt", STRING),
        ),
        obj(
            req("text", STRING),
            req("tokens", NUMBER),
            req("sources", Array(PROMPT_SOURCE)),
            req("skills", Array(SKILL)),
            req("diagnostics", Array(PATH_DIAGNOSTIC)),
            name="SystemPromptResult",
        ),
        "byte-equal to the prompt pi sends for that cwd",
    ),
    method(
        PROMPT,
        "listSkills",
        obj(opt("cwd", STRING)),
        obj(req("skills", Array(SKILL)), req("diagnostics", Array(PATH_DIAGNOSTIC))),
    ),
    *RUN_METHODS,
)

BY_NAME: dict[str, Method] = {method.name: method for method in METHODS}
