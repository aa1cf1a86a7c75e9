"""Skills: loading SKILL.md files, scanning skill directories, and the prompt's skills block.

Mirrors pi 0.73.1's ``skills.ts``: the same validation rules and messages (they are shown to users
and compared by the oracle), the same "description missing -> not loaded" rule, first-wins name
collisions and silent dedupe of symlinked duplicates. Two deliberate additions: a symlink loop is
reported once and not followed (pi recurses until the OS says ELOOP), and an unreadable directory
is reported (pi skips it silently).
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from pi_lsp.jscompat import js_len, js_trim, js_truthy, node_error_message
from pi_lsp.prompt import pi_text
from pi_lsp.prompt.frontmatter import FrontmatterError, parse_frontmatter
from pi_lsp.prompt.patterns import IgnoreRules, prefix_ignore_pattern
from pi_lsp.prompt.walk_limits import MAX_IGNORE_RULES, RuleBudget, WalkBudget, leads_back
from pi_lsp.safe_io import read_error_message, read_text

__all__ = [
    "MAX_DESCRIPTION_LENGTH",
    "MAX_NAME_LENGTH",
    "Collision",
    "Skill",
    "SkillDiagnostic",
    "SkillLoadResult",
    "SourceInfo",
    "canonical_path",
    "escape_xml",
    "format_skills_for_prompt",
    "load_skill_from_file",
    "load_skills",
    "load_skills_from_dir",
    "resolve_user_path",
    "walk_skill_files",
]

MAX_NAME_LENGTH = 64
MAX_DESCRIPTION_LENGTH = 1024
IGNORE_FILE_NAMES = (".gitignore", ".ignore", ".fdignore")
_NAME_CHARS = re.compile(r"[a-z0-9-]+")

DiagnosticType = Literal["warning", "error", "collision"]


@dataclass(frozen=True)
class SourceInfo:
    """Where a skill came from (pi's ``sourceInfo``); ``base_dir`` may be unknown."""

    path: str
    source: str
    scope: str
    origin: str = "top-level"
    base_dir: str | None = None

    def to_json(self) -> dict[str, str]:
        """pi's JSON shape (``baseDir`` omitted when unknown, as pi drops undefined keys)."""
        data = {"path": self.path, "source": self.source, "scope": self.scope, "origin": self.origin}
        if self.base_dir is not None:
            data["baseDir"] = self.base_dir
        return data


@dataclass(frozen=True)
class Skill:
    """One loaded skill; ``base_dir`` is the directory relative paths in the skill resolve against."""

    name: str
    description: str
    file_path: str
    base_dir: str
    source_info: SourceInfo
    disable_model_invocation: bool = False

    def to_json(self) -> dict[str, Any]:
        """pi's JSON shape, as the oracle returns it."""
        return {
            "name": self.name,
            "description": self.description,
            "filePath": self.file_path,
            "baseDir": self.base_dir,
            "disableModelInvocation": self.disable_model_invocation,
            "sourceInfo": self.source_info.to_json(),
        }


@dataclass(frozen=True)
class Collision:
    """Which file kept a skill name and which lost it."""

    name: str
    winner_path: str
    loser_path: str


@dataclass(frozen=True)
class SkillDiagnostic:
    """A problem with a skill file or path.

    ``field`` (``"name"``/``"description"``) and ``line``/``column`` (0-based file line and
    code-point column)
    are position hints for editor diagnostics; they are not part of pi's shape.
    """

    type: DiagnosticType
    message: str
    path: str | None
    collision: Collision | None = None
    field: str | None = None
    line: int | None = None
    column: int | None = None

    def to_json(self) -> dict[str, Any]:
        """pi's JSON shape (``{type, message, path, collision?}``)."""
        data: dict[str, Any] = {"type": self.type, "message": self.message}
        if self.path is not None:
            data["path"] = self.path
        if self.collision is not None:
            data["collision"] = {
                "resourceType": "skill",
                "name": self.collision.name,
                "winnerPath": self.collision.winner_path,
                "loserPath": self.collision.loser_path,
            }
        return data


@dataclass
class SkillLoadResult:
    """Skills in precedence order plus every diagnostic (collisions last, as pi orders them)."""

    skills: list[Skill] = field(default_factory=list)
    diagnostics: list[SkillDiagnostic] = field(default_factory=list)


_PROC_FD = "/proc/self/fd" if os.path.isdir("/proc/self/fd") and hasattr(os, "O_PATH") else None


def canonical_path(path: str) -> str:
    """pi's ``canonicalizePath``: realpath, or the path itself when that fails.

    On Linux the kernel resolves the path in one ``open(O_PATH)`` + ``readlink`` instead of
    Python's per-component ``lstat`` walk, which dominated discovery time in deep trees.
    """
    try:
        if _PROC_FD is not None:
            fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            try:
                return os.readlink(f"{_PROC_FD}/{fd}")
            finally:
                os.close(fd)
        return os.path.realpath(path, strict=True)
    except (OSError, ValueError):
        return path


def resolve_user_path(raw: str, base: str, home: str | None = None) -> str:
    """Trim, expand a leading ``~`` like pi (``~x`` -> ``$HOME/x``), resolve against ``base``."""
    trimmed = raw.strip()
    home_dir = home if home is not None else (os.environ.get("HOME") or os.path.expanduser("~"))
    if trimmed == "~":
        return home_dir
    if trimmed.startswith("~/"):
        return os.path.normpath(os.path.join(home_dir, trimmed[2:]))
    if trimmed.startswith("~"):
        return os.path.normpath(os.path.join(home_dir, trimmed[1:]))
    return os.path.normpath(os.path.join(base, trimmed))


def _source_info(file_path: str, base_dir: str, source: str) -> SourceInfo:
    if source == "user":
        return SourceInfo(file_path, "local", "user", base_dir=base_dir)
    if source == "project":
        return SourceInfo(file_path, "local", "project", base_dir=base_dir)
    if source == "path":
        return SourceInfo(file_path, "local", "temporary", base_dir=base_dir)
    return SourceInfo(file_path, source, "temporary", base_dir=base_dir)


class _JsTypeError(Exception):
    """Stands in for the TypeError pi hits on non-string names/descriptions."""


def _description_errors(description: Any) -> list[str]:
    if not js_truthy(description):
        return ["description is required"]
    if not isinstance(description, str):
        raise _JsTypeError("description.trim is not a function")
    if js_trim(description) == "":
        return ["description is required"]
    if js_len(description) > MAX_DESCRIPTION_LENGTH:
        return [f"description exceeds {MAX_DESCRIPTION_LENGTH} characters ({js_len(description)})"]
    return []


def _name_errors(name: Any, parent_dir_name: str) -> list[str]:
    if not isinstance(name, str):
        raise _JsTypeError("name.startsWith is not a function")
    errors: list[str] = []
    if name != parent_dir_name:
        errors.append(f'name "{name}" does not match parent directory "{parent_dir_name}"')
    if js_len(name) > MAX_NAME_LENGTH:
        errors.append(f"name exceeds {MAX_NAME_LENGTH} characters ({js_len(name)})")
    if not _NAME_CHARS.fullmatch(name):
        errors.append("name contains invalid characters (must be lowercase a-z, 0-9, hyphens only)")
    if name.startswith("-") or name.endswith("-"):
        errors.append("name must not start or end with a hyphen")
    if "--" in name:
        errors.append("name must not contain consecutive hyphens")
    return errors


def load_skill_from_file(file_path: str, source: str) -> tuple[Skill | None, list[SkillDiagnostic]]:
    """Load one skill file; problems become warnings, and a missing description skips the skill."""
    diagnostics: list[SkillDiagnostic] = []
    try:
        text = read_text(file_path)
    except OSError as error:
        message = read_error_message(error, file_path)
        return None, [SkillDiagnostic("warning", message, file_path)]
    try:
        fields = parse_frontmatter(text).fields
    except FrontmatterError as error:
        return None, [
            SkillDiagnostic(
                "warning", error.message, file_path, line=error.file_line, column=error.char_index
            )
        ]
    skill_dir = os.path.dirname(file_path)
    parent_dir_name = os.path.basename(skill_dir)
    description = fields.get("description")
    try:
        for message in _description_errors(description):
            diagnostics.append(SkillDiagnostic("warning", message, file_path, field="description"))
        raw_name = fields.get("name")
        name = raw_name if js_truthy(raw_name) else parent_dir_name
        for message in _name_errors(name, parent_dir_name):
            diagnostics.append(SkillDiagnostic("warning", message, file_path, field="name"))
    except _JsTypeError as error:
        field_name = "description" if str(error).startswith("description") else "name"
        diagnostics.append(SkillDiagnostic("warning", str(error), file_path, field=field_name))
        return None, diagnostics
    if not isinstance(description, str) or not isinstance(name, str) or js_trim(description) == "":
        return None, diagnostics
    skill = Skill(
        name=name,
        description=description,
        file_path=file_path,
        base_dir=skill_dir,
        source_info=_source_info(file_path, skill_dir, source),
        disable_model_invocation=fields.get("disable-model-invocation") is True,
    )
    return skill, diagnostics


# ---------------------------------------------------------------------------------------------
# Directory scanning


def _sorted_entries(directory: str) -> list[os.DirEntry[str]]:
    with os.scandir(directory) as iterator:
        entries = list(iterator)
    entries.sort(key=lambda entry: entry.name.encode("utf-8", "surrogateescape"))
    return entries


def _entry_kind(entry: os.DirEntry[str]) -> tuple[bool, bool] | None:
    """(is_dir, is_file) following symlinks; None for a broken link."""
    try:
        if entry.is_symlink():
            mode = os.stat(entry.path).st_mode
            return stat.S_ISDIR(mode), stat.S_ISREG(mode)
        return entry.is_dir(follow_symlinks=False), entry.is_file(follow_symlinks=False)
    except OSError:
        return None


def _add_ignore_rules(
    rules: IgnoreRules, directory: str, root: str, budget: RuleBudget | None = None
) -> None:
    """Add the ignore files of ``directory`` (relative to ``root``), within ``budget``."""
    relative = os.path.relpath(directory, root)
    prefix = "" if relative == "." else relative.replace(os.sep, "/") + "/"
    for filename in IGNORE_FILE_NAMES:
        ignore_path = os.path.join(directory, filename)
        try:
            content = read_text(ignore_path)
        except OSError:
            continue
        patterns = [p for line in re.split(r"\r?\n", content) if (p := prefix_ignore_pattern(line, prefix))]
        rules.add(budget.take(patterns, ignore_path) if budget is not None else patterns[:MAX_IGNORE_RULES])


def walk_skill_files(
    root: str, *, include_root_md: bool = True, shared: WalkBudget | None = None
) -> tuple[list[str], list[SkillDiagnostic]]:
    """The skill files below ``root`` in pi's order, plus loop/unreadable-directory diagnostics.

    A directory containing ``SKILL.md`` is a skill root: only that file counts and the walk does
    not descend further. Elsewhere only ``SKILL.md`` files count, except that top-level ``*.md``
    files are skills too when ``include_root_md`` (false for ``.agents/skills`` directories).
    Dot entries and ``node_modules`` are skipped; ignore files apply; symlinks are followed.

    Unlike pi, each real directory is listed once (the first path that reaches it wins, as pi's
    realpath dedupe would pick it anyway), so symlink diamonds cost linear time; a link to a folder
    holding the root (``/``, a parent) is a loop; and the walk keeps to
    :mod:`~pi_lsp.prompt.walk_limits` (a warning says what was left out), spending ``shared`` too
    when it is one of a discovery's walks.
    """
    files: list[str] = []
    diagnostics: list[SkillDiagnostic] = []
    if not os.path.exists(root):
        return files, diagnostics
    rules = IgnoreRules()
    rule_budget = RuleBudget()
    budget = shared.part() if shared is not None else WalkBudget()
    visited: set[str] = set()
    real_root = canonical_path(root)

    def rel(path: str) -> str:
        return os.path.relpath(path, root).replace(os.sep, "/")

    def walk(directory: str, real_directory: str, ancestors: frozenset[str], depth: int) -> None:
        if not budget.enter(depth):
            return
        visited.add(real_directory)
        _add_ignore_rules(rules, directory, root, rule_budget)
        try:
            entries = _sorted_entries(directory)
        except FileNotFoundError:
            return
        except OSError as error:
            message = node_error_message(error, "scandir", directory)
            diagnostics.append(SkillDiagnostic("warning", message, directory))
            return
        if not budget.listed(len(entries)):
            return
        for entry in entries:
            if entry.name != "SKILL.md":
                continue
            kind = _entry_kind(entry)
            full = os.path.join(directory, entry.name)
            if kind is not None and kind[1] and not rules.ignores(rel(full)):
                files.append(full)
                return
        for entry in entries:
            if entry.name.startswith(".") or entry.name == "node_modules":
                continue
            kind = _entry_kind(entry)
            if kind is None:
                continue
            is_dir, is_file = kind
            full = os.path.join(directory, entry.name)
            relative = rel(full)
            if is_dir:
                if rules.ignores(relative + "/"):
                    continue
                linked = entry.is_symlink()
                real = canonical_path(full) if linked else os.path.join(real_directory, entry.name)
                if real in ancestors or leads_back(real, real_root):
                    message = f"symlink loop: {full} leads back to {real}; not followed"
                    diagnostics.append(SkillDiagnostic("warning", message, full))
                    continue
                if real in visited:  # a diamond: the same directory by another path
                    continue
                walk(full, real, ancestors | {real}, depth + 1)
            elif (
                is_file
                and include_root_md
                and directory == root
                and entry.name.endswith(".md")
                and not rules.ignores(relative)
            ):
                files.append(full)

    walk(root, real_root, frozenset({real_root}), 0)
    for message in budget.problems(root):
        diagnostics.append(SkillDiagnostic("warning", message, root))
    if rule_budget.dropped_at is not None:
        message = rule_budget.problem(root)
        diagnostics.append(SkillDiagnostic("warning", message, rule_budget.dropped_at))
    return files, diagnostics


def load_skills_from_dir(directory: str, source: str) -> SkillLoadResult:
    """pi's ``loadSkillsFromDir``: every skill below ``directory`` (no collision handling)."""
    result = SkillLoadResult()
    files, walk_diagnostics = walk_skill_files(directory)
    for file_path in files:
        skill, diagnostics = load_skill_from_file(file_path, source)
        if skill is not None:
            result.skills.append(skill)
        result.diagnostics.extend(diagnostics)
    result.diagnostics.extend(walk_diagnostics)
    return result


def _is_under(target: str, root: str) -> bool:
    root = os.path.normpath(root)
    return target == root or target.startswith(root.rstrip(os.sep) + os.sep)


class _SkillCollector:
    """pi's ``addSkills``: realpath dedupe, then first-wins by name."""

    def __init__(self) -> None:
        self.by_name: dict[str, Skill] = {}
        self.real_paths: set[str] = set()
        self.diagnostics: list[SkillDiagnostic] = []
        self.collisions: list[SkillDiagnostic] = []

    def add(self, skills: Iterable[Skill], diagnostics: Iterable[SkillDiagnostic]) -> None:
        self.diagnostics.extend(diagnostics)
        for skill in skills:
            real = canonical_path(skill.file_path)
            if real in self.real_paths:
                continue
            existing = self.by_name.get(skill.name)
            if existing is not None:
                self.collisions.append(
                    SkillDiagnostic(
                        "collision",
                        f'name "{skill.name}" collision',
                        skill.file_path,
                        Collision(skill.name, existing.file_path, skill.file_path),
                        field="name",
                    )
                )
            else:
                self.by_name[skill.name] = skill
                self.real_paths.add(real)

    def result(self) -> SkillLoadResult:
        return SkillLoadResult(list(self.by_name.values()), [*self.diagnostics, *self.collisions])


def load_skills(
    cwd: str,
    agent_dir: str,
    skill_paths: Sequence[str],
    *,
    include_defaults: bool,
    home: str | None = None,
) -> SkillLoadResult:
    """pi's standalone ``loadSkills``: defaults (user dir, then project dir), then explicit paths."""
    collector = _SkillCollector()
    user_dir = os.path.join(agent_dir, "skills")
    project_dir = os.path.normpath(os.path.join(cwd, ".pi", "skills"))
    if include_defaults:
        for directory, label in ((user_dir, "user"), (project_dir, "project")):
            loaded = load_skills_from_dir(directory, label)
            collector.add(loaded.skills, loaded.diagnostics)
    for raw in skill_paths:
        resolved = resolve_user_path(raw, cwd, home)
        source = "path"
        if not include_defaults:
            if _is_under(resolved, user_dir):
                source = "user"
            elif _is_under(resolved, project_dir):
                source = "project"
        try:
            mode = os.stat(resolved).st_mode
        except FileNotFoundError:
            collector.diagnostics.append(SkillDiagnostic("warning", "skill path does not exist", resolved))
            continue
        except OSError as error:
            message = node_error_message(error, "stat", resolved)
            collector.diagnostics.append(SkillDiagnostic("warning", message, resolved))
            continue
        if stat.S_ISDIR(mode):
            loaded = load_skills_from_dir(resolved, source)
            collector.add(loaded.skills, loaded.diagnostics)
        elif stat.S_ISREG(mode) and resolved.endswith(".md"):
            skill, diagnostics = load_skill_from_file(resolved, source)
            if skill is not None:
                collector.add([skill], diagnostics)
            else:
                collector.diagnostics.extend(diagnostics)
        else:
            message = "skill path is not a markdown file"
            collector.diagnostics.append(SkillDiagnostic("warning", message, resolved))
    return collector.result()


# ---------------------------------------------------------------------------------------------
# Prompt block


def escape_xml(text: str) -> str:
    """Escape the five XML specials, ampersand first."""
    return (
        text.replace("&", "&amp;")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace('"', "&quot;")
        .replace("'", "&apos;")
    )


def format_skill_entry(skill: Skill) -> str:
    """One ``<skill>`` element of the available-skills list (no trailing newline)."""
    return (
        "  <skill>\n"
        f"    <name>{escape_xml(skill.name)}</name>\n"
        f"    <description>{escape_xml(skill.description)}</description>\n"
        f"    <location>{escape_xml(skill.file_path)}</location>\n"
        "  </skill>"
    )


def format_skills_for_prompt(skills: Iterable[Skill]) -> str:
    """The skills block pi appends to the prompt; empty when no skill is model-invocable."""
    visible = [skill for skill in skills if not skill.disable_model_invocation]
    if not visible:
        return ""
    parts = [pi_text.SKILLS_INTRO, *(format_skill_entry(skill) for skill in visible), "</available_skills>"]
    return "\n".join(parts)
