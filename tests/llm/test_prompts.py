"""Prompt layout and the stored-summary format strings pi readers depend on."""

from __future__ import annotations

import pytest

from pi_lsp.llm import prompts

HISTORY_HEADINGS = [
    "## Goal", "## Constraints & Preferences", "## Progress", "### Done", "### In Progress", "### Blocked",
    "## Key Decisions", "## Next Steps", "## Critical Context",
]  # fmt: skip


@pytest.mark.parametrize("text", [prompts.HISTORY_INSTRUCTIONS, prompts.UPDATE_INSTRUCTIONS])
def test_history_instructions_have_pi_sections_in_order(text: str) -> None:
    positions = [text.index(h + "\n") for h in HISTORY_HEADINGS]
    assert positions == sorted(positions)


def test_branch_and_turn_prefix_sections() -> None:
    branch = prompts.BRANCH_INSTRUCTIONS
    assert "## Critical Context" not in branch
    assert all(h in branch for h in HISTORY_HEADINGS[:-1])
    prefix = prompts.TURN_PREFIX_INSTRUCTIONS
    assert [
        prefix.index(h) for h in ("## Original Request", "## Early Progress", "## Context for Suffix")
    ] == sorted(
        prefix.index(h) for h in ("## Original Request", "## Early Progress", "## Context for Suffix")
    )


def test_history_prompt_wrapping() -> None:
    initial = prompts.history_prompt("[User]: hi")
    assert initial.startswith("<conversation>\n[User]: hi\n</conversation>\n\n")
    assert initial.endswith(prompts.HISTORY_INSTRUCTIONS)
    update = prompts.history_prompt("[User]: hi", "OLD SUMMARY", "focus on tests")
    assert "</conversation>\n\n<previous-summary>\nOLD SUMMARY\n</previous-summary>\n\n" in update
    assert update.endswith(prompts.UPDATE_INSTRUCTIONS + "\n\nAdditional focus: focus on tests")
    assert prompts.history_prompt("x", "", None).endswith(prompts.HISTORY_INSTRUCTIONS)  # empty = no summary


def test_turn_prefix_and_branch_prompts() -> None:
    assert (
        prompts.turn_prefix_prompt("t")
        == "<conversation>\nt\n</conversation>\n\n" + prompts.TURN_PREFIX_INSTRUCTIONS
    )
    assert prompts.branch_prompt("t", "mine", True).endswith("</conversation>\n\nmine")
    assert prompts.branch_prompt("t", "mine").endswith(
        prompts.BRANCH_INSTRUCTIONS + "\n\nAdditional focus: mine"
    )
    assert prompts.branch_prompt("t", None, True).endswith(prompts.BRANCH_INSTRUCTIONS)


def test_format_anchors() -> None:
    assert prompts.NO_PRIOR_HISTORY == "No prior history."
    assert prompts.join_split_turn("H", "P") == "H\n\n---\n\n**Turn Context (split turn):**\n\nP"
    assert prompts.finish_branch_summary("S", ["r"], []) == (
        "The user explored a different conversation branch before returning here.\n"
        "Summary of that exploration:\n\nS\n\n<read-files>\nr\n</read-files>"
    )
    assert prompts.history_max_tokens(16384) == 13107
    assert prompts.turn_prefix_max_tokens(16384) == 8192
    assert prompts.BRANCH_MAX_TOKENS == 2048
