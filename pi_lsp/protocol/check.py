"""A structural checker: does a JSON value have the shape the protocol declares?

The tests run every result and notification the server really sends through it, so a declared
shape that drifts from the server (or the server from the contract) fails the suite. It reports
the first problem as one sentence with a JSON path (``result.sessions[2].cwd: expected string``).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from pi_lsp.protocol.events import EVENTS, EVENTS_BY_TYPE, NOTIFICATIONS, SERVER_REQUESTS
from pi_lsp.protocol.methods import METHODS
from pi_lsp.protocol.shapes import Array, Enum, Literal, MapOf, Obj, Prim, Ref, Type, Union


def walk(type_: Type) -> Iterator[Type]:
    """``type_`` and every type inside it (named objects are walked where they appear)."""
    stack = [type_]
    while stack:
        current = stack.pop()
        yield current
        if isinstance(current, Obj):
            stack.extend(field.type for field in current.fields)
        elif isinstance(current, Array):
            stack.append(current.item)
        elif isinstance(current, MapOf):
            stack.append(current.value)
        elif isinstance(current, Union):
            stack.extend(current.options)


def roots() -> Iterator[Type]:
    """Every top-level type of the protocol: params, results, notifications, events."""
    for method in METHODS:
        yield method.params
        yield method.result
    for notification in (*NOTIFICATIONS, *SERVER_REQUESTS):
        yield notification.params
        if notification.result is not None:
            yield notification.result
    for event in EVENTS:
        yield event.shape()


def named_types() -> dict[str, Obj]:
    """Every named object type, by name (first definition wins; names must not be reused)."""
    named: dict[str, Obj] = {}
    for root in roots():
        for type_ in walk(root):
            if isinstance(type_, Obj) and type_.name and type_.name not in named:
                named[type_.name] = type_
    return named


_NAMED: dict[str, Obj] = {}


def problem(value: Any, type_: Type, path: str = "value") -> str | None:
    """The first way ``value`` does not fit ``type_``, or None when it fits."""
    if isinstance(type_, Prim):
        return _prim(value, type_.name, path)
    if isinstance(type_, Literal):
        return None if value == type_.value else f"{path}: expected {type_.value!r}, got {_show(value)}"
    if isinstance(type_, Enum):
        if isinstance(value, str) and value in type_.values:
            return None
        return f"{path}: expected one of {type_.name} {list(type_.values)}, got {_show(value)}"
    if isinstance(type_, Ref):
        if not _NAMED:
            _NAMED.update(named_types())
        return problem(value, _NAMED[type_.name], path)
    if isinstance(type_, Array):
        if not isinstance(value, list):
            return f"{path}: expected an array, got {_show(value)}"
        for index, item in enumerate(value):
            if (found := problem(item, type_.item, f"{path}[{index}]")) is not None:
                return found
        return None
    if isinstance(type_, MapOf):
        if not isinstance(value, dict):
            return f"{path}: expected an object, got {_show(value)}"
        for key, item in value.items():
            if (found := problem(item, type_.value, f"{path}.{key}")) is not None:
                return found
        return None
    if isinstance(type_, Union):
        return _union(value, type_, path)
    return _object(value, type_, path)


def _prim(value: Any, name: str, path: str) -> str | None:
    fits = {
        "any": True,
        "null": value is None,
        "string": isinstance(value, str),
        "boolean": isinstance(value, bool),
        "integer": isinstance(value, int) and not isinstance(value, bool),
        "number": isinstance(value, int | float) and not isinstance(value, bool),
    }[name]
    return None if fits else f"{path}: expected {name}, got {_show(value)}"


def _object(value: Any, type_: Obj, path: str) -> str | None:
    if not isinstance(value, dict):
        return f"{path}: expected an object{_named(type_)}, got {_show(value)}"
    for field in type_.fields:
        if field.name not in value:
            if not field.optional:
                return f"{path}.{field.name}: missing (required{_named(type_)})"
            continue
        if (found := problem(value[field.name], field.type, f"{path}.{field.name}")) is not None:
            return found
    if not type_.open:
        declared = {field.name for field in type_.fields}
        extra = [key for key in value if key not in declared]
        if extra:
            return f"{path}: undeclared field(s) {extra}{_named(type_)}"
    return None


def _union(value: Any, type_: Union, path: str) -> str | None:
    found: list[str] = []
    for option in type_.options:
        if (one := problem(value, option, path)) is None:
            return None
        found.append(one)
    if isinstance(value, dict) and isinstance(value.get("type"), str):  # an event: say why that type failed
        event = EVENTS_BY_TYPE.get(value["type"])
        if event is None:
            return f"{path}.type: undeclared event type {value['type']!r}"
        return problem(value, event.shape(), path)
    return f"{path}: fits none of the {len(type_.options)} declared forms: " + "; ".join(found)


def _named(type_: Obj) -> str:
    return f" in {type_.name}" if type_.name else ""


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def result_problem(method: str, result: Any) -> str | None:
    """What is wrong with a real result of ``method`` (None when it fits or is not declared)."""
    declared = next((m for m in METHODS if m.name == method), None)
    return None if declared is None else problem(result, declared.result, f"{method} result")


def notification_problem(method: str, params: Any) -> str | None:
    """What is wrong with a real notification's (or server request's) params."""
    declared = next((n for n in (*NOTIFICATIONS, *SERVER_REQUESTS) if n.name == method), None)
    return None if declared is None else problem(params, declared.params, f"{method} params")
