"""The chat, checkpoint and status requests (contracts v2 and v3, and pi-lsp's own status)."""

from __future__ import annotations

from pi_lsp.protocol.common import (
    APPROVAL_REQUEST,
    ASSISTANT_MESSAGE,
    CONTEXT_USAGE,
    ID,
    MODEL_INFO,
    MODEL_REF,
    NULLABLE_ID,
    QUEUE,
    RESTORE_RESULT,
    RESTORED_FILE,
    RUNNING_TOOL,
)
from pi_lsp.protocol.enums import (
    API_KEY_SOURCE,
    APPROVAL_POLICY,
    CHANGE_KIND,
    COMMAND_SOURCE,
    COMPACTION_REASON,
    RESTORE_CHANGE,
    STREAMING_BEHAVIOR,
    SUMMARIZER_SETTING,
    THINKING_LEVEL,
    TOKENIZER,
    WATCH_BACKEND,
)
from pi_lsp.protocol.method_parts import (
    CHAT,
    CHECKPOINTS,
    EMPTY,
    FILES,
    PATHS,
    RUN_RESULT,
    SESSION,
    STATUS,
    method,
)
from pi_lsp.protocol.shapes import (
    BOOLEAN,
    INTEGER,
    NUMBER,
    STRING,
    Array,
    Method,
    nullable,
    obj,
    one_of,
    opt,
    req,
)

RUN_METHODS: tuple[Method, ...] = (
    # ---------------------------------------------------------------------------- chat
    method(
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
    method(CHAT, "abort", obj(SESSION), obj(req("aborted", BOOLEAN)), "stops the active run", since=2),
    method(CHAT, "clearQueue", obj(SESSION), QUEUE, "the queued texts, now dropped", since=2),
    method(
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
    method(
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
            opt("agentDir", STRING, "addition: pi's agent dir of this server (where auth.json lives)"),
        ),
        since=2,
    ),
    method(
        CHAT,
        "setApiKey",
        obj(req("apiKey", nullable(STRING))),
        obj(req("hasApiKey", BOOLEAN)),
        "the editor's key (from its secret store) for this server process, in memory only; null forgets it",
        addition=True,
    ),
    method(
        CHAT,
        "setModel",
        obj(SESSION, opt("modelId", STRING), opt("thinkingLevel", THINKING_LEVEL)),
        obj(req("model", MODEL_REF), req("thinkingLevel", THINKING_LEVEL), req("entryIds", Array(ID))),
        "appends `model_change` / `thinking_level_change` only for what changed",
        since=2,
    ),
    method(
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
    method(
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
    method(
        CHAT,
        "bash",
        obj(SESSION, req("command", STRING), opt("excludeFromContext", BOOLEAN)),
        obj(
            req("output", STRING),
            req(
                "exitCode", nullable(INTEGER), "null when the shell was killed by a signal, as pi reports it"
            ),
            req("cancelled", BOOLEAN),
            req("truncated", BOOLEAN),
            req("entryId", NULLABLE_ID),
            name="ShellResult",
        ),
        "the user's own shell command (pi's `!cmd`)",
        since=2,
    ),
    # ---------------------------------------------------------------------------- checkpoints
    method(
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
    method(
        CHECKPOINTS,
        "restoreFiles",
        obj(SESSION, req("targetId", ID), PATHS, opt("force", BOOLEAN)),
        RESTORE_RESULT,
        "the workspace in the state of `targetId`; the leaf does not move",
        since=3,
    ),
    method(
        CHECKPOINTS,
        "undoRestore",
        obj(SESSION, req("undoId", STRING)),
        obj(req("restored", Array(RESTORED_FILE)), req("conflicts", Array(STRING))),
        "puts back what that restore changed",
        since=3,
    ),
    method(
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
    method(
        STATUS,
        "getServerStatus",
        EMPTY,
        obj(
            req("version", STRING),
            req("protocolVersion", INTEGER),
            req("apiKey", obj(req("found", BOOLEAN), req("source", nullable(API_KEY_SOURCE)))),
            req("baseUrl", nullable(STRING), "where model calls go (ANTHROPIC_BASE_URL); null: Anthropic's"),
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
