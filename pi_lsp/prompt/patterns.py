"""Path patterns pi applies while discovering skills: gitignore rules and settings globs.

pi skips skill files matched by ``.gitignore``/``.ignore``/``.fdignore`` (via the ``ignore`` npm
package) and filters settings entries with ``minimatch`` globs (``!x`` excludes, ``+x``/``-x``
force by exact path). Both are re-implemented here for the subset that matters in a skills tree:
``*``, ``?``, ``**``, bracket classes, braces, negation, directory-only rules and anchoring.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache

__all__ = ["IgnoreRules", "glob_match", "prefix_ignore_pattern"]


def prefix_ignore_pattern(line: str, prefix: str) -> str | None:
    """pi's rewrite of one ignore-file line so it applies relative to the scan root."""
    trimmed = line.strip()
    if not trimmed:
        return None
    if trimmed.startswith("#") and not trimmed.startswith("\\#"):
        return None
    pattern = line
    negated = False
    if pattern.startswith("!"):
        negated = True
        pattern = pattern[1:]
    elif pattern.startswith("\\!"):
        pattern = pattern[1:]
    if pattern.startswith("/"):
        pattern = pattern[1:]
    prefixed = f"{prefix}{pattern}" if prefix else pattern
    return f"!{prefixed}" if negated else prefixed


def _bracket(pattern: str, start: int) -> tuple[str, int] | None:
    """Translate ``[...]`` at ``start``; returns (regex, index after ``]``) or None if unclosed."""
    index = start + 1
    negated = False
    if index < len(pattern) and pattern[index] in "!^":
        negated = True
        index += 1
    body = ""
    first = True
    while index < len(pattern):
        char = pattern[index]
        if char == "]" and not first:
            inner = body or "\\s\\S"
            return (f"[^/{body}]" if negated else f"(?!/)[{inner}]"), index + 1
        if char == "\\" and index + 1 < len(pattern):
            index += 1
            char = pattern[index]
        body += re.escape(char) if char != "-" else "-"
        first = False
        index += 1
    return None


def _glob_segment_regex(pattern: str, *, star: str, dot_guard: bool) -> str:
    """Regex for a glob without ``**`` handling: ``*``, ``?``, classes and escapes.

    A pattern is workspace input, so the regex must not backtrack exponentially: ``*a*a*a*b``
    translated naively takes minutes on a 40-letter name. Every token but ``*`` matches exactly one
    character, so placing each literal run between two stars at its earliest position is always
    right (the classic wildcard-matching argument); those runs are atomic groups ``(?>[^/]*?run)``,
    and only the last star backtracks.
    """
    # tokens: None for a star (with its dot guard in ``guards``), else the regex of one character
    tokens: list[str | None] = []
    guards: list[str] = []
    index = 0
    at_segment_start = True
    while index < len(pattern):
        char = pattern[index]
        guard = "(?!\\.)" if dot_guard and at_segment_start else ""
        if char == "\\" and index + 1 < len(pattern):
            tokens.append(re.escape(pattern[index + 1]))
            index += 2
        elif char == "*":
            if not (tokens and tokens[-1] is None):  # "**" inside a segment is one star
                tokens.append(None)
                guards.append(guard)
            index += 1
        elif char == "?":
            tokens.append(guard + "[^/]")
            index += 1
        elif char == "[":
            translated = _bracket(pattern, index)
            if translated is None:
                tokens.append("\\[")
                index += 1
            else:
                tokens.append(translated[0])
                index = translated[1]
        else:
            tokens.append(re.escape(char))
            index += 1
        at_segment_start = char == "/"
    return _atomic_stars(tokens, guards, star)


def _atomic_stars(tokens: list[str | None], guards: list[str], star: str) -> str:
    out: list[str] = []
    runs: list[tuple[str, list[str]]] = []  # (star guard, the one-character tokens after it)
    stars = iter(guards)
    for token in tokens:
        if token is None:
            runs.append((next(stars), []))
        elif runs:
            runs[-1][1].append(token)
        else:
            out.append(token)
    for position, (guard, run) in enumerate(runs):
        if position == len(runs) - 1 or not run:
            out.append(guard + star + "".join(run))
        else:
            out.append(f"{guard}(?>{star}?{''.join(run)})")
    return "".join(out)


# ---------------------------------------------------------------------------------------------
# gitignore


@dataclass(frozen=True)
class _Rule:
    regex: re.Pattern[str]
    negative: bool
    dir_only: bool


@lru_cache(maxsize=4096)
def _compile_rule(pattern: str) -> _Rule | None:
    negative = pattern.startswith("!")
    if negative:
        pattern = pattern[1:]
    pattern = re.sub(r"(?<!\\) +$", "", pattern)
    if pattern.startswith("\\#") or pattern.startswith("\\!"):
        pattern = pattern[1:]
    dir_only = pattern.endswith("/")
    pattern = pattern.rstrip("/")
    if pattern.startswith("/"):
        pattern = pattern[1:]
    if not pattern:
        return None
    anchored = "/" in pattern
    parts: list[str] = []
    need_separator = False
    segments = pattern.split("/")
    for position, segment in enumerate(segments):
        last = position == len(segments) - 1
        if segment == "**":
            if position == 0:
                parts.append(".*" if last else "(?:.*/)?")
            else:
                parts.append("/.*" if last else "/(?:.*/)?")
            need_separator = False
            continue
        if need_separator:
            parts.append("/")
        parts.append(_glob_segment_regex(segment, star="[^/]*", dot_guard=False))
        need_separator = True
    body = "".join(parts)
    prefix = "" if anchored else "(?:.*/)?"
    return _Rule(re.compile(f"{prefix}{body}"), negative, dir_only)


@dataclass
class IgnoreRules:
    """An accumulating rule set, like one ``ignore()`` instance shared by a recursive scan."""

    _rules: list[_Rule] = field(default_factory=list)

    def add(self, patterns: Iterable[str]) -> None:
        """Append rules; later rules override earlier ones, as in gitignore."""
        for pattern in patterns:
            rule = _compile_rule(pattern)
            if rule is not None:
                self._rules.append(rule)

    def copy(self) -> IgnoreRules:
        """A snapshot, for scans that must not leak sibling rules (pi shares one; see callers)."""
        return IgnoreRules(list(self._rules))

    def ignores(self, path: str) -> bool:
        """Whether a root-relative POSIX path is ignored; directories are passed with a ``/``."""
        if not self._rules:
            return False
        is_dir = path.endswith("/")
        bare = path.rstrip("/")
        segments = bare.split("/")
        for depth in range(1, len(segments)):
            if self._test("/".join(segments[:depth]), True):
                return True
        return self._test(bare, is_dir)

    def _test(self, path: str, is_dir: bool) -> bool:
        ignored = False
        for rule in self._rules:
            if rule.dir_only and not is_dir:
                continue
            if rule.negative != ignored:
                continue
            if rule.regex.fullmatch(path):
                ignored = not rule.negative
        return ignored


# ---------------------------------------------------------------------------------------------
# minimatch


MAX_BRACE_EXPANSIONS = 1_000
"""``{a,b}{a,b}...`` doubles with every group; a settings pattern is workspace input."""


def _expand_braces(pattern: str) -> list[str]:
    """Brace alternatives; past :data:`MAX_BRACE_EXPANSIONS` the pattern matches nothing."""
    expanded: list[str] = []
    pending = [pattern]
    while pending:
        current = pending.pop()
        match = re.search(r"\{([^{}]*,[^{}]*)\}", current)
        if match is None:
            expanded.append(current)
            continue
        head, tail = current[: match.start()], current[match.end() :]
        pending.extend(head + option + tail for option in reversed(match.group(1).split(",")))
        if len(expanded) + len(pending) > MAX_BRACE_EXPANSIONS:
            return []
    return expanded


@lru_cache(maxsize=4096)
def _glob_regex(pattern: str) -> re.Pattern[str]:
    alternatives: list[str] = []
    for variant in _expand_braces(pattern):
        parts: list[str] = []
        segments = variant.split("/")
        for position, segment in enumerate(segments):
            last = position == len(segments) - 1
            if segment == "**":
                parts.append("(?:(?!\\.)[^/]*(?:/(?!\\.)[^/]*)*)?" if last else "(?:(?!\\.)[^/]*/)*")
                continue
            parts.append(_glob_segment_regex(segment, star="[^/]*", dot_guard=True))
            if not last:
                parts.append("/")
        alternatives.append("".join(parts))
    if not alternatives:
        return re.compile("(?!)")  # too many brace alternatives: matches nothing
    return re.compile("|".join(f"(?:{alternative})" for alternative in alternatives))


def glob_match(path: str, pattern: str) -> bool:
    """``minimatch(path, pattern)`` with default options (dot files need an explicit dot)."""
    return _glob_regex(pattern).fullmatch(path) is not None
