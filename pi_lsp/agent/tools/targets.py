"""Which file an ``edit``/``write`` changes: decided once, judged by the approval policy, written exactly.

pi takes the model's path lexically (``path.resolve`` for a relative one, an absolute one as given)
and lets the kernel follow symlinks when it writes. A check of the lexical path is wrong whenever a
symlink is involved: ``<workspace>/link/../x`` is ``<workspace>/x`` to ``normpath`` but ``x`` beside
the link's target to the kernel. So the file a call changes is :attr:`FileTarget.real`: pi's path
with every symlink followed as the kernel follows it, the last component too (writing through a
symlinked file changes its target, so a link to a file outside the workspace is outside). The
approval policy judges that path, the approval preview shows it, and the tools write exactly it
(``files.py``: its folders opened one by one without following symlinks, ``nofollow.py``), so a
folder or file swapped for a symlink after the check is refused, never written through.

When the user approved a call after seeing its diff, the run records what the file held then
(:class:`CheckedTargets`); if the file has changed by the time the call runs (saved in the editor,
written by another program), the call fails and tells the model, instead of overwriting it.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pi_lsp.agent.tools.base import ToolError
from pi_lsp.agent.tools.paths import resolve_to_cwd

if TYPE_CHECKING:
    from pi_lsp.agent.tools.base import ToolContext
    from pi_lsp.agent.tools.review import Narrowed

ABSENT = "absent"
"""The content digest of a file that does not exist."""

MOVED = (
    "{path} was not modified: it now resolves to {now}, not to {checked}, the file that was checked"
    " for approval (a folder or the file was replaced by a symbolic link meanwhile). Nothing was written."
)
CHANGED = (
    "{path} was not modified: the file changed on disk after the user was shown this {tool} for"
    " approval (saved in an editor or written by another program), so the approved change no longer"
    " applies. Read the file again and redo the change. Nothing was written."
)
SYMLINKED = (
    "{path} was not modified: {link} is a symbolic link where the checked path {real} has none"
    " (replaced after the check, or a link that does not resolve). Nothing was written."
)


@dataclass(frozen=True)
class FileTarget:
    """``requested``: pi's path for the argument (what messages name); ``real``: the file written."""

    requested: str
    real: str


def file_target(path: str, cwd: str) -> FileTarget:
    """The file a call with the path argument ``path`` changes (``@``, ``~``, relative to ``cwd``)."""
    requested = resolve_to_cwd(path, cwd)
    return FileTarget(requested, os.path.realpath(requested))


def content_digest(data: bytes | None) -> str:
    """What the user was shown, compactly: a SHA-256 of the bytes, :data:`ABSENT` for no file."""
    return ABSENT if data is None else hashlib.sha256(data).hexdigest()


@dataclass(frozen=True)
class ChangePlan:
    """What an ``edit``/``write`` call would do, worked out without writing: the file, the bytes
    it holds now (None: no file), the approval preview made from them and the whole file the call
    would write (None: the call would fail, the preview says why)."""

    target: FileTarget
    before: bytes | None
    preview: dict[str, Any]
    proposed: str | None = None


def preview_fields(target: FileTarget) -> dict[str, Any]:
    """``path`` (the real file) and, when the model named it otherwise, ``requestedPath``."""
    fields: dict[str, Any] = {"path": target.real}
    if target.requested != target.real:
        fields["requestedPath"] = target.requested
    return fields


@dataclass(frozen=True)
class CheckedTarget:
    """What the approval check of one call judged: the file, and (after an approval that showed a
    diff) the digest of the content that diff was made from and what the user let through of the
    change when they narrowed it (``review.py``)."""

    target: FileTarget
    approved_content: str | None = None
    narrowed: Narrowed | None = None


class CheckedTargets:
    """Per run: tool call id → its :class:`CheckedTarget`, recorded by the approval check."""

    def __init__(self) -> None:
        self._by_call: dict[str, CheckedTarget] = {}

    def record(self, call_id: str, checked: CheckedTarget) -> None:
        self._by_call[call_id] = checked

    def take(self, call_id: str) -> CheckedTarget | None:
        return self._by_call.pop(call_id, None)

    def clear(self) -> None:
        self._by_call.clear()


def approved_change(
    ctx: ToolContext, call_id: str, target: FileTarget, path: str
) -> tuple[str | None, Narrowed | None]:
    """The content digest the file must still have (None: no approval showed it) and the user's
    narrowing of the change (None: write it as proposed).

    Fails with :data:`MOVED` when the path now names another file than the one checked.
    """
    checked = ctx.checked.take(call_id) if ctx.checked is not None else None
    if checked is None:
        return None, None
    if checked.target.real != target.real:
        raise ToolError(MOVED.format(path=path, now=target.real, checked=checked.target.real))
    return checked.approved_content, checked.narrowed
