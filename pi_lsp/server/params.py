"""Validation of request params at the edge: plain JSON in, typed values out, or InvalidParams
naming the offending field (``entryId must be a string``).

Strings may not hold a lone UTF-16 surrogate (JSON ``"\\ud800"`` without its pair): it cannot
become a file name, a command or an id that means anything, and a path holding one would fail deep
inside the service instead of here. Free text that pi stores as it is (a prompt, a label, custom
instructions) takes ``free_text=True``: it is written with JSON escapes, as ``JSON.stringify``
does, and the model is sent the text without the lone surrogates, as pi sends it.

Optional fields that are ``null`` count as absent; fields where ``null`` means something (``id`` of
``pi/setLeaf``, ``leafId`` of ``pi/buildContext``) use :meth:`Params.nullable_string`. Unknown fields
are ignored so newer clients keep working with this server.
"""

from __future__ import annotations

from typing import Any

from pi_lsp.jscompat import UNSET, Unset
from pi_lsp.paths import uri_to_path
from pi_lsp.service.errors import InvalidParams

MAX_SESSION_ID_BYTES = 200
"""A new session's id is part of its file name (``<timestamp>_<id>.jsonl``, 31 bytes besides the
id): 200 bytes stays well inside the 255 a file name may take."""


def check_no_lone_surrogate(field: str, value: str) -> None:
    """InvalidParams naming ``field`` when ``value`` holds a lone surrogate (decoded JSON holds no
    other surrogates: a valid pair is decoded to the one character it encodes)."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as error:
        unit = ord(value[error.start])
        raise InvalidParams(
            f"{field} holds a lone UTF-16 surrogate (\\u{unit:04x}), which is not text", {"field": field}
        ) from None


def check_path(field: str, value: str) -> None:
    """InvalidParams naming ``field`` when ``value`` cannot name a file: a NUL character, also one
    that a ``file:`` URI's ``%00`` decodes to (lone surrogates are refused for every string)."""
    if "\x00" in value or "\x00" in uri_to_path(value):
        raise InvalidParams(f"{field} must not contain NUL characters", {"field": field})


def check_file_name_part(field: str, value: str) -> None:
    """InvalidParams unless ``value`` can be part of one file name: no separator or control
    character, at most :data:`MAX_SESSION_ID_BYTES` bytes."""
    if any(char in "/\\" or char < " " or char == "\x7f" for char in value):
        raise InvalidParams(
            f"{field} must not contain '/', '\\' or control characters (it is part of a file name)",
            {"field": field},
        )
    if len(value.encode("utf-8")) > MAX_SESSION_ID_BYTES:
        raise InvalidParams(f"{field} must take at most {MAX_SESSION_ID_BYTES} bytes", {"field": field})


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

    def _checked(self, name: str, value: str, free_text: bool) -> str:
        if not free_text:
            check_no_lone_surrogate(name, value)
        return value

    def string(self, name: str, *, free_text: bool = False) -> str:
        value = self.data.get(name)
        if value is None:
            raise self._missing(name)
        if not isinstance(value, str):
            raise self._wrong(name, "a string")
        return self._checked(name, value, free_text)

    def nonempty_string(self, name: str) -> str:
        value = self.string(name)
        if not value:
            raise self._wrong(name, "a non-empty string")
        return value

    def opt_string(self, name: str, *, free_text: bool = False) -> str | None:
        value = self.data.get(name)
        if value is None:
            return None
        if not isinstance(value, str):
            raise self._wrong(name, "a string")
        return self._checked(name, value, free_text)

    def path(self, name: str) -> str:
        """A required, non-empty path (or ``file:`` URI)."""
        value = self.nonempty_string(name)
        check_path(name, value)
        return value

    def opt_path(self, name: str) -> str | None:
        value = self.opt_string(name)
        if value is not None:
            check_path(name, value)
        return value

    def nullable_string(
        self, name: str, *, required: bool = False, free_text: bool = False
    ) -> str | Unset | None:
        """A string or ``null``; UNSET when absent (an error when ``required``)."""
        if name not in self.data:
            if required:
                raise InvalidParams(f"{name} is required (a string, or null)", {"field": name})
            return UNSET
        value = self.data[name]
        if value is None:
            return None
        if not isinstance(value, str):
            raise self._wrong(name, "a string or null")
        return self._checked(name, value, free_text)

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
        for number, item in enumerate(value):
            self._checked(f"{name}[{number}]", item, False)
        return list(value)
