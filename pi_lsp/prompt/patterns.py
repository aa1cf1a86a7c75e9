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
    """Regex for a glob without ``**`` handling: ``*``, ``?``, classes and escapes."""
    out: list[str] = []
    index = 0
    at_segment_start = True
    while index < len(pattern):
        char = pattern[index]
        if char == "\\" and index + 1 < len(pattern):
            out.append(re.escape(pattern[index + 1]))
            index += 2
        elif char == "*":
            out.append(("(?!\\.)" if dot_guard and at_segment_start else "") + star)
            index += 1
        elif char == "?":
            out.append(("(?!\\.)" if dot_guard and at_segment_start else "") + "[^/]")
            index += 1
        elif char == "[":
            translated = _bracket(pattern, index)
            if translated is None:
                out.append("\\[")
                index += 1
            else:
                out.append(translated[0])
                index = translated[1]
        else:
            out.append(re.escape(char))
            index += 1
        at_segment_start = char == "/"
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


def _expand_braces(pattern: str) -> list[str]:
    match = re.search(r"\{([^{}]*,[^{}]*)\}", pattern)
    if match is None:
        return [pattern]
    head, tail = pattern[: match.start()], pattern[match.end() :]
    expanded: list[str] = []
    for option in match.group(1).split(","):
        expanded.extend(_expand_braces(head + option + tail))
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
    return re.compile("|".join(f"(?:{alternative})" for alternative in alternatives))


def glob_match(path: str, pattern: str) -> bool:
    """``minimatch(path, pattern)`` with default options (dot files need an explicit dot)."""
    return _glob_regex(pattern).fullmatch(path) is not None
