"""Editor diagnostics and hover numbers for the files that make up the system prompt.

Turns a :class:`~pi_lsp.prompt.assemble.PromptResult` into LSP-shaped plain dicts per file, so the
server can publish them without this package importing pygls. Positions are UTF-16 based (the LSP
default). What is reported:

* SKILL.md / skill ``*.md``: pi's skill diagnostics, placed on the ``name:``/``description:``
  line or the YAML error position. Error (1) when pi drops the skill, warning (2) when it loads
  it anyway or loses a name collision, information (3) for frontmatter keys pi ignores.
* AGENTS.md / CLAUDE.md: unreadable files (error); a file adding more than
  ``LARGE_CONTEXT_FILE_TOKENS`` tokens (warning); a sibling candidate that pi does not read
  because another name wins in the same directory (information).
* a workspace's ``.pi/settings.json``: each value the server does not apply (warning, on its key;
  :func:`settings_file_diagnostics`, the reasons come from the service's trust rules).

The large-file threshold is 8,000 tokens: pi's own prompt is about 1,000 tokens and the default
context window is 200,000, so one file above 4% of the window is sent with every request and is
worth flagging, while ordinary instruction files (a few hundred to a few thousand tokens) are not.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TypedDict

from pi_lsp.prompt.assemble import PromptResult
from pi_lsp.prompt.context_files import CONTEXT_FILE_NAMES
from pi_lsp.prompt.frontmatter import KeySpan, frontmatter_key_spans
from pi_lsp.prompt.json_keys import json_key_spans
from pi_lsp.prompt.skills import SkillDiagnostic, canonical_path
from pi_lsp.safe_io import read_text

__all__ = [
    "KNOWN_SKILL_FIELDS",
    "LARGE_CONTEXT_FILE_TOKENS",
    "LspDiagnostic",
    "PromptFileIndex",
    "settings_file_diagnostics",
]

LARGE_CONTEXT_FILE_TOKENS = 8_000
KNOWN_SKILL_FIELDS = frozenset(
    {
        "name",
        "description",
        "license",
        "compatibility",
        "metadata",
        "allowed-tools",
        "disable-model-invocation",
    }
)
SOURCE = "pi-lsp"
ERROR, WARNING, INFORMATION = 1, 2, 3


class LspPosition(TypedDict):
    line: int
    character: int


class LspRange(TypedDict):
    start: LspPosition
    end: LspPosition


class LspDiagnostic(TypedDict):
    range: LspRange
    severity: int
    message: str
    source: str


@dataclass
class _FileText:
    lines: list[str]
    spans: dict[str, KeySpan] = field(default_factory=dict)

    @classmethod
    def load(cls, path: str, with_spans: bool) -> _FileText:
        try:
            text = read_text(path)
        except OSError:
            return cls([""])
        normalized = text.replace("\r\n", "\n").replace("\r", "\n")
        return cls(normalized.split("\n"), frontmatter_key_spans(text) if with_spans else {})

    def _utf16(self, line: int, column: int) -> int:
        text = self.lines[line] if 0 <= line < len(self.lines) else ""
        return len(text[:column].encode("utf-16-le")) // 2

    def range(self, line: int, start: int = 0, end: int | None = None) -> LspRange:
        """A range on one line, ``end`` defaulting to the end of that line."""
        line = max(0, min(line, len(self.lines) - 1))
        stop = len(self.lines[line]) if end is None else end
        start = min(start, stop)
        return {
            "start": {"line": line, "character": self._utf16(line, start)},
            "end": {"line": line, "character": self._utf16(line, stop)},
        }


def _diagnostic(range_: LspRange, severity: int, message: str) -> LspDiagnostic:
    return {"range": range_, "severity": severity, "message": message, "source": SOURCE}


def _key(path: str) -> str:
    return os.path.normpath(os.path.abspath(path))


class PromptFileIndex:
    """Per-file diagnostics and token contributions for one assembled prompt.

    Build one after each :func:`~pi_lsp.prompt.assemble.assemble_system_prompt`; ``files()``
    lists every path it has an opinion about (publish an empty list for files that dropped out).
    """

    def __init__(self, result: PromptResult, *, large_file_tokens: int = LARGE_CONTEXT_FILE_TOKENS) -> None:
        self._result = result
        self._large = large_file_tokens
        self._tokens: dict[str, int] = {}
        for skill in result.skills:
            self._remember(skill.file_path, 0)
        for source in result.sources:
            self._remember(source.path, source.tokens)
        self._skill_diagnostics: dict[str, list[SkillDiagnostic]] = {}
        for diagnostic in result.skill_diagnostics:
            if diagnostic.path is not None and diagnostic.path.endswith(".md"):
                self._skill_diagnostics.setdefault(_key(diagnostic.path), []).append(diagnostic)
        self._loaded = {_key(skill.file_path) for skill in result.skills}
        self._context = {_key(f.path): f.path for f in result.context_files}
        self._problems = {_key(p["path"]): p["message"] for p in result.problems}
        self._shadowed = self._find_shadowed()
        self._cache: dict[str, list[LspDiagnostic]] = {}

    def _remember(self, path: str, tokens: int) -> None:
        for key in {_key(path), canonical_path(_key(path))}:
            self._tokens[key] = tokens

    def _find_shadowed(self) -> dict[str, str]:
        shadowed: dict[str, str] = {}
        for context in self._result.context_files:
            directory, winner = os.path.split(context.path)
            if winner not in CONTEXT_FILE_NAMES:
                continue
            for name in CONTEXT_FILE_NAMES[CONTEXT_FILE_NAMES.index(winner) + 1 :]:
                candidate = os.path.join(directory, name)
                try:
                    if os.path.exists(candidate) and not os.path.samefile(candidate, context.path):
                        shadowed[_key(candidate)] = winner
                except OSError:
                    continue
        return shadowed

    def files(self) -> list[str]:
        """Every file this index covers (skills, context files, shadowed candidates)."""
        keys = {_key(s.file_path) for s in self._result.skills}
        keys |= set(self._skill_diagnostics) | set(self._context) | set(self._shadowed)
        keys |= {key for key in self._problems if os.path.basename(key) in CONTEXT_FILE_NAMES}
        return sorted(keys)

    def all_diagnostics(self) -> dict[str, list[LspDiagnostic]]:
        """Diagnostics for every covered file (possibly empty lists, to clear old ones)."""
        return {path: self.diagnostics(path) for path in self.files()}

    def token_contribution(self, path: str) -> int | None:
        """Tokens the file adds to the prompt: 0 for a skill not shown, None if not a source."""
        key = _key(path)
        if key in self._tokens:
            return self._tokens[key]
        return self._tokens.get(canonical_path(key))

    def diagnostics(self, path: str) -> list[LspDiagnostic]:
        """LSP diagnostics for one file (empty when it has none or is unknown)."""
        key = _key(path)
        if key not in self._cache:
            self._cache[key] = self._compute(key)
        return self._cache[key]

    def _compute(self, key: str) -> list[LspDiagnostic]:
        found: list[LspDiagnostic] = []
        is_skill = key in self._skill_diagnostics or key in self._loaded
        if (
            not is_skill
            and key not in self._context
            and key not in self._shadowed
            and key not in self._problems
        ):
            return found
        text = _FileText.load(key, with_spans=is_skill)
        if is_skill:
            found.extend(self._skill(key, text))
        if key in self._problems and not is_skill:
            found.append(_diagnostic(text.range(0), ERROR, self._problems[key]))
        if key in self._context:
            tokens = self._tokens.get(key, 0)
            if tokens > self._large:
                message = (
                    f"This file adds about {tokens} tokens to every request "
                    f"(warning threshold: {self._large})"
                )
                found.append(_diagnostic(text.range(0), WARNING, message))
        if key in self._shadowed:
            message = f"pi reads {self._shadowed[key]} in this directory; this file is not used"
            found.append(_diagnostic(text.range(0), INFORMATION, message))
        return found

    def _skill(self, key: str, text: _FileText) -> list[LspDiagnostic]:
        found: list[LspDiagnostic] = []
        loaded = key in self._loaded
        for diagnostic in self._skill_diagnostics.get(key, []):
            message = diagnostic.message.split(":\n\n", 1)[0]
            if diagnostic.type == "collision" and diagnostic.collision is not None:
                severity = WARNING
                message += f": {diagnostic.collision.winner_path} has the same name and takes precedence"
            elif loaded:
                severity = WARNING
            else:
                severity = ERROR
                message += " (skill not loaded)"
            found.append(_diagnostic(self._place(diagnostic, text), severity, message))
        for name, span in text.spans.items():
            if name not in KNOWN_SKILL_FIELDS:
                message = f'"{name}" is not a skill field pi reads; it is ignored'
                found.append(_diagnostic(text.range(span.line, span.start, span.end), INFORMATION, message))
        return found

    @staticmethod
    def _place(diagnostic: SkillDiagnostic, text: _FileText) -> LspRange:
        if diagnostic.line is not None:
            column = diagnostic.column or 0
            line_length = len(text.lines[diagnostic.line]) if diagnostic.line < len(text.lines) else 0
            return text.range(diagnostic.line, column, line_length if column < line_length else column)
        span = text.spans.get(diagnostic.field or "")
        if span is not None:
            return text.range(span.line, span.start)
        return text.range(0)


def settings_file_diagnostics(
    path: str, ignored: Sequence[tuple[tuple[str, ...], str]]
) -> list[LspDiagnostic]:
    """A warning on a settings file for each ``(key path, message)`` the server does not apply,
    placed on the key where the file writes it (else on the first line)."""
    if not ignored:
        return []
    text = _FileText.load(path, with_spans=False)
    spans = json_key_spans("\n".join(text.lines))
    found: list[LspDiagnostic] = []
    for key, message in ignored:
        span = spans.get(key)
        place = text.range(span.line, span.start, span.end) if span is not None else text.range(0)
        found.append(_diagnostic(place, WARNING, message))
    return found
