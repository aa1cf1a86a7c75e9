"""What every built-in tool is: pi's definition (name, schema, prompt lines) plus an async execute.

A tool reports failure by raising: the loop turns any exception into pi's error tool result
(``isError: true``, ``details: {}``, the message as text). :class:`ToolError` is the usual kind;
its text is exactly what the model reads.
"""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from pi_lsp.aborts import done_before_abort
from pi_lsp.agent.tools.output_files import SERVER_OUTPUT_FILES, OutputFiles

if TYPE_CHECKING:
    from pi_lsp.agent.documents import EditorDocuments
    from pi_lsp.agent.tools.targets import ChangePlan, CheckedTargets

T = TypeVar("T")

ABORTED_TEXT = "Operation aborted"


class ToolError(Exception):
    """A failure the model should read: ``str(exc)`` is the tool result's text."""


@dataclass
class ToolResult:
    """pi's ``AgentToolResult``: content blocks, and ``details`` (None = no details field at all)."""

    content: list[dict[str, Any]]
    details: dict[str, Any] | None = None

    def to_wire(self) -> dict[str, Any]:
        """``{content, details?}`` as pi's events and toolResult messages carry it."""
        wire: dict[str, Any] = {"content": self.content}
        if self.details is not None:
            wire["details"] = self.details
        return wire


def text_result(text: str, details: dict[str, Any] | None = None) -> ToolResult:
    return ToolResult([{"type": "text", "text": text}], details)


def _ignore_update(_result: ToolResult) -> None:
    return None


@dataclass
class ToolContext:
    """What a tool call runs against: the session's cwd, the run's abort flag, editor buffers, what
    the approval check judged of each ``edit``/``write`` call (``targets.py``), and the owner of the
    full-output files it writes (the run's: removed when the run ends)."""

    cwd: str
    abort: asyncio.Event = field(default_factory=asyncio.Event)
    documents: EditorDocuments | None = None
    on_update: Callable[[ToolResult], None] = _ignore_update
    checked: CheckedTargets | None = None
    output_files: OutputFiles = SERVER_OUTPUT_FILES


class Tool(ABC):
    """One of pi's built-in tools. Subclasses set the class attributes and implement execute."""

    name: str
    label: str
    description: str
    parameters: dict[str, Any]
    prompt_snippet: str | None = None
    prompt_guidelines: tuple[str, ...] = ()
    mutates_files: bool = False

    def definition(self) -> dict[str, Any]:
        """``{name, description, parameters}``: the tool as the model request lists it."""
        return {"name": self.name, "description": self.description, "parameters": self.parameters}

    def prepare_arguments(self, args: Any) -> Any:
        """pi's ``prepareArguments`` hook (run before validation); most tools leave args alone."""
        return args

    async def preview(self, args: dict[str, Any], ctx: ToolContext) -> dict[str, Any] | None:
        """What an approval prompt shows, computed without changing anything; None = nothing."""
        return None

    async def plan_change(self, args: dict[str, Any], ctx: ToolContext) -> ChangePlan | None:
        """For a tool that changes a file: which file, its bytes now and the preview; None for others."""
        return None

    @abstractmethod
    async def execute(self, tool_call_id: str, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Run the call with validated arguments; raise on failure."""


async def until_aborted(work: Awaitable[T], abort: asyncio.Event, message: str = ABORTED_TEXT) -> T:
    """Await ``work`` unless the run is aborted first; then cancel it and fail with pi's text."""
    if abort.is_set():
        if asyncio.iscoroutine(work):
            work.close()
        raise ToolError(message)
    task = asyncio.ensure_future(work)
    try:
        finished = await done_before_abort(task, abort)
    except asyncio.CancelledError:
        task.cancel()
        raise
    if finished:
        return task.result()
    task.cancel()
    raise ToolError(message)
