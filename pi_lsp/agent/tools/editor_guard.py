"""The editor-aware rule for tools that change files: never overwrite a user's unsaved buffer."""

from __future__ import annotations

from pi_lsp.agent.tools.base import ToolContext, ToolError


def unsaved_changes_message(path: str) -> str:
    return (
        f"{path} is open in the user's editor with unsaved changes, so it was not modified. "
        "Ask the user to save or discard those changes, then try again."
    )


async def refuse_unsaved(ctx: ToolContext, real: str, path: str) -> None:
    """Fail (nothing written) when an editor holds ``real`` (the file the call really changes,
    ``targets.py``) with changes not yet on disk (an ACP client is asked: ``editor_text``)."""
    if ctx.documents is not None and await ctx.documents.editor_text(real) is not None:
        raise ToolError(unsaved_changes_message(path))
