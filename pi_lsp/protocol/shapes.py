"""The small type language the protocol is written in: what a JSON value on the wire may be.

Every definition in :mod:`pi_lsp.protocol` is made of these frozen values, so the generators
(TypeScript, Lua, the docs' tables) and the shape checker walk one tree instead of each keeping its
own copy of the contract. Nothing here knows about pygls or the server.

The values are never changed after the definitions are made (treat them as frozen). The classes are
plain dataclasses without generated ``__eq__``/``__repr__``/frozen setters: those cost milliseconds
per class at import, and the stdio start-up imports this package before it answers ``initialize``.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(eq=False, repr=False)
class Prim:
    """A JSON primitive: ``string``, ``number``, ``integer``, ``boolean``, ``null`` or ``any``."""

    name: str


@dataclass(eq=False, repr=False)
class Literal:
    """Exactly this string (an event's ``type``, a fixed ``provider``)."""

    value: str


@dataclass(eq=False, repr=False)
class Enum:
    """One of a named set of strings (thinking levels, stop reasons, ...)."""

    name: str
    values: tuple[str, ...]
    doc: str = ""


@dataclass(eq=False, repr=False)
class Ref:
    """A named object type used before it is complete (a tree node's children)."""

    name: str


@dataclass(eq=False, repr=False)
class Array:
    item: Type


@dataclass(eq=False, repr=False)
class MapOf:
    """An object used as a map: any keys, every value of one type."""

    value: Type


@dataclass(eq=False, repr=False)
class Union:
    options: tuple[Type, ...]


@dataclass(eq=False, repr=False)
class Field:
    name: str
    type: Type
    optional: bool = False
    doc: str = ""


@dataclass(eq=False, repr=False)
class Obj:
    """A JSON object. ``name`` makes it a named type (an interface in TypeScript).

    ``open`` objects may carry keys that are not listed: pi's own records (entries, messages,
    tool results) travel as pi wrote them, so only the fields we rely on are declared."""

    fields: tuple[Field, ...] = ()
    name: str = ""
    open: bool = False
    doc: str = ""

    def field(self, name: str) -> Field | None:
        return next((f for f in self.fields if f.name == name), None)


Type = Prim | Literal | Enum | Ref | Array | MapOf | Union | Obj

STRING = Prim("string")
NUMBER = Prim("number")
INTEGER = Prim("integer")
BOOLEAN = Prim("boolean")
NULL = Prim("null")
ANY = Prim("any")
JSON_OBJECT = Obj(open=True)


def opt(name: str, type_: Type, doc: str = "") -> Field:
    """An optional field: absent (or, in params, ``null``) when not given."""
    return Field(name, type_, optional=True, doc=doc)


def req(name: str, type_: Type, doc: str = "") -> Field:
    return Field(name, type_, doc=doc)


def nullable(type_: Type) -> Union:
    return Union((type_, NULL))


def one_of(*options: Type) -> Union:
    return Union(options)


def obj(*fields: Field, name: str = "", open: bool = False, doc: str = "") -> Obj:
    return Obj(tuple(fields), name, open, doc)


def extend(base: Obj, *fields: Field, name: str = "", doc: str = "") -> Obj:
    """``base`` with more fields (a later field of the same name replaces the earlier one)."""
    names = {f.name for f in fields}
    kept = tuple(f for f in base.fields if f.name not in names)
    return Obj(kept + tuple(fields), name, base.open, doc or base.doc)


@dataclass(eq=False, repr=False)
class Method:
    """A client → server request of the contract (``pi/...``)."""

    name: str
    params: Obj
    result: Type
    area: str
    doc: str = ""
    since: int = 1
    addition: bool = False  # pi-lsp's own, not in the contract

    @property
    def short(self) -> str:
        """``newSession`` for ``pi/newSession``: the name editors' constants use."""
        return self.name.split("/", 1)[1]


@dataclass(eq=False, repr=False)
class Notification:
    """A server → client notification (or, with ``result``, a server → client request)."""

    name: str
    params: Obj
    doc: str = ""
    result: Type | None = None

    @property
    def short(self) -> str:
        return self.name.split("/", 1)[1]


@dataclass(eq=False, repr=False)
class Event:
    """One ``pi/event`` ``event`` type: ``{type: <name>, ...fields}``."""

    type: str
    fields: tuple[Field, ...]
    doc: str = ""
    ours: bool = False  # not one of pi's AgentSessionEvent types

    def shape(self) -> Obj:
        return Obj((Field("type", Literal(self.type)), *self.fields))


@dataclass(eq=False, repr=False)
class ErrorCode:
    name: str
    code: int
    doc: str = ""
