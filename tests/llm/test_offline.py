"""The offline digest: labelled, deterministic, in the checkpoint layout, merging earlier summaries."""

from __future__ import annotations

from typing import Any

from pi_lsp.llm.offline import (
    OFFLINE_LABEL,
    offline_branch_summary,
    offline_history_summary,
    offline_turn_prefix_summary,
    parse_sections,
)
from tests.compaction.helpers import BEFORE, load_entries

SECTIONS = ["## Goal", "## Constraints & Preferences", "## Progress", "### Done", "### In Progress",
            "### Blocked", "## Key Decisions", "## Next Steps", "## Critical Context"]  # fmt: skip


def conversation() -> list[dict[str, Any]]:
    return [
        {"role": "user", "content": "Add a --verbose flag to cli.py. Never touch setup.py."},
        {"role": "assistant", "content": [
            {"type": "text", "text": "Reading the CLI."},
            {"type": "toolCall", "id": "c1", "name": "read", "arguments": {"path": "cli.py"}},
            {"type": "toolCall", "id": "c2", "name": "edit", "arguments": {"path": "cli.py", "oldText": "a",
                                                                          "newText": "b"}},
            {"type": "toolCall", "id": "c3", "name": "bash", "arguments": {"command": "pytest -q"}},
        ]},
        {"role": "toolResult", "toolCallId": "c3", "toolName": "bash", "isError": True,
         "content": [{"type": "text", "text": "E   AssertionError: verbose missing\nmore"}]},
        {"role": "bashExecution", "command": "make lint", "output": "", "exitCode": 2},
        {"role": "user", "content": [{"type": "text", "text": "Now document the flag in README.md"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "Documenting it next."}]},
    ]  # fmt: skip


def test_history_digest_layout_and_content() -> None:
    summary = offline_history_summary(conversation())
    assert summary.startswith(OFFLINE_LABEL)
    positions = [summary.index("\n" + h + "\n") for h in SECTIONS]
    assert positions == sorted(positions)
    assert "- Add a --verbose flag to cli.py. Never touch setup.py." in summary
    assert "Never touch setup.py." in summary.split("## Constraints & Preferences")[1].split("## Progress")[0]
    assert "Tool calls: bash ×1, edit ×1, read ×1" in summary
    assert "- [x] Changed `cli.py`" in summary and "`make lint` exited with code 2" in summary
    assert "`bash` failed: E AssertionError: verbose missing" in summary
    assert "1. Continue with the latest request: Now document the flag in README.md" in summary
    assert "- Modified: `cli.py`" in summary and "Read: `cli.py`" not in summary  # read-then-edited
    assert offline_history_summary(conversation()) == summary  # deterministic


def test_update_carries_previous_items_forward() -> None:
    previous = (
        "## Goal\n- Ship release 2.0\n\n## Progress\n### Done\n- [x] Bumped version\n\n### In Progress\n"
        "- [ ] Old work\n\n## Key Decisions\n- **Use uv**: faster\n\n## Next Steps\n1. Old step\n\n"
        "<read-files>\nold.py\n</read-files>"
    )
    summary = offline_history_summary(conversation(), previous, focus="the flag")
    assert "- Ship release 2.0" in summary and "- [x] Bumped version" in summary
    assert "- **Use uv**: faster" in summary
    assert "Old work" not in summary and "Old step" not in summary  # replaced by the current state
    assert "old.py" not in summary  # file blocks are re-derived by the caller, not copied
    assert "Requested focus (not applied offline): the flag" in summary
    assert parse_sections(summary)["## Goal"][0] == "- Ship release 2.0"


def test_turn_prefix_and_branch_digests() -> None:
    prefix = offline_turn_prefix_summary(conversation()[:3])
    assert prefix.startswith(OFFLINE_LABEL)
    assert "## Original Request\nAdd a --verbose flag" in prefix
    assert "## Early Progress" in prefix and "## Context for Suffix" in prefix
    branch = offline_branch_summary(conversation())
    assert "## Critical Context" not in branch and "## Next Steps" in branch


def test_empty_and_real_sessions() -> None:
    empty = offline_history_summary([])
    assert "## Goal\n- (no user request in this part)" in empty
    entries = load_entries(BEFORE)
    messages = [e["message"] for e in entries if e["type"] == "message"]
    digest = offline_history_summary(messages)
    assert len(digest) < 20000 and digest.count("\n## ") == 6
