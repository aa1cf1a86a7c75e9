"""What the server sends unasked: notifications, the approval request, and ``pi/event``'s types.

``EVENTS`` lists every ``event.type`` a run's ``pi/event`` carries: pi's ``AgentSessionEvent`` with
the contract's changes (``message_update`` without partial copies, ``message_end`` with its
``entryId``, ``agent_end`` with ``entryIds`` and ``stopReason``) and pi-lsp's own types.
"""

from __future__ import annotations

from pi_lsp.protocol.common import (
    AGENT_MESSAGE,
    APPROVAL_ANSWER,
    APPROVAL_PREVIEW,
    APPROVAL_REQUEST,
    CHANGED_FILE,
    ID,
    NULLABLE_ID,
    PROMPT_SOURCE,
    TOOL_RESULT,
)
from pi_lsp.protocol.enums import (
    APPROVAL_DECISION,
    COMPACTION_REASON,
    SESSION_CHANGED_REASON,
    STOP_REASON,
)
from pi_lsp.protocol.method_parts import COMPACT_RESULT
from pi_lsp.protocol.shapes import (
    ANY,
    BOOLEAN,
    INTEGER,
    NUMBER,
    STRING,
    Array,
    Event,
    Notification,
    Union,
    obj,
    opt,
    req,
)

ASSISTANT_MESSAGE_EVENT = obj(
    req("type", STRING, "pi's assistant stream event: text_delta, thinking_end, toolcall_end, ..."),
    opt("contentIndex", INTEGER),
    opt("delta", STRING),
    opt("content", ANY, "on the `*_end` events"),
    opt("toolCall", ANY, "on `toolcall_end`"),
    name="AssistantMessageEvent",
)
_CALL = (req("toolCallId", STRING), req("toolName", STRING))
_COMPACTION_END = (
    req("reason", COMPACTION_REASON),
    opt("result", COMPACT_RESULT),
    req("aborted", BOOLEAN),
    req("willRetry", BOOLEAN),
    opt("errorMessage", STRING),
)

EVENTS: tuple[Event, ...] = (
    Event("agent_start", ()),
    Event(
        "agent_end",
        (req("entryIds", Array(ID)), req("stopReason", STOP_REASON)),
        "the entries of that loop run; not pi's `messages`",
    ),
    Event("turn_start", ()),
    Event("turn_end", (req("message", AGENT_MESSAGE), req("toolResults", Array(AGENT_MESSAGE)))),
    Event("message_start", (req("message", AGENT_MESSAGE),)),
    Event(
        "message_update",
        (req("assistantMessageEvent", ASSISTANT_MESSAGE_EVENT),),
        "only pi's assistant event: clients build the message from `message_start` plus deltas",
    ),
    Event("message_end", (req("message", AGENT_MESSAGE), opt("entryId", ID, "the entry just written"))),
    Event("tool_execution_start", (*_CALL, req("args", ANY))),
    Event(
        "tool_execution_update",
        (*_CALL, req("args", ANY), req("partialResult", TOOL_RESULT)),
        "`partialResult` is cumulative: it replaces the previous one",
    ),
    Event("tool_execution_end", (*_CALL, req("result", TOOL_RESULT), req("isError", BOOLEAN))),
    Event("queue_update", (req("steering", Array(STRING)), req("followUp", Array(STRING)))),
    Event("compaction_start", (req("reason", COMPACTION_REASON),)),
    Event("compaction_end", _COMPACTION_END),
    Event(
        "auto_retry_start",
        (
            req("attempt", INTEGER),
            req("maxAttempts", INTEGER),
            req("delayMs", NUMBER),
            req("errorMessage", STRING),
        ),
    ),
    Event("auto_retry_end", (req("success", BOOLEAN), req("attempt", INTEGER), opt("finalError", STRING))),
    Event(
        "approval_request",
        (*_CALL, req("args", ANY), opt("preview", APPROVAL_PREVIEW)),
        "the server starts waiting for an approval",
        ours=True,
    ),
    Event(
        "approval_result",
        (req("toolCallId", STRING), req("decision", APPROVAL_DECISION), opt("reason", STRING)),
        "that wait ended",
        ours=True,
    ),
    Event(
        "checkpoint",
        (req("entryId", ID), req("files", Array(CHANGED_FILE))),
        "v3: a checkpoint entry was written",
        ours=True,
    ),
    Event("checkpoint_skipped", (req("reason", STRING),), "v3: the workspace is not captured", ours=True),
)

EVENT_UNION = Union(tuple(event.shape() for event in EVENTS))

NOTIFICATIONS: tuple[Notification, ...] = (
    Notification(
        "pi/sessionChanged",
        obj(
            req("sessionId", ID),
            req("leafId", NULLABLE_ID),
            req("appendedIds", Array(ID)),
            req("reason", SESSION_CHANGED_REASON),
            name="SessionChanged",
        ),
        "after every change, including lines appended to the file by another process",
    ),
    Notification(
        "pi/compactionStarted",
        obj(req("sessionId", ID), req("reason", COMPACTION_REASON), name="CompactionStarted"),
        "before every compaction",
    ),
    Notification(
        "pi/compactionEnded",
        obj(
            req("sessionId", ID),
            *_COMPACTION_END[:4],
            opt("error", STRING),
            opt("errorCode", INTEGER),
            opt("errorData", ANY),
            name="CompactionEnded",
        ),
        "after every compaction",
    ),
    Notification(
        "pi/systemPromptChanged",
        obj(req("cwd", STRING), req("sources", Array(PROMPT_SOURCE)), name="SystemPromptChanged"),
        "a watched context, prompt, skill or settings file changed (debounced)",
    ),
    Notification(
        "pi/event",
        obj(req("sessionId", ID), req("seq", INTEGER), req("event", EVENT_UNION), name="PiEventParams"),
        "every event of a run",
    ),
)

SERVER_REQUESTS: tuple[Notification, ...] = (
    Notification(
        "pi/requestApproval",
        APPROVAL_REQUEST,
        "asked before a tool call the policy holds",
        result=APPROVAL_ANSWER,
    ),
)

NOTIFICATIONS_BY_NAME: dict[str, Notification] = {n.name: n for n in (*NOTIFICATIONS, *SERVER_REQUESTS)}
EVENTS_BY_TYPE: dict[str, Event] = {event.type: event for event in EVENTS}
