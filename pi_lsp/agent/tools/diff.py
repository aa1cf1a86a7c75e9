"""Line diffs: pi's numbered diff for ``details.diff``, and a unified diff for approval previews that
is also split into hunks the user may apply one by one (:func:`apply_hunks`).

pi computes ``details.diff`` from the ``diff`` package's ``diffLines`` (Myers' O(ND) algorithm
with its own tie-breaking), then prints it with numbered lines and 4 lines of context. The
same hunks need the same algorithm, so :func:`diff_lines` follows that search order exactly.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from typing import NamedTuple

CONTEXT_LINES = 4
UNIFIED_CONTEXT = 3
_LINE_BREAK = re.compile(r"(\n|\r\n)")
_LINES_WITH_ENDS = re.compile(r"[^\n]*\n|[^\n]+\Z")


class Change(NamedTuple):
    kind: str  # "=", "+" or "-"
    value: str  # the lines, each with its line break


@dataclass
class _Run:
    """A run of equal-kind steps; runs link backwards to make the edit script."""

    count: int
    kind: str
    previous: _Run | None


@dataclass
class _Path:
    old_pos: int
    last: _Run | None


def _tokens(text: str) -> list[str]:
    """Lines with their own line break attached (``\\n`` or ``\\r\\n``), no empty tokens."""
    parts = _LINE_BREAK.split(text)
    if parts and not parts[-1]:
        parts.pop()
    lines: list[str] = []
    for index, part in enumerate(parts):
        if index % 2:
            lines[-1] += part
        else:
            lines.append(part)
    return [line for line in lines if line]


def _extend(path: _Path, kind: str, old_step: int) -> _Path:
    last = path.last
    if last is not None and last.kind == kind:
        return _Path(path.old_pos + old_step, _Run(last.count + 1, kind, last.previous))
    return _Path(path.old_pos + old_step, _Run(1, kind, last))


def _follow_snake(path: _Path, old: list[str], new: list[str], diagonal: int) -> int:
    old_pos = path.old_pos
    new_pos = old_pos - diagonal
    common = 0
    while new_pos + 1 < len(new) and old_pos + 1 < len(old) and old[old_pos + 1] == new[new_pos + 1]:
        old_pos += 1
        new_pos += 1
        common += 1
    if common:
        path.last = _Run(common, "=", path.last)
    path.old_pos = old_pos
    return new_pos


def _changes(last: _Run | None, old: list[str], new: list[str]) -> list[Change]:
    runs: list[_Run] = []
    while last is not None:
        runs.append(last)
        last = last.previous
    runs.reverse()
    changes: list[Change] = []
    old_pos = new_pos = 0
    for run in runs:
        if run.kind == "-":
            changes.append(Change("-", "".join(old[old_pos : old_pos + run.count])))
            old_pos += run.count
        else:
            changes.append(Change(run.kind, "".join(new[new_pos : new_pos + run.count])))
            new_pos += run.count
            if run.kind == "=":
                old_pos += run.count
    return changes


def diff_lines(old_text: str, new_text: str) -> list[Change]:
    """The line changes from ``old_text`` to ``new_text``, as ``diffLines`` finds them."""
    old, new = _tokens(old_text), _tokens(new_text)
    best: dict[int, _Path | None] = {0: _Path(-1, None)}
    start = best[0]
    assert start is not None
    new_pos = _follow_snake(start, old, new, 0)
    if start.old_pos + 1 >= len(old) and new_pos + 1 >= len(new):
        return _changes(start.last, old, new)
    low, high = -(len(old) + len(new) + 1), len(old) + len(new) + 1
    for edits in range(1, len(old) + len(new) + 1):
        for diagonal in range(max(low, -edits), min(high, edits) + 1, 2):
            removal = best.get(diagonal - 1)
            addition = best.get(diagonal + 1)
            if removal is not None:
                best[diagonal - 1] = None
            can_add = addition is not None and 0 <= addition.old_pos - diagonal < len(new)
            can_remove = removal is not None and removal.old_pos + 1 < len(old)
            if not can_add and not can_remove:
                best[diagonal] = None
                continue
            if not can_remove or (
                can_add
                and removal is not None
                and addition is not None
                and removal.old_pos < addition.old_pos
            ):
                assert addition is not None
                path = _extend(addition, "+", 0)
            else:
                assert removal is not None
                path = _extend(removal, "-", 1)
            new_pos = _follow_snake(path, old, new, diagonal)
            if path.old_pos + 1 >= len(old) and new_pos + 1 >= len(new):
                return _changes(path.last, old, new)
            best[diagonal] = path
            if path.old_pos + 1 >= len(old):
                high = min(high, diagonal - 1)
            if new_pos + 1 >= len(new):
                low = max(low, diagonal + 1)
    raise AssertionError("the edit graph always has a path")


def numbered_diff(old_text: str, new_text: str, context: int = CONTEXT_LINES) -> tuple[str, int | None]:
    """pi's ``details.diff`` (``+NN``/``-NN``/`` NN`` lines, `` ...`` gaps) and firstChangedLine."""
    changes = diff_lines(old_text, new_text)
    width = len(str(max(len(old_text.split("\n")), len(new_text.split("\n")))))
    out: list[str] = []
    old_no = new_no = 1
    first_changed: int | None = None
    after_change = False
    gap = f" {'':>{width}} ..."

    def show(prefix: str, number: int, line: str) -> None:
        out.append(f"{prefix}{number:>{width}} {line}")

    for index, change in enumerate(changes):
        lines = change.value.split("\n")
        if lines[-1] == "":
            lines.pop()
        if change.kind != "=":
            if first_changed is None:
                first_changed = new_no
            for line in lines:
                if change.kind == "+":
                    show("+", new_no, line)
                    new_no += 1
                else:
                    show("-", old_no, line)
                    old_no += 1
            after_change = True
            continue
        before_change = index < len(changes) - 1 and changes[index + 1].kind != "="
        if after_change and before_change and len(lines) > context * 2:
            shown_head, shown_tail = lines[:context], lines[len(lines) - context :]
            skipped = len(lines) - 2 * context
        elif after_change and before_change:
            shown_head, shown_tail, skipped = lines, [], 0
        elif after_change:
            shown_head, shown_tail = lines[:context], []
            skipped = len(lines) - len(shown_head)
        elif before_change:
            skipped = max(0, len(lines) - context)
            shown_head, shown_tail = [], lines[skipped:]
        else:
            old_no += len(lines)
            new_no += len(lines)
            after_change = False
            continue
        for line in shown_head:
            show(" ", old_no, line)
            old_no += 1
            new_no += 1
        if skipped > 0:
            out.append(gap)
            old_no += skipped
            new_no += skipped
        for line in shown_tail:
            show(" ", old_no, line)
            old_no += 1
            new_no += 1
        after_change = False
    return "\n".join(out), first_changed


@dataclass(frozen=True)
class Hunk:
    """One hunk of a unified diff: ``header`` is its ``@@ -a,b +c,d @@`` line, ``diff`` the hunk's
    text (header first) exactly as it appears in :func:`unified_diff`."""

    index: int
    header: str
    diff: str

    def to_wire(self) -> dict[str, object]:
        return {"index": self.index, "header": self.header, "diff": self.diff}


def _range(start: int, stop: int) -> str:
    """A hunk header's ``start,length`` as ``diff -u`` writes it (``0,0`` style for empty sides)."""
    length = stop - start
    if length == 1:
        return str(start + 1)
    return f"{start if length == 0 else start + 1},{length}"


def _diff_line(prefix: str, line: str) -> str:
    return prefix + (line if line.endswith("\n") else f"{line}\n\\ No newline at end of file\n")


def _split(before: str | None, after: str) -> tuple[list[str], list[str]]:
    return ([] if before is None else _LINES_WITH_ENDS.findall(before)), _LINES_WITH_ENDS.findall(after)


def _groups(old: list[str], new: list[str]) -> list[list[tuple[str, int, int, int, int]]]:
    """The opcodes of each hunk, with 3 lines of context (``difflib.unified_diff``'s grouping)."""
    return list(difflib.SequenceMatcher(None, old, new).get_grouped_opcodes(UNIFIED_CONTEXT))


def diff_hunks(before: str | None, after: str) -> list[Hunk]:
    """The hunks of the unified diff from ``before`` (None = no file) to ``after``."""
    old, new = _split(before, after)
    hunks: list[Hunk] = []
    for index, group in enumerate(_groups(old, new)):
        first, last = group[0], group[-1]
        header = f"@@ -{_range(first[1], last[2])} +{_range(first[3], last[4])} @@"
        text = header + "\n"
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                text += "".join(_diff_line(" ", line) for line in old[i1:i2])
                continue
            text += "".join(_diff_line("-", line) for line in old[i1:i2])
            text += "".join(_diff_line("+", line) for line in new[j1:j2])
        hunks.append(Hunk(index, header, text))
    return hunks


def apply_hunks(before: str | None, after: str, chosen: set[int]) -> str:
    """``before`` with only the hunks of :func:`diff_hunks` numbered in ``chosen`` applied; the
    rest of the file stays as ``before`` has it."""
    old, new = _split(before, after)
    matcher = difflib.SequenceMatcher(None, old, new)
    hunk_of = {
        opcode: index
        for index, group in enumerate(_groups(old, new))
        for opcode in group
        if opcode[0] != "equal"
    }
    parts: list[str] = []
    for opcode in matcher.get_opcodes():
        _tag, i1, i2, j1, j2 = opcode
        taken = opcode[0] != "equal" and hunk_of.get(opcode) in chosen
        parts.extend(new[j1:j2] if taken else old[i1:i2])
    return "".join(parts)


def unified_diff(
    path: str, before: str | None, after: str, *, old_label: str | None = None, new_label: str | None = None
) -> str:
    """A standard unified diff (``---``/``+++``/``@@``) for editors; ``before`` None = new file.

    The labels name the two sides (default: ``path``, ``/dev/null`` for a new file)."""
    hunks = diff_hunks(before, after)
    if not hunks:
        return ""
    old_name = old_label or ("/dev/null" if before is None else path)
    return f"--- {old_name}\n+++ {new_label or path}\n" + "".join(hunk.diff for hunk in hunks)
