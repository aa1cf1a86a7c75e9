"""Validation of request params at the edge: plain JSON in, typed values out, or InvalidParams
naming the offending field (``entryId must be a string``).

Optional fields that are ``null`` count as absent; fields where ``null`` means something (``id`` of
``pi/setLeaf``, ``leafId`` of ``pi/buildContext``) use :meth:`Params.nullable_string`. Unknown fields
are ignored so newer clients keep working with this server.
"""

from __future__ import annotations

from typing import Any

from pi_lsp.jscompat import UNSET, Unset
from pi_lsp.service.errors import InvalidParams


class Params:
    """Typed access to one request's params object."""

    __slots__ = ("data",)

    def __init__(self, raw: Any) -> None:
        if raw is None:
            raw = {}
        if not isinstance(raw, dict):
            raise InvalidParams("params must be an object")
        self.data: dict[str, Any] = raw

    def _missing(self, name: str) -> InvalidParams:
        return InvalidParams(f"{name} is required", {"field": name})

    def _wrong(self, name: str, what: str) -> InvalidParams:
        return InvalidParams(f"{name} must be {what}", {"field": name})

    def string(self, name: str) -> str:
        value = self.data.get(name)
        if value is None:
            raise self._missing(name)
        if not isinstance(value, str):
            raise self._wrong(name, "a string")
        return value

    def nonempty_string(self, name: str) -> str:
        value = self.string(name)
        if not value:
            raise self._wrong(name, "a non-empty string")
        return value

    def opt_string(self, name: str) -> str | None:
        value = self.data.get(name)
        if value is None:
            return None
        if not isinstance(value, str):
            raise self._wrong(name, "a string")
        return value

    def nullable_string(self, name: str, *, required: bool = False) -> str | Unset | None:
        """A string or ``null``; UNSET when absent (an error when ``required``)."""
        if name not in self.data:
            if required:
                raise InvalidParams(f"{name} is required (a string, or null)", {"field": name})
            return UNSET
        value = self.data[name]
        if value is not None and not isinstance(value, str):
            raise self._wrong(name, "a string or null")
        return value

    def session(self) -> str | None:
        return self.opt_string("session")

    def opt_bool(self, name: str, default: bool) -> bool:
        value = self.data.get(name)
        if value is None:
            return default
        if not isinstance(value, bool):
            raise self._wrong(name, "a boolean")
        return value

    def opt_int(self, name: str, minimum: int = 0) -> int | None:
        value = self.data.get(name)
        if value is None:
            return None
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if not isinstance(value, int) or isinstance(value, bool):
            raise self._wrong(name, "an integer")
        if value < minimum:
            raise self._wrong(name, f"an integer of at least {minimum}")
        return value

    def obj(self, name: str) -> dict[str, Any]:
        value = self.data.get(name)
        if value is None:
            raise self._missing(name)
        if not isinstance(value, dict):
            raise self._wrong(name, "an object")
        return value

    def opt_choice(self, name: str, choices: tuple[str, ...], default: str) -> str:
        value = self.opt_string(name)
        if value is None:
            return default
        if value not in choices:
            raise self._wrong(name, "one of " + ", ".join(f'"{choice}"' for choice in choices))
        return value

    def opt_string_list(self, name: str) -> list[str] | None:
        value = self.data.get(name)
        if value is None:
            return None
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            raise self._wrong(name, "an array of strings")
        return list(value)
