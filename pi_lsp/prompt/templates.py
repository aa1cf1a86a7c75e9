"""Prompt templates (``/name args``) and skill commands (``/skill:name args``), expanded as pi 0.73.1.

Where templates come from (first wins a name, as pi's resource loader):

1. project ``.pi/settings.json`` ``prompts`` entries (relative to ``<cwd>/.pi``; a directory gives
   all its ``*.md`` files, recursively, minus ignore-file matches);
2. ``<cwd>/.pi/prompts/*.md`` (top level only);
3. user ``settings.json`` ``prompts`` entries (relative to the agent dir);
4. ``<agentDir>/prompts/*.md``.

Settings entries may hold ``!glob`` / ``+path`` / ``-path`` filters like skill entries. A template's
name is its file name without ``.md``; its description is the frontmatter ``description``, else
its first non-blank line (60 UTF-16 units, then ``...``). A file with invalid frontmatter or that
cannot be read is skipped, as pi skips it.

Arguments are split like a shell would for simple quoting (``"a b"`` / ``'a b'`` are one
argument, no escapes) and substituted into the body: ``$1``…, then ``${@:N}`` / ``${@:N:L}``, then
``$ARGUMENTS`` and ``$@`` (all arguments joined by spaces). Substituted values are never
expanded again.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pi_lsp.jscompat import js_len, js_trim, js_truthy
from pi_lsp.prompt.frontmatter import FrontmatterError, parse_frontmatter, strip_frontmatter
from pi_lsp.prompt.patterns import IgnoreRules
from pi_lsp.prompt.resources import PiSettings, load_settings, settings_entries
from pi_lsp.prompt.skill_discovery import (
    _apply_patterns,
    _enabled_by_overrides,
    _split_entries,
)
from pi_lsp.prompt.skills import Skill, _add_ignore_rules, canonical_path, resolve_user_path
from pi_lsp.prompt.walk_limits import RuleBudget, WalkBudget, leads_back
from pi_lsp.safe_io import read_text

__all__ = [
    "PromptTemplate",
    "discover_prompt_templates",
    "expand_prompt_template",
    "expand_skill_command",
    "load_template_file",
    "parse_command_args",
    "substitute_args",
]

DESCRIPTION_LIMIT = 60


@dataclass(frozen=True)
class PromptTemplate:
    """One ``/name`` template: its body (frontmatter removed) and where it came from."""

    name: str
    description: Any
    content: str
    file_path: str
    argument_hint: Any = None


# ---------------------------------------------------------------------------------------------
# Arguments


def parse_command_args(text: str) -> list[str]:
    """Split on spaces and tabs; single or double quotes group (and are removed), no escapes."""
    args: list[str] = []
    current = ""
    quote: str | None = None
    for char in text:
        if quote:
            if char == quote:
                quote = None
            else:
                current += char
        elif char in ('"', "'"):
            quote = char
        elif char in (" ", "\t"):
            if current:
                args.append(current)
                current = ""
        else:
            current += char
    if current:
        args.append(current)
    return args


_POSITIONAL = re.compile(r"\$(\d+)")
_SLICE = re.compile(r"\$\{@:(\d+)(?::(\d+))?\}")


def substitute_args(content: str, args: Sequence[str]) -> str:
    """Fill ``$1``, ``${@:N[:L]}``, ``$ARGUMENTS`` and ``$@`` in ``content`` (in that order)."""

    def positional(match: re.Match[str]) -> str:
        index = int(match.group(1)) - 1
        return args[index] if 0 <= index < len(args) else ""

    def sliced(match: re.Match[str]) -> str:
        start = max(int(match.group(1)) - 1, 0)
        if match.group(2) is not None:
            return " ".join(args[start : start + int(match.group(2))])
        return " ".join(args[start:])

    result = _POSITIONAL.sub(positional, content)
    result = _SLICE.sub(sliced, result)
    joined = " ".join(args)
    result = result.replace("$ARGUMENTS", joined)
    return result.replace("$@", joined)


def _split_command(text: str, prefix: str) -> tuple[str, str]:
    space = text.find(" ")
    if space == -1:
        return text[len(prefix) :], ""
    return text[len(prefix) : space], text[space + 1 :]


def expand_prompt_template(text: str, templates: Sequence[PromptTemplate]) -> str:
    """``text`` with a leading ``/name args`` replaced by the template's filled body (else as is)."""
    if not text.startswith("/"):
        return text
    name, args = _split_command(text, "/")
    for template in templates:
        if template.name == name:
            return substitute_args(template.content, parse_command_args(args))
    return text


def expand_skill_command(text: str, skills: Sequence[Skill]) -> str:
    """``/skill:name args`` → the skill's body in pi's ``<skill>`` block, then the arguments.

    Unknown skills and unreadable skill files leave the text unchanged (pi reports the latter as
    an extension error and sends the text as typed).
    """
    if not text.startswith("/skill:"):
        return text
    name, raw_args = _split_command(text, "/skill:")
    args = js_trim(raw_args)
    skill = next((s for s in skills if s.name == name), None)
    if skill is None:
        return text
    try:
        body = js_trim(strip_frontmatter(read_text(skill.file_path)))
    except (OSError, UnicodeDecodeError, FrontmatterError):
        return text
    block = (
        f'<skill name="{skill.name}" location="{skill.file_path}">\n'
        f"References are relative to {skill.base_dir}.\n\n{body}\n</skill>"
    )
    return f"{block}\n\n{args}" if args else block


# ---------------------------------------------------------------------------------------------
# Loading


def _js_slice(text: str, units: int) -> str:
    """``text.slice(0, units)`` in UTF-16 code units."""
    if text.isascii():
        return text[:units]
    encoded = text.encode("utf-16-le", "surrogatepass")[: units * 2]
    return encoded.decode("utf-16-le", "surrogatepass")


def load_template_file(file_path: str) -> PromptTemplate | None:
    """One template file, or None when pi would skip it (unreadable, bad frontmatter)."""
    try:
        parsed = parse_frontmatter(read_text(file_path))
    except (OSError, UnicodeDecodeError, FrontmatterError):
        return None
    fields = parsed.fields
    description: Any = fields.get("description") if js_truthy(fields.get("description")) else ""
    if not description:
        first = next((line for line in parsed.body.split("\n") if js_trim(line)), None)
        if first is not None:
            description = _js_slice(first, DESCRIPTION_LIMIT)
            if js_len(first) > DESCRIPTION_LIMIT:
                description += "..."
    name = os.path.basename(file_path)
    name = name[:-3] if name.endswith(".md") else name
    hint = fields.get("argument-hint")
    return PromptTemplate(name, description, parsed.body, file_path, hint if js_truthy(hint) else None)


def _entry_kind(path: str) -> tuple[bool, bool] | None:
    """(is_dir, is_file) following symlinks; None for a broken link."""
    try:
        return os.path.isdir(path), os.path.isfile(path)
    except OSError:
        return None


def _top_level_md(directory: str) -> list[str]:
    """pi's auto-discovered prompts: ``*.md`` directly in ``directory``, minus ignored and dot files."""
    if not os.path.isdir(directory):
        return []
    rules = IgnoreRules()
    _add_ignore_rules(rules, directory, directory)
    files = []
    try:
        names = sorted(os.listdir(directory))
    except OSError:
        return []
    for name in names:
        if name.startswith(".") or name == "node_modules":
            continue
        full = os.path.join(directory, name)
        kind = _entry_kind(full)
        if kind is None or rules.ignores(name) or not kind[1]:
            continue
        if name.endswith(".md"):
            files.append(full)
    return files


def _md_files_recursive(directory: str) -> list[str]:
    """pi's ``collectFiles(dir, /\\.md$/)`` for a directory named in settings.

    Each real directory is listed once (symlink loops and diamonds cost nothing, a link to a folder
    holding ``directory`` is not followed) and the walk keeps
    to :mod:`~pi_lsp.prompt.walk_limits`; pi itself has no such bounds.
    """
    rules = IgnoreRules()
    rule_budget = RuleBudget()
    budget = WalkBudget()
    visited: set[str] = set()
    files: list[str] = []

    real_root = canonical_path(directory)

    def walk(current: str, depth: int) -> None:
        real = canonical_path(current)
        if real in visited or (depth > 0 and leads_back(real, real_root)) or not budget.enter(depth):
            return
        visited.add(real)
        _add_ignore_rules(rules, current, directory, rule_budget)
        try:
            names = sorted(os.listdir(current))
        except OSError:
            return
        if not budget.listed(len(names)):
            return
        for name in names:
            if name.startswith(".") or name == "node_modules":
                continue
            full = os.path.join(current, name)
            kind = _entry_kind(full)
            if kind is None:
                continue
            is_dir, is_file = kind
            relative = os.path.relpath(full, directory).replace(os.sep, "/")
            if rules.ignores(relative + "/" if is_dir else relative):
                continue
            if is_dir:
                walk(full, depth + 1)
            elif is_file and name.endswith(".md"):
                files.append(full)

    walk(directory, 0)
    return files


def _settings_files(entries: Sequence[str], base_dir: str, home: str) -> list[tuple[str, bool]]:
    plain, patterns = _split_entries(entries)
    files: list[str] = []
    for raw in plain:
        path = resolve_user_path(raw, base_dir, home)
        if os.path.isfile(path):
            files.append(path)
        elif os.path.isdir(path):
            files.extend(_md_files_recursive(path))
    enabled = _apply_patterns(files, patterns, base_dir)
    return [(path, path in enabled) for path in files]


def discover_prompt_templates(
    cwd: str, agent_dir: str, *, home: str | None = None, settings: PiSettings | None = None
) -> list[PromptTemplate]:
    """The templates pi offers in ``cwd``, in pi's order, one per name."""
    cwd = os.path.abspath(cwd)
    home_dir = home if home is not None else (os.environ.get("HOME") or os.path.expanduser("~"))
    settings = settings if settings is not None else load_settings(cwd, agent_dir)
    project_base = os.path.join(cwd, ".pi")
    project_entries = settings_entries(settings.project_settings, "prompts")
    user_entries = settings_entries(settings.global_settings, "prompts")
    ranked: dict[str, tuple[int, bool]] = {}

    def add(path: str, rank: int, enabled: bool) -> None:
        ranked.setdefault(path, (rank, enabled))

    for path, enabled in _settings_files(project_entries, project_base, home_dir):
        add(path, 0, enabled)
    for path, enabled in _settings_files(user_entries, agent_dir, home_dir):
        add(path, 2, enabled)
    for path in _top_level_md(os.path.join(project_base, "prompts")):
        add(path, 1, _enabled_by_overrides(path, project_entries, project_base))
    for path in _top_level_md(os.path.join(agent_dir, "prompts")):
        add(path, 3, _enabled_by_overrides(path, user_entries, agent_dir))

    seen_paths: set[str] = set()
    templates: list[PromptTemplate] = []
    names: set[str] = set()
    for path, (_, enabled) in sorted(ranked.items(), key=lambda item: item[1][0]):
        canonical = canonical_path(path)
        if canonical in seen_paths:
            continue
        seen_paths.add(canonical)
        if not enabled or not path.endswith(".md"):
            continue
        template = load_template_file(path)
        if template is not None and template.name not in names:
            names.add(template.name)
            templates.append(template)
    return templates
