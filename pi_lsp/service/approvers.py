"""Who answers a run's ``pi/requestApproval``, also when the editor that started the run is gone.

A run asks the client that started it. On a shared server (``--reattach-grace``) a run outlives
its connection: a window reload closes the connection and a new one opens the session again
moments later. So the question goes to a client holding the session that declared approvals (the
starter first, then the one whose active session it is); when that client's connection drops
before it answers, the question is asked again of the next one, or of the next client that opens
the session. Nobody to ask for ``wait_limit`` seconds blocks the tool with a clear reason.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from pi_lsp.aborts import done_before_abort
from pi_lsp.agent.approvals import INVALID_ANSWER
from pi_lsp.agent.tools.review import InvalidNarrowing, Narrowed, narrow_plan
from pi_lsp.agent.tools.targets import ChangePlan
from pi_lsp.secrets import redact
from pi_lsp.service.registry import Client, Registry

log = logging.getLogger(__name__)

ABORTED = "Tool call blocked: the run was aborted while waiting for approval."
NOBODY = (
    "Tool call blocked: no editor that answers approvals was connected to this session for {seconds:g} s."
    " Nothing was run."
)


@dataclass(frozen=True)
class Answer:
    """A decision (``allow``, ``allowAlways`` or ``deny``), the user's reason, whether it came from
    a valid answer (False: denied because the question could not be answered), and for ``allow``
    of an edit/write the user's narrowing of it: the ``hunks`` to apply or the ``content`` to write.
    ``invalid``: why a malformed narrowing made the answer a refusal. ``reason_from_user``: the
    reason is the user's own words (a refusal's), not the server's text for a refusal."""

    decision: str
    reason: str | None
    answered: bool
    hunks: tuple[int, ...] | None = None
    content: str | None = None
    invalid: str | None = None
    reason_from_user: bool = False


class Approvers:
    """The clients that may answer approvals, and waiting for one to (re)appear."""

    def __init__(self, registry: Registry, wait_limit: float) -> None:
        self.registry = registry
        self.wait_limit = wait_limit  # 0: never wait (the run ends with its connection anyway)
        self._waiters: set[asyncio.Future[None]] = set()

    def holders_changed(self) -> None:
        """A client opened, attached to or released a session: waiting questions look again."""
        for waiter in self._waiters:
            if not waiter.done():
                waiter.set_result(None)

    def choose(self, session_id: str, starter: Client, skip: set[int]) -> Client | None:
        """The client to ask: the starter if it can answer, else a holder whose active session
        this is, else any holder that declared approvals (``skip``: ids whose question was lost)."""
        capable = [
            client
            for client in self.registry.holders(session_id)
            if client.approvals and client.request is not None and not client.leaving
            if id(client) not in skip
        ]
        if starter in capable:
            return starter
        capable.sort(key=lambda client: client.active != session_id)
        return capable[0] if capable else None

    def may_wait(self, starter: Client) -> bool:
        """Whether a question nobody can answer now waits for a client: only for a run that
        outlives its starter (gone, or going); a connected editor without approvals gets None."""
        gone = starter.leaving or starter not in self.registry.clients
        return self.wait_limit > 0 and gone

    def can_ask(self, session_id: str, starter: Client) -> bool:
        """Whether a question could be answered now or, for a run outliving its starter, later."""
        return self.choose(session_id, starter, set()) is not None or self.may_wait(starter)

    async def ask(
        self, session_id: str, starter: Client, request: dict[str, Any], abort: asyncio.Event
    ) -> Answer | None:
        """Ask until a client answers; None when the starter is connected but nobody can answer
        (the editor did not declare approvals: pi's blocked result for incapable clients)."""
        lost: set[int] = set()
        while True:
            target = self.choose(session_id, starter, lost)
            if target is None:
                if not self.may_wait(starter):
                    return None
                if not await self._wait_for_holders(abort):
                    if abort.is_set():
                        return Answer("deny", ABORTED, False)
                    return Answer("deny", NOBODY.format(seconds=self.wait_limit), False)
                continue
            assert target.request is not None
            answer = await _ask_one(target.request, request, abort)
            if answer is not None:
                return answer
            lost.add(id(target))  # its connection went before it answered: ask someone else
            log.info("approval %s: the asked client is gone; asking again", request.get("toolCallId"))

    async def _wait_for_holders(self, abort: asyncio.Event) -> bool:
        """True when the holders changed within the wait limit, False on timeout or abort."""
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.add(waiter)
        try:
            changed = await done_before_abort(waiter, abort, self.wait_limit)
        finally:
            self._waiters.discard(waiter)
        return changed and not abort.is_set()


async def _ask_one(
    send: Callable[[str, Any], Awaitable[Any]], request: dict[str, Any], abort: asyncio.Event
) -> Answer | None:
    """One ``pi/requestApproval``; None when it was cancelled because its connection went."""
    answer_task = asyncio.ensure_future(send("pi/requestApproval", request))
    if not await done_before_abort(answer_task, abort):
        answer_task.cancel()
        return Answer("deny", ABORTED, False)
    if answer_task.cancelled():
        return None
    try:
        answer = _plain(answer_task.result())
    except Exception as error:
        log.debug("approval request failed: %s", redact(str(error)))
        return Answer("deny", None, False)
    if not isinstance(answer, dict) or answer.get("decision") not in ("allow", "allowAlways", "deny"):
        return Answer("deny", None, False)
    reason = answer.get("reason")
    decision = answer["decision"]
    reason = reason if isinstance(reason, str) and reason else None
    if decision == "deny":  # a refusal needs no narrowing: any sent is ignored
        return Answer(decision, reason, True, reason_from_user=reason is not None)
    hunks, content = answer.get("hunks"), answer.get("content")
    invalid = _invalid_narrowing(decision, hunks, content)
    if invalid is not None:
        return _refused(request.get("toolCallId"), str(request.get("toolName")), invalid)
    return Answer(decision, reason, True, tuple(hunks) if hunks is not None else None, content)


def _refused(call_id: Any, tool: str, invalid: str) -> Answer:
    log.warning("approval %s: invalid answer (%s); the call is refused", call_id, invalid)
    return Answer("deny", INVALID_ANSWER.format(tool=tool, why=invalid), True, invalid=invalid)


def fit_to_change(
    answer: Answer, call_id: str, tool: str, path: Any, plan: ChangePlan | None
) -> tuple[Answer, Narrowed | None]:
    """An allowing answer's narrowing worked out against the change its preview showed (``plan``;
    None: the call had no such preview): the answer itself, possibly turned into a refusal (a
    narrowing that does not fit, or one that rejects every hunk), and what is to be written."""
    if answer.decision == "deny" or (answer.hunks is None and answer.content is None):
        return answer, None
    if plan is None:
        return _refused(call_id, tool, "this call's preview has no hunks or newContent to choose from"), None
    try:
        narrowed = narrow_plan(plan, answer.hunks, answer.content)
    except InvalidNarrowing as error:
        return _refused(call_id, tool, str(error)), None
    if narrowed is not None and narrowed.writes_nothing:
        return Answer("deny", narrowed.blocked_text(tool, str(path)), True), None
    return answer, narrowed


def _invalid_narrowing(decision: str, hunks: Any, content: Any) -> str | None:
    """Why an answer's ``hunks``/``content`` is malformed (their fit to the change is judged by the
    run, ``review.py``), or None. They narrow one call, so ``allowAlways`` cannot carry them."""
    if hunks is None and content is None:
        return None
    if hunks is not None and content is not None:
        return "hunks and content were both given; send one of them"
    if decision != "allow":
        return f'hunks and content narrow one call: answer "allow" with them, not {decision!r}'
    if hunks is not None and (not isinstance(hunks, list) or not all(type(index) is int for index in hunks)):
        return "hunks must be a list of hunk indices (integers)"
    if content is not None and not isinstance(content, str):
        return "content must be a string (the whole file)"
    return None


def _plain(value: Any) -> Any:
    """A client's answer as plain JSON (pygls hands responses over as named tuples)."""
    as_dict = getattr(value, "_asdict", None)
    if callable(as_dict):
        return {key: _plain(item) for key, item in as_dict().items()}
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value]
    return value
