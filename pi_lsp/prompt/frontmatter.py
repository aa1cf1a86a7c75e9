"""Frontmatter of SKILL.md and context files, split and parsed the way pi does.

pi splits on ``---`` lines by plain string search (not a Markdown parser) and parses the YAML with
the ``yaml`` npm package, i.e. YAML 1.2 core schema: ``yes``/``on`` and dates stay strings,
duplicate keys are errors. PyYAML is a YAML 1.1 parser, so we give it a loader with 1.2 core
resolvers and a duplicate-key check. Error messages follow the ``yaml`` package's shape
(``<problem> at line L, column C:`` plus a source excerpt with a caret) because pi surfaces that
text verbatim as the skill diagnostic.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import yaml
from yaml.constructor import ConstructorError
from yaml.nodes import MappingNode, Node, ScalarNode

from pi_lsp.prompt.jscompat import js_trim

__all__ = [
    "Frontmatter",
    "FrontmatterError",
    "KeySpan",
    "frontmatter_key_spans",
    "normalize_newlines",
    "parse_frontmatter",
    "parse_yaml12",
    "split_frontmatter",
    "strip_frontmatter",
]


class FrontmatterError(ValueError):
    """Invalid YAML in a frontmatter block.

    ``line``/``column`` are 1-based within the YAML text (what pi's message prints); ``file_line``
    is the 0-based line in the (newline-normalised) file, for editor diagnostics.
    """

    def __init__(self, message: str, line: int | None, column: int | None, file_line: int | None) -> None:
        super().__init__(message)
        self.message = message
        self.line = line
        self.column = column
        self.file_line = file_line


@dataclass(frozen=True)
class Frontmatter:
    """A parsed document: ``data`` is the YAML value (``{}`` when absent), ``body`` the rest."""

    data: Any
    body: str
    yaml_text: str | None
    yaml_first_line: int
    """0-based file line where ``yaml_text`` starts (1 for the usual ``---\\n`` opener)."""

    @property
    def fields(self) -> dict[Any, Any]:
        """The data when it is a mapping; pi reads properties of anything else as undefined."""
        return self.data if isinstance(self.data, dict) else {}


@dataclass(frozen=True)
class KeySpan:
    """Where a top-level frontmatter key sits in the file (0-based line and columns)."""

    line: int
    start: int
    end: int


def normalize_newlines(text: str) -> str:
    """CRLF and lone CR become LF, as pi does before splitting."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def split_frontmatter(text: str) -> tuple[str | None, str, int]:
    """``(yaml_text or None, body, yaml_first_line)`` with pi's exact slicing rules.

    The opener is any text starting with ``---``; the closer is the first ``\\n---`` after index 3
    (so ``\\n----`` or ``\\n--- x`` also close). With frontmatter the body is trimmed; without it
    the normalised text is returned untrimmed.
    """
    normalized = normalize_newlines(text)
    if not normalized.startswith("---"):
        return None, normalized, 0
    end = normalized.find("\n---", 3)
    if end == -1:
        return None, normalized, 0
    first_line = normalized.count("\n", 0, 4)
    return normalized[4:end], js_trim(normalized[end + 4 :]), first_line


def parse_frontmatter(text: str) -> Frontmatter:
    """Split and parse; raises :class:`FrontmatterError` on invalid YAML (pi throws too)."""
    yaml_text, body, first_line = split_frontmatter(text)
    if not yaml_text:
        return Frontmatter({}, body, yaml_text, first_line)
    try:
        data = parse_yaml12(yaml_text)
    except FrontmatterError as error:
        if error.line is not None:
            error.file_line = first_line + error.line - 1
        raise
    return Frontmatter({} if data is None else data, body, yaml_text, first_line)


def strip_frontmatter(text: str) -> str:
    """The body without frontmatter (pi's ``stripFrontmatter``); invalid YAML raises."""
    return parse_frontmatter(text).body


# ---------------------------------------------------------------------------------------------
# YAML 1.2 core schema on PyYAML


class _Yaml12Loader(yaml.SafeLoader):
    """SafeLoader with YAML 1.2 core-schema scalars and unique keys."""

    yaml_implicit_resolvers: dict[Any, list[tuple[str, re.Pattern[str]]]] = {}

    def construct_mapping(self, node: Node, deep: bool = False) -> dict[Any, Any]:
        if isinstance(node, MappingNode):
            seen: set[tuple[str, Any]] = set()
            for key_node, _ in node.value:
                key = self.construct_object(key_node, deep=True)
                try:
                    marker = (type(key).__name__, key)
                    duplicate = marker in seen
                    seen.add(marker)
                except TypeError:
                    continue
                if duplicate:
                    raise ConstructorError(None, None, "Map keys must be unique", key_node.start_mark)
        return super().construct_mapping(node, deep=deep)  # type: ignore[arg-type]


def _bool12(loader: yaml.SafeLoader, node: Node) -> bool:
    return str(loader.construct_scalar(node)) in ("true", "True", "TRUE")  # type: ignore[arg-type]


def _int12(loader: yaml.SafeLoader, node: Node) -> int:
    value = str(loader.construct_scalar(node))  # type: ignore[arg-type]
    if value.startswith("0o"):
        return int(value[2:], 8)
    if value.startswith("0x"):
        return int(value[2:], 16)
    return int(value)


def _float12(loader: yaml.SafeLoader, node: Node) -> float:
    value = str(loader.construct_scalar(node))  # type: ignore[arg-type]
    lowered = value.lower()
    if lowered.endswith(".inf"):
        return float("-inf") if value.startswith("-") else float("inf")
    if lowered == ".nan":
        return float("nan")
    return float(value)


_Yaml12Loader.add_implicit_resolver(
    "tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF")
)
_Yaml12Loader.add_implicit_resolver(
    "tag:yaml.org,2002:int",
    re.compile(r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$"),
    list("-+0123456789"),
)
_Yaml12Loader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(
        r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
        r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"
    ),
    list("-+0123456789."),
)
_Yaml12Loader.add_implicit_resolver(
    "tag:yaml.org,2002:null", re.compile(r"^(?:~|null|Null|NULL|)$"), ["~", "n", "N", ""]
)
_Yaml12Loader.add_constructor("tag:yaml.org,2002:bool", _bool12)
_Yaml12Loader.add_constructor("tag:yaml.org,2002:int", _int12)
_Yaml12Loader.add_constructor("tag:yaml.org,2002:float", _float12)

# PyYAML wording -> the yaml npm package's wording for the mistakes people actually make.
_PROBLEM_WORDING: tuple[tuple[str, str, str], ...] = (
    ("flow sequence", "expected ',' or ']'", "Flow sequence in block collection must be sufficiently "
     "indented and end with a ]"),
    ("flow mapping", "expected ',' or '}'", "Flow map in block collection must be sufficiently "
     "indented and end with a }"),
    ("quoted scalar", "unexpected end of stream", 'Missing closing "quote'),
    ("", "that cannot start any token", "Tabs are not allowed as indentation"),
    ("", "mapping values are not allowed here", "Nested mappings are not allowed in compact mappings"),
)


def _wording(context: str, problem: str) -> str:
    for context_part, problem_part, wording in _PROBLEM_WORDING:
        if context_part in context and problem_part in problem:
            if "cannot start any token" in problem and "\\t" not in problem:
                continue
            return wording
    text = problem or context or "Invalid YAML"
    return text[:1].upper() + text[1:]


def _excerpt(source: str, line: int, column: int) -> str:
    """The ``:\\n\\n<line>\\n<caret>\\n`` tail the yaml package appends to its messages."""
    lines = source.split("\n")
    line_text = lines[line - 1] if 0 < line <= len(lines) else ""
    if len(line_text) > 80:
        line_text = line_text[:79] + "…"
    ci = column - 1
    if line > 1 and line_text[:ci].strip(" ") == "":
        previous = lines[line - 2]
        if len(previous) > 80:
            previous = previous[:79] + "…"
        line_text = previous + "\n" + line_text
    if not re.search(r"[^ ]", line_text):
        return ""
    return f":\n\n{line_text}\n{' ' * ci}^\n"


def parse_yaml12(text: str) -> Any:
    """Parse one YAML document with 1.2 core semantics; errors become :class:`FrontmatterError`."""
    try:
        return yaml.load(text, Loader=_Yaml12Loader)  # noqa: S506 - a SafeLoader subclass
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        wording = _wording(error.context or "", error.problem or "")
        if mark is None:
            raise FrontmatterError(wording, None, None, None) from error
        line, column = mark.line + 1, mark.column + 1
        message = f"{wording} at line {line}, column {column}{_excerpt(text, line, column)}"
        raise FrontmatterError(message, line, column, None) from error
    except (yaml.YAMLError, ValueError, RecursionError) as error:
        raise FrontmatterError(str(error) or "Invalid YAML", None, None, None) from error


def frontmatter_key_spans(text: str) -> dict[str, KeySpan]:
    """File positions of the top-level frontmatter keys (empty when absent or unparsable)."""
    yaml_text, _, first_line = split_frontmatter(text)
    if not yaml_text:
        return {}
    try:
        root = yaml.compose(yaml_text, Loader=_Yaml12Loader)  # noqa: S506
    except (yaml.YAMLError, RecursionError):
        return {}
    spans: dict[str, KeySpan] = {}
    if isinstance(root, MappingNode):
        for key_node, _ in root.value:
            if isinstance(key_node, ScalarNode) and key_node.value not in spans:
                start, end = key_node.start_mark, key_node.end_mark
                end_col = end.column if end.line == start.line else start.column + len(key_node.value)
                spans[key_node.value] = KeySpan(first_line + start.line, start.column, end_col)
    return spans
