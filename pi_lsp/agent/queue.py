"""pi's message queues for a running agent: steering and follow-up (``PendingMessageQueue``).

Steering messages are delivered after the current tool batch, follow-ups when the agent would stop;
``one-at-a-time`` (pi's default) hands over one message per poll, ``all`` the whole queue. The
display texts are kept apart, as in pi's ``AgentSession``: they leave the queue when their message
starts (so ``queue_update`` shows what is still waiting) and are what ``pi/clearQueue`` returns.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pi_lsp.protocol.enums import QUEUE_MODE

QUEUE_MODES = QUEUE_MODE.values
Message = dict[str, Any]


@dataclass
class _Queue:
    messages: list[Message] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)

    def take(self, mode: str) -> list[Message]:
        if not self.messages:
            return []
        if mode == "all":
            taken, self.messages = self.messages, []
            return taken
        return [self.messages.pop(0)]


class MessageQueues:
    """The steering and follow-up queues of one session, with pi's modes read on every poll."""

    def __init__(self, modes: Callable[[], tuple[str, str]], on_change: Callable[[], None]) -> None:
        self._modes = modes
        self._on_change = on_change
        self._steering = _Queue()
        self._follow_up = _Queue()

    def add(self, kind: str, text: str, message: Message) -> None:
        queue = self._steering if kind == "steer" else self._follow_up
        queue.messages.append(message)
        queue.texts.append(text)
        self._on_change()

    def take_steering(self) -> list[Message]:
        return self._steering.take(self._modes()[0])

    def take_follow_up(self) -> list[Message]:
        return self._follow_up.take(self._modes()[1])

    def has_messages(self) -> bool:
        return bool(self._steering.messages or self._follow_up.messages)

    def delivered(self, text: str) -> None:
        """A queued message started: drop its display text (steering first, as pi looks)."""
        for queue in (self._steering, self._follow_up):
            if text in queue.texts:
                queue.texts.remove(text)
                self._on_change()
                return

    def clear(self) -> tuple[list[str], list[str]]:
        """Drop everything queued; returns the display texts (for the editor's input box)."""
        steering, follow_up = self._steering.texts, self._follow_up.texts
        self._steering, self._follow_up = _Queue(), _Queue()
        if steering or follow_up:
            self._on_change()
        return steering, follow_up

    def snapshot(self) -> dict[str, list[str]]:
        return {"steering": list(self._steering.texts), "followUp": list(self._follow_up.texts)}
