"""The approval preview's hunks: together they are exactly the unified diff (``difflib``'s text),
and applying any subset of them changes only those regions of the file."""

from __future__ import annotations

import difflib
import itertools
import random

from pi_lsp.agent.tools.diff import apply_hunks, diff_hunks, unified_diff

PIECES = ["a\n", "b\n", "c\n", "d\r\n", "\ufeffe\n", "tail"]


def _difflib(path: str, before: str | None, after: str) -> str:
    old = [] if before is None else before.splitlines(keepends=True)
    text = ""
    for line in difflib.unified_diff(
        old, after.splitlines(keepends=True), "/dev/null" if before is None else path, path
    ):
        text += line if line.endswith("\n") else f"{line}\n\\ No newline at end of file\n"
    return text


def _text(rng: random.Random) -> str:
    return "".join(rng.choice(PIECES) for _ in range(rng.randint(0, 40))).replace("tail", "", 1)


def test_hunks_make_up_the_unified_diff_and_apply_one_by_one() -> None:
    rng = random.Random(7)
    for round_ in range(400):
        before = None if round_ % 9 == 0 else _text(rng)
        after = _text(rng)
        assert unified_diff("f", before, after) == _difflib("f", before, after)
        hunks = diff_hunks(before, after)
        assert "".join(hunk.diff for hunk in hunks) == "".join(
            unified_diff("f", before, after).split("\n", 2)[2:]
        )
        for size in range(len(hunks) + 1):
            for chosen in itertools.islice(itertools.combinations(range(len(hunks)), size), 4):
                result = apply_hunks(before, after, set(chosen))
                # the chosen hunks are exactly the difference left between the result and after
                rest = [hunk.index for hunk in hunks if hunk.index not in chosen]
                assert len(diff_hunks(result, after)) <= len(rest)
                assert (result == after) == (not rest)
                if not chosen:
                    assert result == (before or "")


def test_a_hunk_keeps_a_missing_final_newline_and_crlf() -> None:
    hunks = diff_hunks("one\r\ntwo", "one\r\n2")
    missing = "\\ No newline at end of file\n"
    diff = f"@@ -1,2 +1,2 @@\n one\r\n-two\n{missing}+2\n{missing}"
    assert [hunk.to_wire() for hunk in hunks] == [{"index": 0, "header": "@@ -1,2 +1,2 @@", "diff": diff}]
    assert apply_hunks("one\r\ntwo", "one\r\n2", {0}) == "one\r\n2"
