"""Every client → server request of the contract: name, params, result, and where it is documented.

The order is the server's ``initialize`` order (``experimental.pi.methods``), so adding a method
here is what makes the server announce it; ``server/handlers.py`` must then have its handler.
"""

from __future__ import annotations

from pi_lsp.protocol.common import (
    AGENT_MESSAGE,
    ANY_ID,
    APPROVAL_REQUEST,
    ASSISTANT_MESSAGE,
    CHILD_TREE_NODE,
    CONTEXT_USAGE,
    ENTRY,
    FLAT_TREE_NODE,
    ID,
    MODEL_INFO,
    MODEL_REF,
    NULLABLE_ID,
    PATH_DIAGNOSTIC,
    PROMPT_SOURCE,
    QUEUE,
    RESTORE_RESULT,
    RESTORED_FILE,
    RUNNING_TOOL,
    SESSION_INFO,
    SESSION_STATE,
    SKILL,
    TREE_NODE,
    TREE_SEGMENT,
)
from pi_lsp.protocol.enums import (
    API_KEY_SOURCE,
    APPROVAL_POLICY,
    CHANGE_KIND,
    COMMAND_SOURCE,
    COMPACTION_REASON,
    RESTORE_CHANGE,
    STOP_REASON,
    STREAMING_BEHAVIOR,
    SUMMARIZER_SETTING,
    THINKING_LEVEL,
    TOKENIZER,
    TREE_FORMAT,
    WATCH_BACKEND,
)
from pi_lsp.protocol.shapes import (
    BOOLEAN,
    INTEGER,
    NUMBER,
    STRING,
    Array,
    Literal,
    Method,
    Obj,
    Type,
    nullable,
    obj,
    one_of,
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


def _m(
    area: str, name: str, params: Obj, result: Type, doc: str = "", *, since: int = 1, addition: bool = False
) -> Method:
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
    req("tokensAfter", nullable(NUMBER)),
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

METHODS: tuple[Method, ...] = (
    # ---------------------------------------------------------------------------- sessions
    _m(
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
    _m(
        SESSIONS,
        "openSession",
        obj(req("path", STRING)),
        SESSION_STATE,
        "migrates v1/v2 files atomically; a missing or empty `.jsonl` path becomes a new session",
    ),
    _m(
        SESSIONS,
        "continueRecent",
        obj(opt("cwd", STRING)),
        SESSION_STATE,
        "the most recent session of that cwd, else a new one",
    ),
    _m(
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
    _m(
        SESSIONS,
        "forkSession",
        obj(req("sourcePath", STRING), opt("cwd", STRING)),
        SESSION_STATE,
        "a copy of every branch of the source (pi `forkFrom`)",
    ),
    _m(
        SESSIONS,
        "branchToNewSession",
        obj(SESSION, req("entryId", ID)),
        SESSION_STATE,
        "a new file holding the path to `entryId` (pi `createBranchedSession`)",
    ),
    _m(SESSIONS, "getSessionState", obj(SESSION), SESSION_STATE),
    _m(SESSIONS, "closeSession", obj(SESSION), EMPTY),
    # ---------------------------------------------------------------------------- entries
    _m(
        TREE,
        "appendEntry",
        obj(SESSION, req("entry", ENTRY)),
        obj(req("id", ID), req("entry", ENTRY)),
        "the server assigns `id`, `parentId` (the leaf) and `timestamp`; the leaf moves to it",
    ),
    _m(TREE, "getEntry", obj(SESSION, req("id", ID)), obj(req("entry", ENTRY))),
    _m(
        TREE,
        "getEntries",
        obj(SESSION, opt("offset", INTEGER), opt("limit", INTEGER)),
        obj(req("entries", ENTRIES), req("total", INTEGER)),
        "file order",
    ),
    _m(
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
    _m(
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
    _m(
        TREE,
        "setLeaf",
        obj(SESSION, req("id", NULLABLE_ID, "null: before the first entry"), *RESTORE_OPTIONS),
        obj(*LEAF_RESULT),
    ),
    _m(
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
    _m(
        TREE,
        "setLabel",
        obj(SESSION, req("targetId", ID), opt("label", nullable(STRING))),
        ID_RESULT,
        "the label entry is appended at the leaf and becomes the leaf",
    ),
    _m(
        TREE,
        "setSessionName",
        obj(SESSION, req("name", STRING)),
        ID_RESULT,
        "a `session_info` entry, appended and made the leaf",
    ),
    # ---------------------------------------------------------------------------- context
    _m(
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
    _m(
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
    _m(
        COMPACTION,
        "compact",
        obj(SESSION, opt("customInstructions", STRING), opt("workDoneToken", ANY_ID)),
        COMPACT_RESULT,
        "`$/progress` with a token; cancellable; on failure nothing is written",
    ),
    # ---------------------------------------------------------------------------- prompt
    _m(
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
    _m(
        PROMPT,
        "listSkills",
        obj(opt("cwd", STRING)),
        obj(req("skills", Array(SKILL)), req("diagnostics", Array(PATH_DIAGNOSTIC))),
    ),
    # ---------------------------------------------------------------------------- chat
    _m(
        CHAT,
        "prompt",
        obj(
            SESSION,
            req("text", STRING),
            opt("images", Array(obj(req("data", STRING), req("mimeType", STRING)))),
            opt("streamingBehavior", STREAMING_BEHAVIOR),
        ),
        one_of(RUN_RESULT, obj(req("queued", STREAMING_BEHAVIOR))),
        "starts a run and answers when it ends; with `streamingBehavior` during a run, queues",
        since=2,
    ),
    _m(CHAT, "abort", obj(SESSION), obj(req("aborted", BOOLEAN)), "stops the active run", since=2),
    _m(CHAT, "clearQueue", obj(SESSION), QUEUE, "the queued texts, now dropped", since=2),
    _m(
        CHAT,
        "getRunState",
        obj(SESSION),
        obj(
            req("running", BOOLEAN),
            req("seq", INTEGER),
            opt("partial", ASSISTANT_MESSAGE),
            req("tools", Array(RUNNING_TOOL)),
            req("queue", QUEUE),
            req("pendingApprovals", Array(APPROVAL_REQUEST)),
            opt("compaction", obj(req("reason", COMPACTION_REASON)), "addition: a compaction is running"),
            name="RunState",
        ),
        "everything a client needs to draw a run it joins late",
        since=2,
    ),
    _m(
        CHAT,
        "listModels",
        EMPTY,
        obj(
            req("models", Array(MODEL_INFO)),
            req(
                "current",
                obj(req("provider", STRING), req("modelId", STRING), req("thinkingLevel", THINKING_LEVEL)),
            ),
            opt("hasApiKey", BOOLEAN, "addition: whether the server found an Anthropic key"),
        ),
        since=2,
    ),
    _m(
        CHAT,
        "setModel",
        obj(SESSION, opt("modelId", STRING), opt("thinkingLevel", THINKING_LEVEL)),
        obj(req("model", MODEL_REF), req("thinkingLevel", THINKING_LEVEL), req("entryIds", Array(ID))),
        "appends `model_change` / `thinking_level_change` only for what changed",
        since=2,
    ),
    _m(
        CHAT,
        "getSessionStats",
        obj(SESSION),
        obj(
            req("userMessages", INTEGER),
            req("assistantMessages", INTEGER),
            req("toolCalls", INTEGER),
            req("toolResults", INTEGER),
            req("totalMessages", INTEGER),
            req(
                "tokens",
                obj(
                    req("input", NUMBER),
                    req("output", NUMBER),
                    req("cacheRead", NUMBER),
                    req("cacheWrite", NUMBER),
                    req("total", NUMBER),
                ),
            ),
            req("cost", NUMBER),
            req("contextUsage", CONTEXT_USAGE),
            name="SessionStats",
        ),
        since=2,
    ),
    _m(
        CHAT,
        "getCommands",
        obj(SESSION, opt("cwd", STRING)),
        obj(
            req(
                "commands",
                Array(
                    obj(
                        req("name", STRING),
                        opt("description", nullable(STRING)),
                        req("source", COMMAND_SOURCE),
                        opt("path", nullable(STRING)),
                        name="SlashCommand",
                    )
                ),
            )
        ),
        "what a user can type after `/`",
        since=2,
    ),
    _m(
        CHAT,
        "bash",
        obj(SESSION, req("command", STRING), opt("excludeFromContext", BOOLEAN)),
        obj(
            req("output", STRING),
            req("exitCode", nullable(INTEGER)),
            req("cancelled", BOOLEAN),
            req("truncated", BOOLEAN),
            req("entryId", NULLABLE_ID),
            name="ShellResult",
        ),
        "the user's own shell command (pi's `!cmd`)",
        since=2,
    ),
    # ---------------------------------------------------------------------------- checkpoints
    _m(
        CHECKPOINTS,
        "previewRestore",
        obj(SESSION, req("targetId", ID), PATHS, opt("diff", BOOLEAN)),
        obj(
            req("targetId", ID),
            req(
                "files",
                Array(
                    obj(
                        req("path", STRING),
                        req("change", RESTORE_CHANGE),
                        req("conflict", BOOLEAN),
                        opt("diff", STRING),
                    )
                ),
            ),
        ),
        "what restoring to `targetId` would do now; writes nothing",
        since=3,
    ),
    _m(
        CHECKPOINTS,
        "restoreFiles",
        obj(SESSION, req("targetId", ID), PATHS, opt("force", BOOLEAN)),
        RESTORE_RESULT,
        "the workspace in the state of `targetId`; the leaf does not move",
        since=3,
    ),
    _m(
        CHECKPOINTS,
        "undoRestore",
        obj(SESSION, req("undoId", STRING)),
        obj(req("restored", Array(RESTORED_FILE)), req("conflicts", Array(STRING))),
        "puts back what that restore changed",
        since=3,
    ),
    _m(
        CHECKPOINTS,
        "getChanges",
        obj(
            SESSION,
            opt("fromId", NULLABLE_ID),
            opt("toId", NULLABLE_ID),
            PATHS,
            opt("diff", BOOLEAN),
        ),
        obj(
            req("fromId", NULLABLE_ID),
            req("toId", NULLABLE_ID),
            req("files", Array(obj(req("path", STRING), req("change", CHANGE_KIND), opt("diff", STRING)))),
        ),
        "what changed in the workspace between two points of the tree",
        since=3,
    ),
    # ---------------------------------------------------------------------------- status
    _m(
        STATUS,
        "getServerStatus",
        EMPTY,
        obj(
            req("version", STRING),
            req("protocolVersion", INTEGER),
            req("apiKey", obj(req("found", BOOLEAN), req("source", nullable(API_KEY_SOURCE)))),
            req("tokenizer", TOKENIZER),
            req("summarizer", SUMMARIZER_SETTING),
            req("approval", APPROVAL_POLICY),
            req(
                "watching",
                obj(req("backend", nullable(WATCH_BACKEND)), req("roots", FILES), req("files", FILES)),
            ),
            name="ServerStatus",
        ),
        "for editors' health checks",
        addition=True,
    ),
)

BY_NAME: dict[str, Method] = {method.name: method for method in METHODS}
