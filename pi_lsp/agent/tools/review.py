"""What the user let through of an ``edit``/``write`` they reviewed, and what the tool result says.

The approval preview of a change carries its hunks and the whole proposed file (``newContent``).
The user's answer may narrow the change: ``hunks`` (the indices of the hunks to apply; the rest
of the file stays as it is) or ``content`` (the file as the user edited it). The narrowing is
worked out when the answer arrives, from the text the preview was made from; the run then holds
the file to that text (``targets.CHANGED``), so what the tool writes is exactly
:attr:`Narrowed.content`. The result names what was not written, so the model goes on from the
truth instead of from what it proposed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pi_lsp.agent.tools.diff import Hunk, apply_hunks, diff_hunks, unified_diff
from pi_lsp.agent.tools.files import decode_text
from pi_lsp.agent.tools.targets import ChangePlan

REJECTED_ALL = (
    "Tool call blocked: the user rejected every hunk of this {tool} to {path}. Nothing was written."
    " The rejected change:\n\n{diffs}"
)
PARTLY_APPLIED = (
    "The user applied only part of this {tool} to {path}: {applied} written; {rejected} rejected and"
    " not written (the file keeps its previous text there). The rejected change:\n\n{diffs}"
)
MODIFIED = (
    "The user modified this {tool} before it was written: {path} now holds the user's version, not the"
    " proposed one. The difference from the proposed content to what was written:\n\n{diff}"
)


class InvalidNarrowing(ValueError):
    """An answer's ``hunks`` or ``content`` does not fit the change it answers (the message says why)."""


def review_fields(before: str | None, proposed: str) -> dict[str, Any]:
    """The preview's ``hunks`` and ``newContent`` for a change from ``before`` (None: no file)."""
    return {"hunks": [hunk.to_wire() for hunk in diff_hunks(before, proposed)], "newContent": proposed}


def _numbers(noun: str, indices: Sequence[int]) -> str:
    return f"{noun}{'s' if len(indices) != 1 else ''} {', '.join(str(index) for index in indices)}"


@dataclass(frozen=True)
class Narrowed:
    """A reviewed change that is not the proposal: ``content`` is the whole file to write;
    ``rejected`` the hunks left out (a ``hunks`` answer), or ``edited`` (a ``content`` answer)."""

    path: str  # the real file, for the diff's labels
    proposed: str
    content: str
    total: int
    rejected: tuple[Hunk, ...] = ()
    edited: bool = False

    @property
    def writes_nothing(self) -> bool:
        """Every hunk was rejected: the call is refused rather than run."""
        return not self.edited and len(self.rejected) == self.total

    def _rejected_diffs(self) -> str:
        return "".join(hunk.diff for hunk in self.rejected).rstrip("\n")

    def blocked_text(self, tool: str, path: str) -> str:
        return REJECTED_ALL.format(tool=tool, path=path, diffs=self._rejected_diffs())

    def result_text(self, tool: str, path: str) -> str:
        """The tool result's text for a change written as narrowed."""
        if self.edited:
            diff = unified_diff(
                self.path, self.proposed, self.content,
                old_label=f"{self.path} (proposed)", new_label=f"{self.path} (written)",
            )  # fmt: skip
            return MODIFIED.format(tool=tool, path=path, diff=diff.rstrip("\n") or "(none)")
        rejected = [hunk.index for hunk in self.rejected]
        applied = [index for index in range(self.total) if index not in rejected]
        return PARTLY_APPLIED.format(
            tool=tool, path=path, applied=f"{_numbers('hunk', applied)} of {self.total}",
            rejected=_numbers("hunk", rejected), diffs=self._rejected_diffs(),
        )  # fmt: skip


def narrow(
    path: str, before: str | None, proposed: str | None, hunks: Sequence[int] | None, content: str | None
) -> Narrowed | None:
    """What an answer's ``hunks``/``content`` lets through of the change ``before`` → ``proposed``
    (None: the whole change, as proposed). ``proposed`` None: the preview had no hunks (it showed
    an error), so there is nothing to choose from. Raises :class:`InvalidNarrowing`."""
    if hunks is None and content is None:
        return None
    if proposed is None:
        raise InvalidNarrowing("this call's preview has no hunks or newContent to choose from")
    if content is not None:
        if content == proposed:
            return None
        return Narrowed(path, proposed, content, len(diff_hunks(before, proposed)), edited=True)
    assert hunks is not None
    all_hunks = diff_hunks(before, proposed)
    for index in hunks:
        if not 0 <= index < len(all_hunks):
            available = f"indices 0 to {len(all_hunks) - 1}" if all_hunks else "it has none"
            count = len(all_hunks)
            raise InvalidNarrowing(f"hunk {index} is not one of this change's {count} hunks ({available})")
    chosen = set(hunks)
    if len(chosen) == len(all_hunks):
        return None
    rejected = tuple(hunk for hunk in all_hunks if hunk.index not in chosen)
    return Narrowed(path, proposed, apply_hunks(before, proposed, chosen), len(all_hunks), rejected)


def narrow_plan(plan: ChangePlan, hunks: Sequence[int] | None, content: str | None) -> Narrowed | None:
    """:func:`narrow` for the change a call's approval preview was made from."""
    before = decode_text(plan.before) if plan.before is not None else None
    return narrow(plan.target.real, before, plan.proposed, hunks, content)
