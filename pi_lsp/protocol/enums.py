"""The contract's closed sets of strings and its error codes: defined once, used by every layer.

The server validates params against these, the agent and the model table use the thinking levels,
and the editors' copies (``protocol.ts``, ``protocol.lua``) are generated from them.
"""

from __future__ import annotations

from pi_lsp.protocol.shapes import Enum, ErrorCode

THINKING_LEVEL = Enum(
    "ThinkingLevel",
    ("off", "minimal", "low", "medium", "high", "xhigh"),
    "pi's thinking levels, lowest first; clamped to what the model supports",
)
THINKING_LEVELS = THINKING_LEVEL.values

APPROVAL_DECISION = Enum("ApprovalDecision", ("allow", "allowAlways", "deny"))
APPROVAL_POLICY = Enum(
    "ApprovalPolicy", ("auto", "acceptEdits", "ask"), "the `approval` setting, loosest first"
)
STOP_REASON = Enum("StopReason", ("stop", "length", "toolUse", "error", "aborted"))
STREAMING_BEHAVIOR = Enum("StreamingBehavior", ("steer", "followUp"))
QUEUE_MODE = Enum("QueueMode", ("one-at-a-time", "all"), "`steeringMode` / `followUpMode`")
CHANGE_KIND = Enum(
    "ChangeKind", ("added", "modified", "deleted"), "how a file changed between two checkpoints"
)
RESTORE_CHANGE = Enum("RestoreChange", ("create", "modify", "delete"), "what a restore does to a file")
SESSION_CHANGED_REASON = Enum(
    "SessionChangedReason",
    ("append", "navigate", "compaction", "external", "migrate", "rewritten"),
    "`rewritten` is pi-lsp's own: the file was deleted or emptied underneath and written again",
)
COMPACTION_REASON = Enum("CompactionReason", ("manual", "threshold", "overflow"))
SEVERITY = Enum("Severity", ("error", "warning", "info"))
PROMPT_SOURCE_KIND = Enum("PromptSourceKind", ("agents", "system", "append", "skill"))
COMMAND_SOURCE = Enum("CommandSource", ("skill", "prompt"))
SKILL_SOURCE = Enum("SkillSource", ("project", "user", "path"))
SUMMARIZER_SETTING = Enum("SummarizerSetting", ("auto", "anthropic", "offline"))
TOKENIZER = Enum("Tokenizer", ("tiktoken", "estimate"))
TREE_FORMAT = Enum("TreeFormat", ("nested", "flat"))
API_KEY_SOURCE = Enum("ApiKeySource", ("editor", "ANTHROPIC_API_KEY", "auth.json"))
WATCH_BACKEND = Enum("WatchBackend", ("watchdog", "poll"))
FILE_ERROR_REASON = Enum(
    "FileErrorReason",
    (
        "notFound",
        "permissionDenied",
        "noSpace",
        "tooLarge",
        "notRegularFile",
        "replaced",
        "readOnly",
        "timeout",
        "notJsonl",
        "ioError",
        "checkpoints",
    ),
    "FileError `data.reason`",
)

ENUMS: tuple[Enum, ...] = (
    THINKING_LEVEL,
    APPROVAL_DECISION,
    APPROVAL_POLICY,
    STOP_REASON,
    STREAMING_BEHAVIOR,
    QUEUE_MODE,
    CHANGE_KIND,
    RESTORE_CHANGE,
    SESSION_CHANGED_REASON,
    COMPACTION_REASON,
    SEVERITY,
    PROMPT_SOURCE_KIND,
    COMMAND_SOURCE,
    SKILL_SOURCE,
    SUMMARIZER_SETTING,
    TOKENIZER,
    TREE_FORMAT,
    API_KEY_SOURCE,
    WATCH_BACKEND,
    FILE_ERROR_REASON,
)

ERRORS: tuple[ErrorCode, ...] = (
    ErrorCode("ParseError", -32700, "the message is not JSON (answered with `id: null`)"),
    ErrorCode("InvalidRequest", -32600, "not a valid JSON-RPC request, or any request after `shutdown`"),
    ErrorCode("MethodNotFound", -32601, "unknown method"),
    ErrorCode("InvalidParams", -32602, "missing or wrong-typed field, unknown entry type, bad role"),
    ErrorCode("InternalError", -32603, "a bug; the message names the exception, no traceback"),
    ErrorCode("SessionNotFound", -32001, "unknown `session`, or no active session"),
    ErrorCode("EntryNotFound", -32002, "an id that is not in the session"),
    ErrorCode(
        "NothingToCompact",
        -32003,
        "the branch is empty, ends with a compaction, or has nothing before the cut",
    ),
    ErrorCode("ModelError", -32004, "the model call failed after retries, or no key / unknown model"),
    ErrorCode("InvalidSessionFile", -32005, "`path` is not a session file; it is left untouched"),
    ErrorCode(
        "SessionBusy", -32006, "a compaction, summary, prompt or bash is already running on that session"
    ),
    ErrorCode("FileError", -32007, "a file could not be read or written: `data: {path, reason}`"),
    ErrorCode("RequestCancelled", -32800, "the client sent `$/cancelRequest`; nothing was written"),
)
ERROR_CODES: dict[str, int] = {error.name: error.code for error in ERRORS}
