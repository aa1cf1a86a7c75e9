"""The named types several methods share (the contract's "Types" section and its chat types).

pi's own records (entries, agent messages, tool results) are open objects: they travel exactly as
pi wrote them, unknown fields included, so only the fields clients rely on are declared.
"""

from __future__ import annotations

from pi_lsp.protocol.enums import (
    APPROVAL_DECISION,
    CHANGE_KIND,
    PROMPT_SOURCE_KIND,
    RESTORE_CHANGE,
    SEVERITY,
    SKILL_SOURCE,
    STOP_REASON,
)
from pi_lsp.protocol.shapes import (
    ANY,
    BOOLEAN,
    INTEGER,
    JSON_OBJECT,
    NUMBER,
    STRING,
    Array,
    Literal,
    Obj,
    Ref,
    nullable,
    obj,
    one_of,
    opt,
    req,
)

ID = STRING
NULLABLE_ID = nullable(STRING)

ENTRY = obj(
    req("type", STRING),
    opt("id", NULLABLE_ID),
    opt("parentId", NULLABLE_ID),
    opt("timestamp", STRING),
    name="Entry",
    open=True,
    doc="A session entry exactly as stored in the file (pi's JSONL format), unknown fields included",
)
AGENT_MESSAGE = obj(
    req("role", STRING),
    name="AgentMessage",
    open=True,
    doc="pi's AgentMessage (user, assistant, toolResult, bashExecution, custom, summaries)",
)
ASSISTANT_MESSAGE = obj(
    req("role", Literal("assistant")),
    req("content", Array(ANY)),
    opt("stopReason", STOP_REASON),
    opt("errorMessage", STRING),
    name="AssistantMessage",
    open=True,
    doc="pi's assistant message",
)
TOOL_RESULT = obj(
    opt("content", Array(ANY)),
    opt("details", ANY),
    name="ToolResult",
    open=True,
    doc="a tool's result as pi's tools return it: content blocks and details",
)

FILE_DIAGNOSTIC = obj(
    opt("line", INTEGER),
    req("severity", SEVERITY),
    req("message", STRING),
    name="FileDiagnostic",
    doc="e.g. skipped malformed line 17, migrated from version 1, torn last line 912",
)
SESSION_STATE = obj(
    req("sessionId", ID),
    req("file", nullable(STRING), "where the session is stored; null for in-memory sessions"),
    req("cwd", STRING),
    req("name", nullable(STRING)),
    req("leafId", NULLABLE_ID),
    req("entryCount", INTEGER),
    req("version", INTEGER, "the file's version after opening (3 once migrated)"),
    opt("parentSession", STRING),
    req("diagnostics", Array(FILE_DIAGNOSTIC)),
    name="SessionState",
)
SESSION_INFO = obj(
    req("path", STRING),
    req("id", ID),
    req("cwd", STRING),
    opt("name", STRING),
    opt("parentSessionPath", STRING),
    req("created", STRING),
    req("modified", STRING),
    req("messageCount", INTEGER),
    req("firstMessage", STRING),
    name="SessionInfo",
)
_NODE_FIELDS = (
    req("id", NULLABLE_ID),
    req("parentId", NULLABLE_ID),
    req("type", STRING),
    req("timestamp", ANY),
    opt("role", STRING),
    opt("preview", STRING, "the first ~120 characters of the entry's text"),
    opt("label", STRING),
    opt("noText", BOOLEAN, "an assistant message pi's tree view leaves out"),
)
TREE_NODE_FIELDS = obj(*_NODE_FIELDS, name="TreeNodeFields", doc="a node of the tree without its links")
TREE_NODE = Obj(
    (*_NODE_FIELDS, req("children", Array(Ref("TreeNode")))),
    name="TreeNode",
    doc="children ordered as pi orders them",
)
FLAT_TREE_NODE = obj(*_NODE_FIELDS, req("childIds", Array(NULLABLE_ID)), name="FlatTreeNode")
CHILD_TREE_NODE = obj(*_NODE_FIELDS, req("childCount", INTEGER), name="ChildTreeNode")
TREE_SEGMENT = obj(
    req("id", NULLABLE_ID),
    req("parentId", NULLABLE_ID),
    req("length", INTEGER),
    req("first", TREE_NODE_FIELDS),
    req("last", TREE_NODE_FIELDS),
    req("labels", Array(obj(req("id", NULLABLE_ID), req("label", nullable(STRING))))),
    req("childIds", Array(NULLABLE_ID)),
    name="TreeSegment",
    doc="a linear chain of the tree folded into one node",
)
CONTEXT_USAGE = obj(
    req("tokens", nullable(NUMBER)),
    req("usageTokens", nullable(NUMBER)),
    req("trailingTokens", nullable(NUMBER)),
    req("contextWindow", NUMBER),
    req("percent", nullable(NUMBER)),
    req("shouldCompact", BOOLEAN),
    name="ContextUsage",
    doc="null counts right after a compaction, before the next reply",
)
MODEL_REF = obj(req("provider", STRING), req("modelId", STRING), name="ModelRef")
MODEL_INFO = obj(
    req("provider", Literal("anthropic")),
    req("id", STRING),
    req("name", STRING),
    req("contextWindow", INTEGER),
    req("maxTokens", INTEGER),
    req("reasoning", BOOLEAN),
    req("input", Array(STRING)),
    req(
        "cost",
        obj(req("input", NUMBER), req("output", NUMBER), req("cacheRead", NUMBER), req("cacheWrite", NUMBER)),
    ),
    name="ModelInfo",
)
HUNK = obj(req("index", INTEGER), req("header", STRING), req("diff", STRING), name="Hunk")
APPROVAL_PREVIEW = obj(
    opt("path", STRING),
    opt("requestedPath", STRING, "the model's spelling of the path, when it differs"),
    opt("diff", STRING),
    opt("error", STRING, "pi's message for an edit that would fail"),
    opt("command", STRING),
    opt("outsideWorkspace", BOOLEAN),
    opt("cwdOutsideWorkspace", BOOLEAN),
    opt("hunks", Array(HUNK), "v3: the diff split into its hunks"),
    opt("newContent", STRING, "v3: the whole file as the tool would write it"),
    name="ApprovalPreview",
    open=True,
)
APPROVAL_REQUEST = obj(
    req("sessionId", ID),
    req("toolCallId", STRING),
    req("toolName", STRING),
    req("args", ANY),
    req("cwd", STRING),
    opt("preview", APPROVAL_PREVIEW),
    name="ApprovalRequest",
)
APPROVAL_ANSWER = obj(
    req("decision", APPROVAL_DECISION),
    opt("reason", STRING),
    opt("hunks", Array(INTEGER), "v3: apply only these hunks"),
    opt("content", STRING, "v3: write this text instead of the proposed file"),
    name="ApprovalAnswer",
)
RUNNING_TOOL = obj(
    req("toolCallId", STRING),
    req("toolName", STRING),
    req("args", ANY),
    opt("partialResult", TOOL_RESULT),
    name="RunningTool",
)
QUEUE = obj(req("steering", Array(STRING)), req("followUp", Array(STRING)), name="QueueState")
CHANGED_FILE = obj(req("path", STRING), req("change", CHANGE_KIND), name="ChangedFile")
RESTORED_FILE = obj(req("path", STRING), req("change", RESTORE_CHANGE), name="RestoredFile")
RESTORE_RESULT = obj(
    req("restored", Array(RESTORED_FILE)),
    req("conflicts", Array(STRING)),
    opt("undoId", nullable(STRING), "null when nothing was written"),
    name="RestoreResult",
)
SKILL = obj(
    req("name", STRING),
    req("description", STRING),
    req("path", STRING),
    req("baseDir", STRING),
    req("source", SKILL_SOURCE),
    req("disableModelInvocation", BOOLEAN),
    req("sourceInfo", JSON_OBJECT, "addition: pi's record of where the skill came from"),
    name="Skill",
)
PATH_DIAGNOSTIC = obj(
    req("path", STRING), req("severity", SEVERITY), req("message", STRING), name="PathDiagnostic"
)
PROMPT_SOURCE = obj(
    req("kind", PROMPT_SOURCE_KIND),
    req("path", STRING),
    req("tokens", NUMBER),
    name="PromptSource",
)
ANY_ID = one_of(STRING, INTEGER)
