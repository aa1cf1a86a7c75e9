"""One call that gathers everything for a cwd and builds pi's system prompt, with token accounting.

This is the domain side of ``pi/getSystemPrompt`` and ``pi/listSkills``: discovery (context files,
SYSTEM.md/APPEND_SYSTEM.md, settings, skills) runs on every call, so a rebuild after a watcher
callback always sees the files as they are now. ``PromptResult.to_json()`` and ``list_skills``
return exactly the wire shapes of ``docs/protocol.md``.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal, NotRequired, Protocol, TypedDict

from pi_lsp.agent_dir import agent_dir as default_agent_dir
from pi_lsp.jscompat import js_len
from pi_lsp.prompt import pi_text
from pi_lsp.prompt.context_files import ContextFile, load_project_context_files
from pi_lsp.prompt.resources import PromptSources, load_settings, resolve_prompt_sources
from pi_lsp.prompt.skill_discovery import discover_skills
from pi_lsp.prompt.skills import Skill, SkillDiagnostic, SkillLoadResult, format_skill_entry
from pi_lsp.prompt.system_prompt import (
    PiDocsPaths,
    SystemPromptOptions,
    build_system_prompt,
    builtin_tool_metadata,
)

__all__ = [
    "CharEstimateTokenizer",
    "DiagnosticJson",
    "PromptResult",
    "PromptResultJson",
    "PromptSource",
    "SkillJson",
    "SkillListJson",
    "SourceJson",
    "TokenCounter",
    "assemble_system_prompt",
    "list_skills",
    "skill_json",
    "skill_list_json",
]

SourceKind = Literal["agents", "system", "append", "skill"]
Severity = Literal["error", "warning", "info"]


class TokenCounter(Protocol):
    """Anything that counts tokens in a text (e.g. ``pi_lsp.compaction.tokens.make_tokenizer()``)."""

    def count(self, text: str) -> int: ...


class CharEstimateTokenizer:
    """pi's estimate: ``ceil(chars / 4)`` with JavaScript (UTF-16) character counts."""

    def count(self, text: str) -> int:
        """Estimated tokens of ``text``."""
        return math.ceil(js_len(text) / 4)


class SourceJson(TypedDict):
    kind: SourceKind
    path: str
    tokens: int


class SkillJson(TypedDict):
    name: str
    description: str
    path: str
    baseDir: str
    source: str
    disableModelInvocation: bool
    sourceInfo: NotRequired[dict[str, str]]


class DiagnosticJson(TypedDict):
    path: str
    severity: Severity
    message: str


class PromptResultJson(TypedDict):
    text: str
    tokens: int
    sources: list[SourceJson]
    skills: list[SkillJson]
    diagnostics: list[DiagnosticJson]


class SkillListJson(TypedDict):
    skills: list[SkillJson]
    diagnostics: list[DiagnosticJson]


@dataclass(frozen=True)
class PromptSource:
    """A file that contributed to the prompt and the tokens of the text it contributed."""

    kind: SourceKind
    path: str
    tokens: int

    def to_json(self) -> SourceJson:
        """The wire shape ``{kind, path, tokens}``."""
        return {"kind": self.kind, "path": self.path, "tokens": self.tokens}


@dataclass
class PromptResult:
    """The assembled prompt plus what went into it.

    ``sources`` lists files only, in prompt order (a custom or append prompt given with the
    request has no file and no entry). ``skills`` are all discovered skills, including those not
    shown to the model; ``skill_diagnostics`` keep pi's typed diagnostics for editor use.
    """

    cwd: str
    agent_dir: str
    text: str
    tokens: int
    sources: list[PromptSource] = field(default_factory=list)
    skills: list[Skill] = field(default_factory=list)
    skill_diagnostics: list[SkillDiagnostic] = field(default_factory=list)
    context_files: list[ContextFile] = field(default_factory=list)
    problems: list[DiagnosticJson] = field(default_factory=list)

    @property
    def diagnostics(self) -> list[DiagnosticJson]:
        """Skill diagnostics and file problems in the wire shape."""
        return [*(_diagnostic_json(d) for d in self.skill_diagnostics), *self.problems]

    def to_json(self) -> PromptResultJson:
        """The ``pi/getSystemPrompt`` result."""
        return {
            "text": self.text,
            "tokens": self.tokens,
            "sources": [source.to_json() for source in self.sources],
            "skills": [skill_json(skill) for skill in self.skills],
            "diagnostics": self.diagnostics,
        }


_SCOPE_LABELS = {"project": "project", "user": "user"}


def skill_json(skill: Skill) -> SkillJson:
    """A skill in the ``pi/listSkills`` shape; ``source`` is project, user or path."""
    return {
        "name": skill.name,
        "description": skill.description,
        "path": skill.file_path,
        "baseDir": skill.base_dir,
        "source": _SCOPE_LABELS.get(skill.source_info.scope, "path"),
        "disableModelInvocation": skill.disable_model_invocation,
        "sourceInfo": skill.source_info.to_json(),
    }


def _diagnostic_json(diagnostic: SkillDiagnostic) -> DiagnosticJson:
    severity: Severity = "error" if diagnostic.type == "error" else "warning"
    return {"path": diagnostic.path or "", "severity": severity, "message": diagnostic.message}


def list_skills(
    cwd: str, agent_dir: str | os.PathLike[str] | None = None, *, home: str | None = None
) -> SkillListJson:
    """The ``pi/listSkills`` result for ``cwd``: every skill pi would load, with diagnostics."""
    cwd = os.path.abspath(cwd)
    resolved_agent_dir = os.fspath(agent_dir) if agent_dir is not None else str(default_agent_dir())
    return skill_list_json(discover_skills(cwd, resolved_agent_dir, home=home))


def skill_list_json(loaded: SkillLoadResult) -> SkillListJson:
    """Found skills and their diagnostics in the ``pi/listSkills`` shape."""
    return {
        "skills": [skill_json(skill) for skill in loaded.skills],
        "diagnostics": [_diagnostic_json(d) for d in loaded.diagnostics],
    }


def _file_sources(
    prompt_sources: PromptSources,
    context_files: Sequence[ContextFile],
    skills_in_prompt: Sequence[Skill],
    counter: TokenCounter,
) -> list[PromptSource]:
    sources: list[PromptSource] = []
    system = prompt_sources.system
    if system is not None and system.path is not None and system.text:
        sources.append(PromptSource("system", system.path, counter.count(system.text)))
    for item in prompt_sources.append:
        if item.path is not None:
            sources.append(PromptSource("append", item.path, counter.count(item.text)))
    for context in context_files:
        section = pi_text.CONTEXT_FILE_SECTION.format(path=context.path, content=context.content)
        sources.append(PromptSource("agents", context.path, counter.count(section)))
    for skill in skills_in_prompt:
        entry = format_skill_entry(skill) + "\n"
        sources.append(PromptSource("skill", skill.file_path, counter.count(entry)))
    return sources


def assemble_system_prompt(
    cwd: str,
    *,
    agent_dir: str | os.PathLike[str] | None = None,
    tools: Sequence[str] | None = None,
    custom_prompt: str | None = None,
    append_prompt: str | None = None,
    tokenizer: TokenCounter | None = None,
    now: datetime | None = None,
    home: str | None = None,
    docs: PiDocsPaths | None = None,
    tool_snippets: Mapping[str, str] | None = None,
    tool_guidelines: Mapping[str, Sequence[str]] | None = None,
) -> PromptResult:
    """Discover everything for ``cwd`` and build the prompt pi would send.

    ``tools`` defaults to pi's active set (read, bash, edit, write); built-in tools get pi's
    snippets and guidelines, others need ``tool_snippets`` to be listed. ``custom_prompt`` and
    ``append_prompt`` are request text and replace SYSTEM.md / APPEND_SYSTEM.md discovery (an
    empty custom prompt means "default prompt"). ``now`` fixes the date line (local date by
    default); ``home`` overrides ``$HOME`` for ``~/.agents/skills``; ``docs`` overrides pi's docs
    paths. The tokenizer defaults to pi's chars/4 estimate.
    """
    cwd = os.path.abspath(cwd)
    resolved_agent_dir = os.fspath(agent_dir) if agent_dir is not None else str(default_agent_dir())
    counter = tokenizer if tokenizer is not None else CharEstimateTokenizer()
    selected = list(tools) if tools is not None else list(pi_text.DEFAULT_TOOLS)

    settings = load_settings(cwd, resolved_agent_dir)
    prompt_sources = resolve_prompt_sources(
        cwd, resolved_agent_dir, custom_prompt=custom_prompt, append_prompt=append_prompt
    )
    context = load_project_context_files(cwd, resolved_agent_dir)
    loaded = discover_skills(cwd, resolved_agent_dir, home=home, settings=settings)
    metadata = builtin_tool_metadata(selected, tool_snippets, tool_guidelines)

    text = build_system_prompt(
        SystemPromptOptions(
            cwd=cwd,
            custom_prompt=prompt_sources.custom_prompt,
            selected_tools=selected,
            tool_snippets=metadata.snippets,
            prompt_guidelines=metadata.guidelines,
            append_system_prompt=prompt_sources.append_prompt,
            context_files=context.files,
            skills=loaded.skills,
            now=now,
            docs=docs,
        )
    )
    in_prompt = [s for s in loaded.skills if not s.disable_model_invocation] if "read" in selected else []
    problems: list[DiagnosticJson] = [
        {"path": path, "severity": "warning", "message": message}
        for path, message in (*settings.problems, *prompt_sources.problems)
    ]
    problems.extend({"path": p.path, "severity": "warning", "message": p.message} for p in context.problems)
    return PromptResult(
        cwd=cwd,
        agent_dir=resolved_agent_dir,
        text=text,
        tokens=counter.count(text),
        sources=_file_sources(prompt_sources, context.files, in_prompt, counter),
        skills=loaded.skills,
        skill_diagnostics=loaded.diagnostics,
        context_files=context.files,
        problems=problems,
    )
