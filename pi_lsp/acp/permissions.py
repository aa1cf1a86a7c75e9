"""A run's approval (``pi/requestApproval``) asked as ACP's ``session/request_permission``.

First a ``tool_call_update`` carries what is asked about (the diff of an edit/write, the command
of a bash call), then the question with pi-lsp's four answers. ``allow_always`` is the session's
``allowAlways``; ``reject_always`` refuses that tool for the rest of the session without asking;
a rejection (or a cancelled question) is pi's blocked-tool result.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

from pi_lsp.acp import tool_calls
from pi_lsp.acp.connection import Connection, RemoteError
from pi_lsp.service.approvers import ABORTED

log = logging.getLogger(__name__)

OPTIONS = (
    {"optionId": "allow_once", "name": "Allow", "kind": "allow_once"},
    {"optionId": "allow_always", "name": "Always allow", "kind": "allow_always"},
    {"optionId": "reject_once", "name": "Reject", "kind": "reject_once"},
    {"optionId": "reject_always", "name": "Always reject", "kind": "reject_always"},
)
DECISIONS = {
    "allow_once": "allow",
    "allow_always": "allowAlways",
    "reject_once": "deny",
    "reject_always": "deny",
}
REJECTED_ALWAYS = "Tool call blocked: the user always rejects {tool} calls in this session."


def asked_content(request: dict[str, Any], cwd: str) -> list[dict[str, Any]]:
    """What the question shows: the change as a diff, or the command."""
    name, args = request.get("toolName"), request.get("args")
    preview = request.get("preview") if isinstance(request.get("preview"), dict) else {}
    assert isinstance(preview, dict)
    if name in ("edit", "write"):
        path = tool_calls.target_path(args, cwd)
        new_text = preview.get("newContent")
        if new_text is None and name == "write" and isinstance(args, dict):
            new_text = args.get("content")
        if path is not None and isinstance(new_text, str):
            return [tool_calls.diff_content(path, tool_calls.read_small_text(path), new_text)]
        if isinstance(preview.get("diff"), str):
            return [tool_calls.text_content(preview["diff"])]
    if name == "bash" and isinstance(args, dict) and isinstance(args.get("command"), str):
        return [tool_calls.text_content(f"$ {args['command']}")]
    return []


async def ask_permission(
    connection: Connection,
    rejected: set[str],
    cwd: str,
    request: dict[str, Any],
    update: Callable[[str, dict[str, Any]], None],
) -> dict[str, Any]:
    """The answer to one ``pi/requestApproval``, in that request's own terms."""
    session_id, call_id, name = (
        str(request["sessionId"]),
        str(request["toolCallId"]),
        str(request["toolName"]),
    )
    if name in rejected:
        return {"decision": "deny", "reason": REJECTED_ALWAYS.format(tool=name)}
    content = await asyncio.to_thread(asked_content, request, cwd)
    shown = {"toolCallId": call_id, "status": "pending", "content": content}
    update(session_id, {"sessionUpdate": "tool_call_update", **shown})
    tool_call = {
        **shown,
        "title": tool_calls.title(name, request.get("args"), cwd),
        "kind": tool_calls.kind(name),
    }
    params = {"sessionId": session_id, "toolCall": tool_call, "options": list(OPTIONS)}
    try:
        answer = await connection.request("session/request_permission", params)
    except (RemoteError, ConnectionError) as error:
        log.info("permission for %s not given: %s", call_id, error)
        return {"decision": "deny"}
    outcome = answer.get("outcome") if isinstance(answer, dict) else None
    if isinstance(outcome, dict) and outcome.get("outcome") == "cancelled":  # the turn is being cancelled
        return {"decision": "deny", "reason": ABORTED}
    option = (
        outcome.get("optionId")
        if isinstance(outcome, dict) and outcome.get("outcome") == "selected"
        else None
    )
    if option == "reject_always":
        rejected.add(name)
    return {"decision": DECISIONS.get(str(option), "deny")}
