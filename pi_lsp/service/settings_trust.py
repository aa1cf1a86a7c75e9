"""Which settings a workspace's ``.pi/settings.json`` may set: the trust rule of every key.

pi merges a project's ``.pi/settings.json`` over the user's own settings. But a repository the user
merely cloned controls that file, so pi-lsp takes from it only what cannot run a program, send the
conversation elsewhere, widen the agent's tools or where files are written, loosen approvals, or
spend the user's money without bound. Every key pi-lsp reads has a rule here:

* ``workspace``: merged as pi merges it (compaction thresholds, the tokenizer, the model…);
* ``user``: read from the user's own layers only (``<agentDir>/settings.json``, the editor's
  ``initializationOptions.pi`` and ``workspace/didChangeConfiguration``); a workspace value is
  ignored and reported;
* ``tighten`` (``approval``): a workspace may make it stricter, never looser;
* ``narrow`` (``tools``): a workspace list keeps only the user's tools it names, in the user's
  order; it never adds one.

A key with no rule (pi's keys pi-lsp does not read) is dropped from the workspace layer, so a key
added to pi-lsp later is the user's alone until it is given a rule. ``docs/security.md`` has the
table with the reasons.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal, TypeGuard

from pi_lsp.agent.approval_modes import APPROVAL_MODES, stricter

__all__ = [
    "RULES",
    "IgnoredSetting",
    "Rule",
    "ignored_workspace_settings",
    "narrowed_tools",
    "rule_for",
    "workspace_layer",
]

Who = Literal["workspace", "user", "tighten", "narrow"]


@dataclass(frozen=True, slots=True)
class Rule:
    """Who may set a key, and (for ``user`` keys) why a workspace may not."""

    who: Who
    why: str = ""


@dataclass(frozen=True, slots=True)
class IgnoredSetting:
    """A workspace value that was not applied: its key path and the sentence saying why."""

    key: tuple[str, ...]
    message: str


_WORKSPACE = Rule("workspace")
_RETRIES = "it sets how often a failed model call is repeated, each time at your cost"

RULES: Final[Mapping[tuple[str, ...], Rule]] = {
    ("shellPath",): Rule("user", "it names the program that runs every bash command and every !cmd"),
    ("shellCommandPrefix",): Rule(
        "user", "it runs before every bash command and every !cmd, and approvals show only the command"
    ),
    ("sessionDir",): Rule(
        "user", "it decides where your conversations are written and which session files are listed"
    ),
    ("retry", "maxRetries"): Rule("user", _RETRIES),
    ("retry", "provider", "maxRetries"): Rule("user", _RETRIES),
    ("approval",): Rule("tighten"),
    ("tools",): Rule("narrow"),
    ("contextWindow",): _WORKSPACE,
    ("compaction",): _WORKSPACE,
    ("branchSummary",): _WORKSPACE,
    ("model",): _WORKSPACE,
    ("summarizer",): _WORKSPACE,
    ("tokenizer",): _WORKSPACE,
    ("thinkingLevel",): _WORKSPACE,
    ("thinkingBudgets",): _WORKSPACE,
    ("images",): _WORKSPACE,
    ("steeringMode",): _WORKSPACE,
    ("followUpMode",): _WORKSPACE,
    ("retry",): _WORKSPACE,
    ("skills",): _WORKSPACE,
    ("prompts",): _WORKSPACE,
}


def rule_for(key: tuple[str, ...]) -> Rule | None:
    """The rule of ``key``: its own, else its nearest parent's; None for a key nobody reads."""
    for length in range(len(key), 0, -1):
        rule = RULES.get(key[:length])
        if rule is not None:
            return rule
    return None


def _has_rules_below(key: tuple[str, ...]) -> bool:
    return any(len(other) > len(key) and other[: len(key)] == key for other in RULES)


def workspace_layer(project: Mapping[str, Any], prefix: tuple[str, ...] = ()) -> dict[str, Any]:
    """The part of a workspace's settings that is merged as pi merges it (``workspace`` keys)."""
    kept: dict[str, Any] = {}
    for name, value in project.items():
        key = (*prefix, name)
        rule = rule_for(key)
        if isinstance(value, Mapping) and _has_rules_below(key):
            inner = workspace_layer(value, key)
            if inner or (rule is not None and rule.who == "workspace"):
                kept[name] = inner
        elif rule is not None and rule.who == "workspace":
            kept[name] = value
    return kept


def narrowed_tools(user_tools: Sequence[str], workspace_tools: Any) -> list[str]:
    """The user's tools that a workspace's ``tools`` list names (all of them without a list)."""
    if not _is_name_list(workspace_tools):
        return list(user_tools)
    return [name for name in user_tools if name in workspace_tools]


def _is_name_list(value: Any) -> TypeGuard[list[str]]:
    return isinstance(value, list) and all(isinstance(name, str) for name in value)


def _present(data: Mapping[str, Any], key: tuple[str, ...]) -> bool:
    for name in key[:-1]:
        inner = data.get(name)
        if not isinstance(inner, Mapping):
            return False
        data = inner
    return key[-1] in data


def ignored_workspace_settings(
    project: Mapping[str, Any], *, user_tools: Sequence[str], user_approval: str, where: str
) -> list[IgnoredSetting]:
    """Every workspace value that is not applied (or only in part), with why and ``where`` the
    user can set it instead, in the file's key order."""
    ignored: list[IgnoredSetting] = []
    for key, rule in RULES.items():
        if rule.who != "user" or not _present(project, key):
            continue
        name = ".".join(key)
        ignored.append(
            IgnoredSetting(
                key,
                f'"{name}" is ignored in a workspace\'s .pi/settings.json: {rule.why}. Set it in {where}.',
            )
        )
    approval = project.get("approval")
    looser = isinstance(approval, str) and approval in APPROVAL_MODES and approval != user_approval
    if looser and stricter(user_approval, approval) == user_approval:
        ignored.append(
            IgnoredSetting(
                ("approval",),
                f'"approval": "{approval}" is ignored: a workspace may make approval stricter than '
                f'yours ("{user_approval}"), never looser. Set it in {where}.',
            )
        )
    tools = project.get("tools")
    if "tools" in project and not _is_name_list(tools):
        ignored.append(IgnoredSetting(("tools",), '"tools" must be a list of tool names; it is ignored.'))
    elif _is_name_list(tools):
        added = [name for name in dict.fromkeys(tools) if name not in user_tools]
        if added:
            names = ", ".join(f'"{name}"' for name in added)
            ignored.append(
                IgnoredSetting(
                    ("tools",),
                    f'{names} in "tools" {"is" if len(added) == 1 else "are"} ignored: a workspace may '
                    "only narrow the tools your settings enable, never add one. "
                    f"Enable tools in {where}.",
                )
            )
    order = list(project)
    return sorted(ignored, key=lambda item: order.index(item.key[0]) if item.key[0] in order else len(order))
