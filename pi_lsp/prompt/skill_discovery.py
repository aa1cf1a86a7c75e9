"""App-level skill discovery: where pi 0.73.1 looks for skills and which one wins a name.

This is the path pi takes on startup and ``/reload`` (package manager + resource loader), not the
standalone ``loadSkills`` defaults. Precedence, first wins:

1. project ``.pi/settings.json`` ``skills`` entries (relative to ``<cwd>/.pi``);
2. project auto-discovery: ``<cwd>/.pi/skills``, then ``.agents/skills`` in the cwd and each
   ancestor up to the git root (the filesystem root outside a repo);
3. user ``settings.json`` ``skills`` entries (relative to the agent dir);
4. user auto-discovery: ``<agentDir>/skills``, then ``~/.agents/skills``;
5. extra paths given by the caller (pi's ``--skill``).

Root ``*.md`` files count as skills except in ``.agents/skills`` directories. Settings entries may
also hold ``!glob`` (exclude), ``+path`` (force include) and ``-path`` (force exclude) overrides.
Installed pi packages and extension-provided skills are not supported.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from pi_lsp.prompt.patterns import glob_match
from pi_lsp.prompt.resources import PiSettings, load_settings, settings_entries
from pi_lsp.prompt.skills import (
    Skill,
    SkillDiagnostic,
    SkillLoadResult,
    SourceInfo,
    canonical_path,
    load_skills,
    resolve_user_path,
    walk_skill_files,
)
from pi_lsp.prompt.walk_limits import WalkBudget

__all__ = ["SkillLocations", "discover_skills", "skill_locations"]


@dataclass(frozen=True)
class _Meta:
    source: str
    scope: str
    base_dir: str | None = None

    @property
    def rank(self) -> int:
        return (0 if self.scope == "project" else 2) + (0 if self.source == "local" else 1)


@dataclass(frozen=True)
class SkillLocations:
    """Every directory or file pi may take skills from for one cwd (existing or not)."""

    project_skills_dir: str
    project_agents_dirs: tuple[str, ...]
    user_skills_dir: str
    user_agents_dir: str
    settings_paths: tuple[str, ...] = ()

    @property
    def all_roots(self) -> tuple[str, ...]:
        """Every location, in precedence order (settings entries first)."""
        return (
            *self.settings_paths,
            self.project_skills_dir,
            *self.project_agents_dirs,
            self.user_skills_dir,
            self.user_agents_dir,
        )


def _home(home: str | None) -> str:
    return home if home is not None else (os.environ.get("HOME") or os.path.expanduser("~"))


def _git_root(start: str) -> str | None:
    current = start
    while True:
        if os.path.exists(os.path.join(current, ".git")):
            return current
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent


def _ancestor_agents_dirs(cwd: str, user_agents_dir: str) -> list[str]:
    start = os.path.abspath(cwd)
    git_root = _git_root(start)
    dirs: list[str] = []
    current = start
    while True:
        candidate = os.path.join(current, ".agents", "skills")
        if os.path.normpath(candidate) != os.path.normpath(user_agents_dir):
            dirs.append(candidate)
        if git_root is not None and current == git_root:
            return dirs
        parent = os.path.dirname(current)
        if parent == current:
            return dirs
        current = parent


def _split_entries(entries: Sequence[str]) -> tuple[list[str], list[str]]:
    plain: list[str] = []
    patterns: list[str] = []
    for entry in entries:
        is_pattern = entry.startswith(("!", "+", "-")) or "*" in entry or "?" in entry
        (patterns if is_pattern else plain).append(entry)
    return plain, patterns


def skill_locations(
    cwd: str, agent_dir: str, *, home: str | None = None, settings: PiSettings | None = None
) -> SkillLocations:
    """The skill directories (and settings-listed paths) for ``cwd``, in precedence order."""
    cwd = os.path.abspath(cwd)
    settings = settings if settings is not None else load_settings(cwd, agent_dir)
    home_dir = _home(home)
    user_agents = os.path.join(home_dir, ".agents", "skills")
    project_base = os.path.join(cwd, ".pi")
    listed: list[str] = []
    for entries, base in (
        (settings_entries(settings.project_settings, "skills"), project_base),
        (settings_entries(settings.global_settings, "skills"), agent_dir),
    ):
        plain, _ = _split_entries(entries)
        listed.extend(resolve_user_path(entry, base, home_dir) for entry in plain)
    return SkillLocations(
        project_skills_dir=os.path.join(project_base, "skills"),
        project_agents_dirs=tuple(_ancestor_agents_dirs(cwd, user_agents)),
        user_skills_dir=os.path.join(agent_dir, "skills"),
        user_agents_dir=user_agents,
        settings_paths=tuple(listed),
    )


# ---------------------------------------------------------------------------------------------
# pattern filters (pi's applyPatterns / isEnabledByOverrides)


def _match_candidates(file_path: str, base_dir: str) -> tuple[list[str], list[str]]:
    """(glob candidates, exact candidates) for a file, incl. the parent dir of a SKILL.md."""
    rel = os.path.relpath(file_path, base_dir).replace(os.sep, "/")
    name = os.path.basename(file_path)
    posix = file_path.replace(os.sep, "/")
    globs, exact = [rel, name, posix], [rel, posix]
    if name == "SKILL.md":
        parent = os.path.dirname(file_path)
        parent_rel = os.path.relpath(parent, base_dir).replace(os.sep, "/")
        globs += [parent_rel, os.path.basename(parent), parent.replace(os.sep, "/")]
        exact += [parent_rel, parent.replace(os.sep, "/")]
    return globs, exact


def _matches_glob(file_path: str, patterns: Sequence[str], base_dir: str) -> bool:
    candidates, _ = _match_candidates(file_path, base_dir)
    return any(
        glob_match(candidate, pattern.replace(os.sep, "/"))
        for pattern in patterns
        for candidate in candidates
    )


def _matches_exact(file_path: str, patterns: Sequence[str], base_dir: str) -> bool:
    _, candidates = _match_candidates(file_path, base_dir)
    for pattern in patterns:
        normalized = pattern[2:] if pattern.startswith(("./", ".\\")) else pattern
        if normalized.replace(os.sep, "/") in candidates:
            return True
    return False


def _enabled_by_overrides(file_path: str, entries: Sequence[str], base_dir: str) -> bool:
    excludes = [e[1:] for e in entries if e.startswith("!")]
    includes = [e[1:] for e in entries if e.startswith("+")]
    force_excludes = [e[1:] for e in entries if e.startswith("-")]
    enabled = True
    if excludes and _matches_glob(file_path, excludes, base_dir):
        enabled = False
    if includes and _matches_exact(file_path, includes, base_dir):
        enabled = True
    if force_excludes and _matches_exact(file_path, force_excludes, base_dir):
        enabled = False
    return enabled


def _apply_patterns(files: list[str], patterns: Sequence[str], base_dir: str) -> set[str]:
    includes = [p for p in patterns if not p.startswith(("+", "-", "!"))]
    excludes = [p[1:] for p in patterns if p.startswith("!")]
    force_includes = [p[1:] for p in patterns if p.startswith("+")]
    force_excludes = [p[1:] for p in patterns if p.startswith("-")]
    result = [f for f in files if _matches_glob(f, includes, base_dir)] if includes else list(files)
    if excludes:
        result = [f for f in result if not _matches_glob(f, excludes, base_dir)]
    if force_includes:
        result += [f for f in files if f not in result and _matches_exact(f, force_includes, base_dir)]
    if force_excludes:
        result = [f for f in result if not _matches_exact(f, force_excludes, base_dir)]
    return set(result)


# ---------------------------------------------------------------------------------------------
# discovery


@dataclass
class _Accumulator:
    entries: dict[str, tuple[_Meta, bool]] = field(default_factory=dict)
    walk_diagnostics: list[SkillDiagnostic] = field(default_factory=list)
    budget: WalkBudget = field(default_factory=WalkBudget)
    """Shared by every walk of the discovery: a repository listing ``/usr`` a hundred times in its
    settings, or linking it from each ancestor's ``.agents/skills``, gets one walk's worth."""

    def add(self, path: str, meta: _Meta, enabled: bool) -> None:
        if path and path not in self.entries:
            self.entries[path] = (meta, enabled)

    def collect(self, directory: str, *, include_root_md: bool) -> list[str]:
        files, diagnostics = walk_skill_files(directory, include_root_md=include_root_md, shared=self.budget)
        self.walk_diagnostics.extend(diagnostics)
        return files

    def files_from_paths(self, paths: Sequence[str]) -> list[str]:
        files: list[str] = []
        for path in paths:
            if os.path.isfile(path):
                files.append(path)
            elif os.path.isdir(path):
                files.extend(self.collect(path, include_root_md=True))
        return files


def _settings_entries_into(
    acc: _Accumulator, entries: Sequence[str], meta: _Meta, base_dir: str, home: str
) -> None:
    if not entries:
        return
    plain, patterns = _split_entries(entries)
    files = acc.files_from_paths([resolve_user_path(p, base_dir, home) for p in plain])
    enabled = _apply_patterns(files, patterns, base_dir)
    for file_path in files:
        acc.add(file_path, meta, file_path in enabled)


def discover_skills(
    cwd: str,
    agent_dir: str,
    *,
    home: str | None = None,
    settings: PiSettings | None = None,
    extra_paths: Sequence[str] = (),
    no_skills: bool = False,
) -> SkillLoadResult:
    """All skills pi would offer in ``cwd``, with pi's diagnostics and ``sourceInfo``.

    Equal to the skills and skill diagnostics of pi's ``DefaultResourceLoader.reload()`` for the
    same files (no packages or extensions), plus symlink-loop and unreadable-directory warnings.
    """
    cwd = os.path.abspath(cwd)
    home_dir = _home(home)
    settings = settings if settings is not None else load_settings(cwd, agent_dir)
    project_base = os.path.join(cwd, ".pi")
    locations = skill_locations(cwd, agent_dir, home=home_dir, settings=settings)
    project_entries = settings_entries(settings.project_settings, "skills")
    user_entries = settings_entries(settings.global_settings, "skills")

    acc = _Accumulator()
    _settings_entries_into(acc, project_entries, _Meta("local", "project"), project_base, home_dir)
    _settings_entries_into(acc, user_entries, _Meta("local", "user"), agent_dir, home_dir)
    auto_groups = (
        (
            _Meta("auto", "project", project_base),
            project_entries,
            project_base,
            [(locations.project_skills_dir, True), *((d, False) for d in locations.project_agents_dirs)],
        ),
        (
            _Meta("auto", "user", agent_dir),
            user_entries,
            agent_dir,
            [(locations.user_skills_dir, True), (locations.user_agents_dir, False)],
        ),
    )
    for meta, overrides, base_dir, dirs in auto_groups:
        for directory, include_root_md in dirs:
            for file_path in acc.collect(directory, include_root_md=include_root_md):
                acc.add(file_path, meta, _enabled_by_overrides(file_path, overrides, base_dir))

    # Precedence sort (stable), then canonical-path dedupe, as pi's toResolvedPaths.
    ordered = sorted(acc.entries.items(), key=lambda item: item[1][0].rank)
    seen: set[str] = set()
    resolved: list[tuple[str, _Meta, bool]] = []
    for path, (meta, enabled) in ordered:
        canonical = canonical_path(path)
        if canonical not in seen:
            seen.add(canonical)
            resolved.append((path, meta, enabled))
    metadata_by_path: dict[str, _Meta] = {}
    for path, meta, _ in resolved:
        metadata_by_path.setdefault(path, meta)

    enabled_paths = [] if no_skills else [path for path, _, enabled in resolved if enabled]
    merged: list[str] = []
    merged_seen: set[str] = set()
    for raw in [*enabled_paths, *extra_paths]:
        path = resolve_user_path(raw, cwd, home_dir)
        canonical = canonical_path(path)
        if canonical not in merged_seen:
            merged_seen.add(canonical)
            merged.append(path)

    if no_skills and not merged:
        loaded = SkillLoadResult()
    else:
        loaded = load_skills(cwd, agent_dir, merged, include_defaults=False, home=home_dir)
    skills = [_with_source_info(skill, metadata_by_path) for skill in loaded.skills]
    diagnostics = list(loaded.diagnostics)
    for raw in extra_paths:
        if not os.path.exists(raw) and not any(d.path == raw for d in diagnostics):
            diagnostics.append(SkillDiagnostic("error", "Skill path does not exist", raw))
    for diagnostic in acc.walk_diagnostics:
        if diagnostic not in diagnostics:
            diagnostics.append(diagnostic)
    return SkillLoadResult(skills, diagnostics)


def _with_source_info(skill: Skill, metadata_by_path: dict[str, _Meta]) -> Skill:
    """pi's ``findSourceInfoForPath``: exact path first, then the first containing entry."""
    normalized = os.path.abspath(skill.file_path)
    meta = metadata_by_path.get(normalized) or metadata_by_path.get(skill.file_path)
    if meta is None:
        for source_path, candidate in metadata_by_path.items():
            root = os.path.abspath(source_path)
            if normalized == root or normalized.startswith(root + os.sep):
                meta = candidate
                break
    if meta is None:
        return skill
    info = SourceInfo(skill.file_path, meta.source, meta.scope, "top-level", meta.base_dir)
    return replace(skill, source_info=info)
