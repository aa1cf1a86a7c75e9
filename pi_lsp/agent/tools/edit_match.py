"""The edit tool's matching rules (pi's ``applyEditsToNormalizedContent``), as plain functions.

Every replacement is located in the original text, exactly first; failing that, both sides are
compared after a forgiving normalisation (NFKC, trailing blanks, typographic quotes, dashes and
spaces). If any replacement needed that, all of them are applied to the normalised text, so the
written file carries the normalisation — pi's behaviour, kept on purpose.
"""

from __future__ import annotations

import itertools
import re
import unicodedata
from dataclasses import dataclass

from pi_lsp.agent.tools.base import ToolError

BOM = "\ufeff"
_SINGLE_QUOTES = re.compile("[\u2018\u2019\u201a\u201b]")
_DOUBLE_QUOTES = re.compile("[\u201c\u201d\u201e\u201f]")
_DASHES = re.compile("[\u2010\u2011\u2012\u2013\u2014\u2015\u2212]")
_SPACES = re.compile("[\u00a0\u2002-\u200a\u202f\u205f\u3000]")
# JavaScript's String.prototype.trimEnd: WhiteSpace and LineTerminator code points.
_JS_TRAILING_SPACE = re.compile(
    "[\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]+$"
)


@dataclass(frozen=True)
class Replacement:
    old_text: str
    new_text: str


def strip_bom(text: str) -> tuple[str, str]:
    """(bom, rest): the model never sends the invisible BOM, so it is matched without it."""
    return (BOM, text[1:]) if text.startswith(BOM) else ("", text)


def detect_line_ending(text: str) -> str:
    """``\\r\\n`` when the first line break is CRLF, else ``\\n``."""
    lf = text.find("\n")
    if lf == -1:
        return "\n"
    crlf = text.find("\r\n")
    return "\r\n" if crlf != -1 and crlf < lf else "\n"


def normalize_to_lf(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


def restore_line_endings(text: str, ending: str) -> str:
    return text.replace("\n", "\r\n") if ending == "\r\n" else text


def normalize_for_fuzzy_match(text: str) -> str:
    text = unicodedata.normalize("NFKC", text)
    text = "\n".join(_JS_TRAILING_SPACE.sub("", line) for line in text.split("\n"))
    text = _SINGLE_QUOTES.sub("'", text)
    text = _DOUBLE_QUOTES.sub('"', text)
    text = _DASHES.sub("-", text)
    return _SPACES.sub(" ", text)


@dataclass(frozen=True)
class _Match:
    index: int
    length: int
    fuzzy: bool


def _find(content: str, old_text: str) -> _Match | None:
    exact = content.find(old_text)
    if exact != -1:
        return _Match(exact, len(old_text), False)
    fuzzy_old = normalize_for_fuzzy_match(old_text)
    fuzzy = normalize_for_fuzzy_match(content).find(fuzzy_old)
    return None if fuzzy == -1 else _Match(fuzzy, len(fuzzy_old), True)


def _occurrences(content: str, old_text: str) -> int:
    """Non-overlapping count in the fuzzy space (``split(x).length - 1``)."""
    return normalize_for_fuzzy_match(content).count(normalize_for_fuzzy_match(old_text))


def apply_replacements(content: str, edits: list[Replacement], path: str) -> tuple[str, str]:
    """(base, result) for LF text: base is ``content``, or its fuzzy form when that was needed."""
    edits = [Replacement(normalize_to_lf(e.old_text), normalize_to_lf(e.new_text)) for e in edits]
    many = len(edits) > 1
    for index, edit in enumerate(edits):
        if not edit.old_text:
            raise ToolError(
                f"edits[{index}].oldText must not be empty in {path}."
                if many
                else f"oldText must not be empty in {path}."
            )
    any_fuzzy = any((m := _find(content, e.old_text)) is not None and m.fuzzy for e in edits)
    base = normalize_for_fuzzy_match(content) if any_fuzzy else content
    located: list[tuple[int, int, int, str]] = []
    for index, edit in enumerate(edits):
        match = _find(base, edit.old_text)
        if match is None:
            raise ToolError(
                f"Could not find edits[{index}] in {path}. The oldText must match exactly including all "
                "whitespace and newlines."
                if many
                else f"Could not find the exact text in {path}. The old text must match exactly including "
                "all whitespace and newlines."
            )
        count = _occurrences(base, edit.old_text)
        if count > 1:
            raise ToolError(
                f"Found {count} occurrences of edits[{index}] in {path}. Each oldText must be unique. "
                "Please provide more context to make it unique."
                if many
                else f"Found {count} occurrences of the text in {path}. The text must be unique. Please "
                "provide more context to make it unique."
            )
        located.append((match.index, match.length, index, edit.new_text))
    located.sort(key=lambda item: item[0])
    for (start, length, first, _), (next_start, _, second, _) in itertools.pairwise(located):
        if start + length > next_start:
            raise ToolError(
                f"edits[{first}] and edits[{second}] overlap in {path}. Merge them into one edit or target "
                "disjoint regions."
            )
    result = base
    for start, length, _, new_text in reversed(located):
        result = result[:start] + new_text + result[start + length :]
    if result == base:
        raise ToolError(
            f"No changes made to {path}. The replacements produced identical content."
            if many
            else f"No changes made to {path}. The replacement produced identical content. This might "
            "indicate an issue with special characters or the text not existing as expected."
        )
    return base, result
