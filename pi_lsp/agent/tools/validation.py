"""pi's argument check before a tool runs: TypeBox's ``Value.Convert`` coercion, then its errors.

Models send ``"5"`` for numbers or ``"true"`` for booleans; pi quietly converts what TypeBox can
convert and otherwise fails the call with ``Validation failed for tool "<name>": …``, listing
each problem as TypeBox reports it (required, then unknown properties, then each property in
schema order) and the arguments as received.
"""

from __future__ import annotations

import copy
import math
import re
from typing import Any

from pi_lsp.agent.tools.base import Tool, ToolError
from pi_lsp.jscompat import js_number, js_stringify, js_trim

# What JavaScript's unary plus accepts (after trimming): a decimal, Infinity or a 0x/0o/0b literal.
_DECIMAL = re.compile(r"[+-]?(?:Infinity|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)")
_RADIX = re.compile(r"0([xX][0-9a-fA-F]+|[oO][0-7]+|[bB][01]+)")
_INTEGER_LIKE = re.compile(r"-?(0|[1-9]\d*)")
_DECIMAL_LIKE = re.compile(r"-?(0|[1-9]\d*)\.\d+")
_BIGINT_LIKE = re.compile(r"-?(0|[1-9]\d*)n")
_MAX_SAFE = 2**53 - 1


def _js_to_number(text: str) -> float | None:
    """``+text``; None where JavaScript gives NaN."""
    stripped = js_trim(text)
    if not stripped:
        return 0.0
    if _DECIMAL.fullmatch(stripped):
        return float(stripped.replace("Infinity", "inf"))
    if _RADIX.fullmatch(stripped):
        return float(int(stripped, 0))
    return None


def _try_number(value: Any) -> tuple[bool, Any]:
    if isinstance(value, bool):
        return True, 1 if value else 0
    if isinstance(value, int | float):
        return (math.isfinite(value), value)
    if value is None:
        return True, 0
    if isinstance(value, str):
        number = _js_to_number(value)
        if number is not None and math.isfinite(number):
            return True, int(number) if number.is_integer() and abs(number) <= _MAX_SAFE else number
        lowered = value.lower()
        if lowered == "false":
            return True, 0
        if lowered == "true":
            return True, 1
        big: int | None = None
        if _BIGINT_LIKE.fullmatch(value):
            big = int(value[:-1])
        elif _DECIMAL_LIKE.fullmatch(value):
            big = int(value.split(".")[0])
        elif _INTEGER_LIKE.fullmatch(value):
            big = int(value)
        if big is not None and -_MAX_SAFE <= big <= _MAX_SAFE:
            return True, big
    return False, value


def _try_boolean(value: Any) -> tuple[bool, Any]:
    if isinstance(value, bool):
        return True, value
    if isinstance(value, int | float):
        if value == 0:
            return True, False
        if value == 1:
            return True, True
        return False, value
    if value is None:
        return True, False
    if isinstance(value, str):
        lowered = value.lower()
        if lowered == "false" or value == "0":
            return True, False
        if lowered == "true" or value == "1":
            return True, True
    return False, value


def _try_string(value: Any) -> tuple[bool, Any]:
    if isinstance(value, bool):
        return True, "true" if value else "false"
    if isinstance(value, int | float):
        return True, js_number(value)
    if value is None:
        return True, "null"
    if isinstance(value, str):
        return True, value
    return False, value


def _convert(schema: dict[str, Any], value: Any) -> Any:
    """TypeBox's ``Value.Convert`` for the schema shapes the built-in tools use."""
    kind = schema.get("type")
    if kind == "object":
        if isinstance(value, dict):
            for key, sub in schema.get("properties", {}).items():
                if key in value:
                    value[key] = _convert(sub, value[key])
        return value
    if kind == "array":
        items = value if isinstance(value, list) else [value]
        return [_convert(schema.get("items", {}), item) for item in items]
    converter = {"number": _try_number, "boolean": _try_boolean, "string": _try_string}.get(str(kind))
    if converter is None:
        return value
    ok, converted = converter(value)
    return converted if ok else value


def _type_ok(kind: Any, value: Any) -> bool:
    if kind == "object":
        return isinstance(value, dict)
    if kind == "array":
        return isinstance(value, list)
    if kind == "string":
        return isinstance(value, str)
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "number":
        return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
    return True


def _errors(schema: dict[str, Any], value: Any, path: list[str]) -> list[tuple[list[str], str]]:
    kind = schema.get("type")
    found: list[tuple[list[str], str]] = []
    if not _type_ok(kind, value):
        return [(path, f"must be {kind}")]
    if kind == "object":
        properties: dict[str, Any] = schema.get("properties", {})
        missing = [key for key in schema.get("required", []) if key not in value]
        if missing:
            found.append(([*path, missing[0]], f"must have required properties {', '.join(missing)}"))
        if schema.get("additionalProperties") is False:
            extra = [key for key in value if key not in properties]
            for key in extra:
                found.append(([*path, key], "schema is false"))
            if extra:
                found.append((path, "must not have additional properties"))
        for key, sub in properties.items():
            if key in value:
                found.extend(_errors(sub, value[key], [*path, key]))
    elif kind == "array":
        for index, item in enumerate(value):
            found.extend(_errors(schema.get("items", {}), item, [*path, str(index)]))
    return found


def validate_tool_arguments(tool: Tool, args: Any) -> dict[str, Any]:
    """The (coerced) arguments, or ToolError with pi's ``Validation failed for tool`` text."""
    converted = copy.deepcopy(args)
    if isinstance(converted, dict):
        _convert(tool.parameters, converted)
    problems = _errors(tool.parameters, converted, [])
    if not problems:
        assert isinstance(converted, dict)
        return converted
    lines = "\n".join(f"  - {'.'.join(where) or 'root'}: {message}" for where, message in problems)
    raise ToolError(
        f'Validation failed for tool "{tool.name}":\n{lines}\n\nReceived arguments:\n{js_stringify(args, 2)}'
    )
