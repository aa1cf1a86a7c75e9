"""``build_system_prompt``: the prompt text, byte-equal to pi 0.73.1's ``buildSystemPrompt``.

Given the same inputs (tools with their snippets and guidelines, context files, skills, custom and
append prompts, cwd and date) the output equals what pi sends, which the oracle tests check. The
fixed wording lives in :mod:`pi_lsp.prompt.pi_text`; this module only decides order and spacing.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import lru_cache

from pi_lsp.prompt import pi_text
from pi_lsp.prompt.context_files import ContextFile
from pi_lsp.prompt.skills import Skill, format_skills_for_prompt

__all__ = [
    "PiDocsPaths",
    "SystemPromptOptions",
    "ToolMetadata",
    "build_system_prompt",
    "builtin_tool_metadata",
    "local_date",
    "pi_docs_paths",
]

PACKAGE_DIR_ENV = "PI_PACKAGE_DIR"
# Where `npm install -g @mariozechner/pi-coding-agent` puts pi with npm's default prefix; used for
# the docs paths only when no pi installation can be found.
FALLBACK_PACKAGE_DIR = "/usr/local/lib/node_modules/@mariozechner/pi-coding-agent"


@dataclass(frozen=True)
class PiDocsPaths:
    """The three absolute paths pi embeds in its documentation block."""

    readme: str
    docs: str
    examples: str

    @classmethod
    def from_package_dir(cls, package_dir: str) -> PiDocsPaths:
        """Paths inside a pi package directory, resolved like Node's ``path.resolve``."""
        base = os.path.abspath(package_dir)
        join = os.path.join
        return cls(join(base, "README.md"), join(base, "docs"), join(base, "examples"))


@lru_cache(maxsize=1)
def _installed_package_dir() -> str | None:
    executable = shutil.which("pi")
    if executable is None:
        return None
    current = os.path.dirname(os.path.realpath(executable))
    while current != os.path.dirname(current):
        if os.path.exists(os.path.join(current, "package.json")):
            return current
        current = os.path.dirname(current)
    return None


def pi_docs_paths(package_dir: str | None = None) -> PiDocsPaths:
    """pi's docs paths: ``package_dir``, else ``$PI_PACKAGE_DIR``, else the installed ``pi``.

    pi points its prompt at its own package directory; we do the same when pi is installed, so the
    prompt stays equal to the one pi would send on this machine.
    """
    if package_dir is None:
        configured = os.environ.get(PACKAGE_DIR_ENV)
        if configured:
            home = os.path.expanduser("~")
            tilde = configured == "~" or configured.startswith("~/")
            package_dir = home + configured[1:] if tilde else configured
        else:
            package_dir = _installed_package_dir() or FALLBACK_PACKAGE_DIR
    return PiDocsPaths.from_package_dir(package_dir)


@dataclass(frozen=True)
class ToolMetadata:
    """One-line snippets (by tool name) and prompt guidelines for the selected tools."""

    snippets: dict[str, str] = field(default_factory=dict)
    guidelines: list[str] = field(default_factory=list)


def _one_line(text: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"[\r\n]+", " ", text)).strip()


def builtin_tool_metadata(
    tools: Sequence[str],
    extra_snippets: Mapping[str, str] | None = None,
    extra_guidelines: Mapping[str, Sequence[str]] | None = None,
) -> ToolMetadata:
    """Snippets and guidelines for ``tools`` in order, as pi's agent session collects them.

    Built-in tools use pi's definitions; ``extra_snippets``/``extra_guidelines`` describe other
    tools (or override built-ins). Snippets are collapsed to one line; each tool's guidelines are
    trimmed and de-duplicated; a tool without a snippet is not listed by the prompt.
    """
    metadata = ToolMetadata()
    for name in tools:
        snippet = (extra_snippets or {}).get(name, pi_text.BUILTIN_TOOL_SNIPPETS.get(name))
        if snippet and (one_line := _one_line(snippet)):
            metadata.snippets[name] = one_line
        raw = (extra_guidelines or {}).get(name, pi_text.BUILTIN_TOOL_GUIDELINES.get(name, ()))
        seen: list[str] = []
        for guideline in raw:
            trimmed = guideline.strip()
            if trimmed and trimmed not in seen:
                seen.append(trimmed)
        metadata.guidelines.extend(seen)
    return metadata


def local_date(now: datetime | None = None) -> str:
    """``YYYY-MM-DD`` of the local calendar day (pi 0.73 prints the local date, not UTC).

    An aware ``now`` is taken in its own time zone; a naive one as local time.
    """
    moment = now if now is not None else datetime.now()
    return f"{moment.year:04d}-{moment.month:02d}-{moment.day:02d}"


@dataclass(frozen=True)
class SystemPromptOptions:
    """pi's ``BuildSystemPromptOptions``.

    ``selected_tools`` None means pi's default (read, bash, edit, write); ``tool_snippets`` and
    ``prompt_guidelines`` are taken as given (see :func:`builtin_tool_metadata` to fill them like
    pi's agent session does). ``docs`` None resolves pi's docs paths with :func:`pi_docs_paths`.
    """

    cwd: str
    custom_prompt: str | None = None
    selected_tools: Sequence[str] | None = None
    tool_snippets: Mapping[str, str] | None = None
    prompt_guidelines: Sequence[str] | None = None
    append_system_prompt: str | None = None
    context_files: Sequence[ContextFile] = ()
    skills: Sequence[Skill] = ()
    now: datetime | None = None
    docs: PiDocsPaths | None = None


def _context_section(files: Iterable[ContextFile]) -> str:
    rendered = "".join(pi_text.CONTEXT_FILE_SECTION.format(path=f.path, content=f.content) for f in files)
    return pi_text.PROJECT_CONTEXT_HEADER + rendered if rendered else ""


def _tail(options: SystemPromptOptions, include_skills: bool) -> str:
    """Append section, project context, skills, date and cwd: shared by both prompt forms."""
    prompt = f"\n\n{options.append_system_prompt}" if options.append_system_prompt else ""
    if options.context_files:
        prompt += _context_section(options.context_files)
    if include_skills and options.skills:
        prompt += format_skills_for_prompt(options.skills)
    prompt += pi_text.DATE_LINE.format(date=local_date(options.now))
    prompt += pi_text.CWD_LINE.format(cwd=options.cwd.replace("\\", "/"))
    return prompt


def _guidelines(tools: Sequence[str], extra: Iterable[str]) -> list[str]:
    ordered: list[str] = []

    def add(guideline: str) -> None:
        if guideline not in ordered:
            ordered.append(guideline)

    if "bash" in tools:
        exploring = any(name in tools for name in ("grep", "find", "ls"))
        add(pi_text.GUIDELINE_PREFER_TOOLS if exploring else pi_text.GUIDELINE_BASH_ONLY)
    for guideline in extra:
        if normalized := guideline.strip():
            add(normalized)
    for guideline in pi_text.GUIDELINES_ALWAYS:
        add(guideline)
    return ordered


def build_system_prompt(options: SystemPromptOptions) -> str:
    """The system prompt pi would build from ``options``.

    A non-empty custom prompt replaces the identity, tools, guidelines and docs block; an empty
    one falls back to the default prompt. Skills are listed only when the ``read`` tool is
    selected (with a custom prompt: also when no tool selection was given).
    """
    if options.custom_prompt:
        has_read = options.selected_tools is None or "read" in options.selected_tools
        return options.custom_prompt + _tail(options, has_read)
    selected = options.selected_tools
    tools = list(selected) if selected is not None else list(pi_text.DEFAULT_TOOLS)
    snippets = options.tool_snippets or {}
    visible = [name for name in tools if snippets.get(name)]
    tool_lines = "\n".join(f"- {name}: {snippets[name]}" for name in visible) or pi_text.NO_TOOLS
    guidelines = "\n".join(f"- {g}" for g in _guidelines(tools, options.prompt_guidelines or ()))
    docs = options.docs if options.docs is not None else pi_docs_paths()
    prompt = (
        f"{pi_text.IDENTITY}\n\n"
        f"{pi_text.TOOLS_HEADING}\n{tool_lines}\n\n"
        f"{pi_text.CUSTOM_TOOLS_NOTE}\n\n"
        f"{pi_text.GUIDELINES_HEADING}\n{guidelines}\n\n"
        + pi_text.DOCS_BLOCK.format(readme=docs.readme, docs=docs.docs, examples=docs.examples)
    )
    return prompt + _tail(options, "read" in tools)
