"""What a user can type after ``/`` (``pi/getCommands``) and how pi expands it before a run.

pi lists prompt templates first, then skills as ``skill:<name>``; it expands ``/skill:name args``
first and then a ``/template args``, and stores the expanded text as the user message.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pi_lsp.prompt.skill_discovery import discover_skills
from pi_lsp.prompt.skills import Skill
from pi_lsp.prompt.templates import (
    PromptTemplate,
    discover_prompt_templates,
    expand_prompt_template,
    expand_skill_command,
)

__all__ = ["SlashCommands", "load_slash_commands"]


@dataclass(frozen=True)
class SlashCommands:
    """The templates and skills of one workspace."""

    templates: tuple[PromptTemplate, ...]
    skills: tuple[Skill, ...]

    def expand(self, text: str) -> str:
        """The text pi would send and store for what the user typed."""
        return expand_prompt_template(expand_skill_command(text, self.skills), self.templates)

    def to_wire(self) -> list[dict[str, Any]]:
        """``pi/getCommands``' ``commands``: ``{name, description, source, path}`` in pi's order."""
        commands: list[dict[str, Any]] = [
            {"name": t.name, "description": t.description, "source": "prompt", "path": t.file_path}
            for t in self.templates
        ]
        commands += [
            {"name": f"skill:{s.name}", "description": s.description, "source": "skill", "path": s.file_path}
            for s in self.skills
        ]
        return commands


def load_slash_commands(cwd: str, agent_dir: str, *, home: str | None = None) -> SlashCommands:
    """Discover the templates and skills pi would offer in ``cwd``."""
    templates = discover_prompt_templates(cwd, agent_dir, home=home)
    skills: Sequence[Skill] = discover_skills(cwd, agent_dir, home=home).skills
    return SlashCommands(tuple(templates), tuple(skills))
