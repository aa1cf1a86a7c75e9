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
from yaml.constructor import ConstructorError, SafeConstructor
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from pi_lsp.jscompat import js_len, js_trim

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

    ``line``/``column`` are 1-based within the YAML text, the column in UTF-16 units (what pi's
    message prints); ``file_line`` and ``char_index`` (0-based, code points) locate the error in the
    newline-normalised file for editor diagnostics.
    """

    def __init__(
        self,
        message: str,
        line: int | None = None,
        column: int | None = None,
        file_line: int | None = None,
        char_index: int | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.line = line
        self.column = column
        self.file_line = file_line
        self.char_index = char_index


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


class _UniqueKeys(SafeConstructor):
    """Duplicate mapping keys are an error in the yaml package; PyYAML keeps the last one."""

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


class _Yaml12Loader(_UniqueKeys, yaml.SafeLoader):
    """Pure-Python loader with YAML 1.2 core-schema scalars; its error messages are the ones we
    translate into the yaml package's wording."""


def _bool12(loader: SafeConstructor, node: Node) -> bool:
    return str(loader.construct_scalar(node)) in ("true", "True", "TRUE")  # type: ignore[arg-type]


def _int12(loader: SafeConstructor, node: Node) -> int:
    value = str(loader.construct_scalar(node))  # type: ignore[arg-type]
    if value.startswith("0o"):
        return int(value[2:], 8)
    if value.startswith("0x"):
        return int(value[2:], 16)
    return int(value)


def _float12(loader: SafeConstructor, node: Node) -> float:
    value = str(loader.construct_scalar(node))  # type: ignore[arg-type]
    lowered = value.lower()
    if lowered.endswith(".inf"):
        return float("-inf") if value.startswith("-") else float("inf")
    if lowered == ".nan":
        return float("nan")
    return float(value)


def _configure_yaml12(loader: Any) -> None:
    """Replace SafeLoader's YAML 1.1 resolvers (yes/no, dates, 0777, ``<<``) with 1.2 core ones."""
    loader.yaml_implicit_resolvers = {}
    loader.add_implicit_resolver(
        "tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF")
    )
    loader.add_implicit_resolver(
        "tag:yaml.org,2002:int",
        re.compile(r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$"),
        list("-+0123456789"),
    )
    loader.add_implicit_resolver(
        "tag:yaml.org,2002:float",
        re.compile(
            r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
            r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"
        ),
        list("-+0123456789."),
    )
    loader.add_implicit_resolver(
        "tag:yaml.org,2002:null", re.compile(r"^(?:~|null|Null|NULL|)$"), ["~", "n", "N", ""]
    )
    loader.add_constructor("tag:yaml.org,2002:bool", _bool12)
    loader.add_constructor("tag:yaml.org,2002:int", _int12)
    loader.add_constructor("tag:yaml.org,2002:float", _float12)


_configure_yaml12(_Yaml12Loader)

# libyaml parses a typical frontmatter block about ten times faster; it is used for documents
# that parse, and the pure-Python loader re-parses failures for pi-shaped messages.
_FastYaml12Loader: Any = _Yaml12Loader
if getattr(yaml, "CSafeLoader", None) is not None:

    class _CYaml12Loader(_UniqueKeys, yaml.CSafeLoader):
        """libyaml-backed twin of :class:`_Yaml12Loader`."""

    _configure_yaml12(_CYaml12Loader)
    _FastYaml12Loader = _CYaml12Loader

# PyYAML wording -> the yaml npm package's wording for the mistakes people actually make.
_FLOW_SEQUENCE = "Flow sequence in block collection must be sufficiently indented and end with a ]"
_FLOW_MAP = "Flow map in block collection must be sufficiently indented and end with a }"
_PROBLEM_WORDING: tuple[tuple[str, str, str], ...] = (
    ("flow sequence", "expected ',' or ']'", _FLOW_SEQUENCE),
    ("flow mapping", "expected ',' or '}'", _FLOW_MAP),
    ("quoted scalar", "unexpected end of stream", 'Missing closing "quote'),
    ("", "found character '\\t' that cannot start any token", "Tabs are not allowed as indentation"),
    ("", "mapping values are not allowed here", "Nested mappings are not allowed in compact mappings"),
    ("", "expected '<document start>'", "Missing directives-end indicator line"),
)


def _innermost_open_flow(text: str) -> str | None:
    """The innermost ``[`` or ``{`` still open at the end of ``text`` (quotes skipped roughly)."""
    stack: list[str] = []
    quote: str | None = None
    for char in text:
        if quote is not None:
            if char == quote:
                quote = None
        elif char in "'\"":
            quote = char
        elif char in "[{":
            stack.append(char)
        elif char in "]}" and stack:
            stack.pop()
    return stack[-1] if stack else None


def _wording(context: str, problem: str, before_mark: str) -> str:
    if "flow node" in context and "'<stream end>'" in problem:
        opener = _innermost_open_flow(before_mark)
        if opener is not None:
            return _FLOW_SEQUENCE if opener == "[" else _FLOW_MAP
    for context_part, problem_part, wording in _PROBLEM_WORDING:
        if context_part in context and problem_part in problem:
            return wording
    text = problem or context or "Invalid YAML"
    return text[:1].upper() + text[1:]


def _excerpt(line_text: str, previous: str | None, char_index: int, pointer_column: int) -> str:
    """The ``:\n\n<line>\n<caret>\n`` tail the yaml package appends to its messages."""
    if len(line_text) > 80:
        line_text = line_text[:79] + "…"
    if previous is not None and line_text[:char_index].strip(" ") == "":
        if len(previous) > 80:
            previous = previous[:79] + "…"
        line_text = previous + "\n" + line_text
    if not re.search(r"[^ ]", line_text):
        return ""
    return f":\n\n{line_text}\n{' ' * pointer_column}^\n"


def parse_yaml12(text: str) -> Any:
    """Parse one YAML document with 1.2 core semantics; errors become :class:`FrontmatterError`.

    The text is parsed with a final newline ensured, because the ``yaml`` package ends a clipped
    block scalar (``description: |``) with a newline even at the end of input and PyYAML does not;
    errors are reported from a parse of the original text so that their positions match pi's.
    """
    try:
        return _load(text if text.endswith("\n") else text + "\n", _FastYaml12Loader)
    except FrontmatterError:
        raise
    except (yaml.YAMLError, ValueError, RecursionError):
        pass
    return _load_reporting_errors(text)


def _load(text: str, loader_class: Any) -> Any:
    """``yaml.load`` with the alias check between composing and constructing."""
    loader = loader_class(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        check_alias_count(node)
        return loader.construct_document(node)
    finally:
        loader.dispose()


def _load_reporting_errors(text: str) -> Any:
    try:
        return _load(text, _Yaml12Loader)
    except FrontmatterError:
        raise
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        before = text[: mark.index] if mark is not None else text
        wording = _wording(error.context or "", error.problem or "", before)
        if mark is None:
            raise FrontmatterError(wording) from error
        lines = text.split("\n")
        line_text = lines[mark.line] if mark.line < len(lines) else ""
        previous = lines[mark.line - 1] if 0 < mark.line <= len(lines) else None
        utf16_column = js_len(line_text[: mark.column])  # JS strings count UTF-16 units
        tail = _excerpt(line_text, previous, mark.column, utf16_column)
        message = f"{wording} at line {mark.line + 1}, column {utf16_column + 1}{tail}"
        raise FrontmatterError(message, mark.line + 1, utf16_column + 1, None, mark.column) from error
    except (yaml.YAMLError, ValueError, RecursionError) as error:
        raise FrontmatterError(str(error) or "Invalid YAML") from error


# ---------------------------------------------------------------------------------------------
# Alias bombs


MAX_ALIAS_COUNT = 100
"""The ``yaml`` package's default ``maxAliasCount``, which pi does not change."""

ALIAS_BOMB = "Excessive alias count indicates a resource exhaustion attack"
_MAX_ALIAS_WORK = 1_000_000


def check_alias_count(root: Node) -> None:
    """Reject a document whose aliases would expand too far, exactly where the ``yaml`` package does.

    PyYAML shares an aliased node instead of copying it, but everything downstream (JSON, tokens,
    validation) walks the expansion, so a "billion laughs" frontmatter must fail as it fails in pi.
    The package counts, per anchor, how often it is aliased (``count``, 1 for the anchor itself) and
    how many nodes one copy stands for (``aliasCount``: the largest ``count * aliasCount`` of an
    alias inside it, 1 for a scalar, 0 for an empty collection, computed at the anchor's first
    alias); an alias fails once ``count * aliasCount`` exceeds :data:`MAX_ALIAS_COUNT`. Here an
    alias is a node met again in document order (PyYAML returns the anchored node itself). The work
    is capped too (pi's own count can be quadratic); past the cap the document counts as a bomb.
    """
    counts: dict[int, list[int]] = {}  # id(anchor node) -> [count, aliasCount]
    aliases: set[tuple[int, int]] = set()  # (id(parent), child index) that are alias references
    work = [0]

    def children(node: Node) -> list[Node]:
        if isinstance(node, MappingNode):
            return [part for pair in node.value for part in pair]
        if isinstance(node, SequenceNode):
            return list(node.value)
        return []

    def spend() -> None:
        work[0] += 1
        if work[0] > _MAX_ALIAS_WORK:
            raise FrontmatterError(ALIAS_BOMB)

    def alias_count(node: Node) -> int:
        spend()
        if isinstance(node, ScalarNode):
            return 1
        largest = 0
        for index, child in enumerate(children(node)):
            if (id(node), index) in aliases:
                count, per_copy = counts[id(child)]
                largest = max(largest, count * per_copy)
            else:
                largest = max(largest, alias_count(child))
        return largest

    def visit(node: Node) -> None:
        spend()
        counts[id(node)] = [1, 0]
        for index, child in enumerate(children(node)):
            data = counts.get(id(child))
            if data is None:
                visit(child)
                continue
            aliases.add((id(node), index))
            data[0] += 1
            if data[1] == 0:
                data[1] = alias_count(child)
            if data[0] * data[1] > MAX_ALIAS_COUNT:
                raise FrontmatterError(ALIAS_BOMB)

    visit(root)


def frontmatter_key_spans(text: str) -> dict[str, KeySpan]:
    """File positions of the top-level frontmatter keys (empty when absent or unparsable)."""
    yaml_text, _, first_line = split_frontmatter(text)
    if not yaml_text:
        return {}
    try:
        root = yaml.compose(yaml_text, Loader=_Yaml12Loader)
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
