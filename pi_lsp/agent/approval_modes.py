"""The approval policy's modes, apart from the policy itself: settings read them at start-up, before
any tool module (which the policy needs to judge a call) is worth importing."""

from __future__ import annotations

from pi_lsp.protocol.enums import APPROVAL_POLICY

APPROVAL_MODES = APPROVAL_POLICY.values  # loosest first
DEFAULT_APPROVAL = "acceptEdits"
_STRICTNESS = {mode: rank for rank, mode in enumerate(APPROVAL_MODES)}


def stricter(first: str, second: str | None) -> str:
    """The stricter of two modes (a workspace may tighten the policy, never loosen it)."""
    if second is None or second not in _STRICTNESS:
        return first
    return second if _STRICTNESS[second] > _STRICTNESS[first] else first
