"""``vscode-client/src/shared/protocol.ts``: the protocol as TypeScript types and constants.

The file depends on nothing (no ``vscode``, no ``vscode-languageclient``), so the extension host,
its shared modules and the webview can all import it. Methods are constants (``Methods.getBranch``)
with ``Requests[method]["params" | "result"]`` types; ``pi/event``'s ``event`` is the discriminated
union ``PiEvent`` (by ``type``).
"""

from __future__ import annotations

from pi_lsp.protocol.check import named_types
from pi_lsp.protocol.enums import ENUMS, ERRORS
from pi_lsp.protocol.events import EVENTS, NOTIFICATIONS, SERVER_REQUESTS
from pi_lsp.protocol.methods import METHODS, PROTOCOL_VERSION
from pi_lsp.protocol.render import HEADER, enum_key, pascal
from pi_lsp.protocol.shapes import Array, Enum, Field, Literal, MapOf, Obj, Prim, Ref, Type, Union

_ABOUT = "The pi-lsp protocol (docs/protocol.md): methods, notifications, events, errors, enums."
_RULE = "-" * 64
_PRIMS = {"string": "string", "number": "number", "integer": "number", "boolean": "boolean", "null": "null"}


def ts_type(type_: Type, indent: str = "") -> str:
    """The TypeScript spelling of ``type_`` (named objects and enums by name)."""
    if isinstance(type_, Prim):
        return _PRIMS.get(type_.name, "unknown")
    if isinstance(type_, Literal):
        return f'"{type_.value}"'
    if isinstance(type_, Enum):
        return type_.name
    if isinstance(type_, Ref):
        return type_.name
    if isinstance(type_, Array):
        inner = ts_type(type_.item, indent)
        return f"({inner})[]" if isinstance(type_.item, Union) else f"{inner}[]"
    if isinstance(type_, MapOf):
        return f"Record<string, {ts_type(type_.value, indent)}>"
    if isinstance(type_, Union):
        return " | ".join(ts_type(option, indent) for option in type_.options)
    if type_.name:
        return type_.name
    return _inline(type_, indent)


def _inline(type_: Obj, indent: str) -> str:
    if not type_.fields:
        return "Record<string, unknown>" if type_.open else "Record<string, never>"
    inner = indent + "  "
    lines = [_member(field, inner) for field in type_.fields]
    if type_.open:
        lines.append(f"{inner}[key: string]: unknown;")
    return "{\n" + "\n".join(lines) + f"\n{indent}}}"


def _member(field: Field, indent: str) -> str:
    doc = f"{indent}/** {field.doc} */\n" if field.doc else ""
    return f"{doc}{indent}{field.name}{'?' if field.optional else ''}: {ts_type(field.type, indent)};"


def _interface(name: str, type_: Obj, doc: str = "") -> str:
    comment = f"/** {doc or type_.doc} */\n" if (doc or type_.doc) else ""
    if not type_.fields and not type_.open:
        return f"{comment}export type {name} = Record<string, never>;"
    body = _inline(type_, "")
    return f"{comment}export interface {name} {body}"


def _alias(name: str, type_: Type) -> str:
    """A name for a method's params or result: the named type itself, or an alias/interface."""
    if isinstance(type_, Obj) and not type_.name:
        return _interface(name, type_)
    return f"export type {name} = {ts_type(type_)};"


def _params_name(short: str) -> str:
    return f"{pascal(short)}Params"


def _result_name(short: str) -> str:
    return f"{pascal(short)}Result"


def render() -> str:
    out: list[str] = [f"// {HEADER}", f"// {_ABOUT}", ""]
    out.append(f"export const PROTOCOL_VERSION = {PROTOCOL_VERSION};")
    out.append("")
    out.append("// ------------------------------------------------------------------------------ enums")
    for enum in ENUMS:
        constant = enum_key(enum).upper()
        values = ", ".join(f'"{value}"' for value in enum.values)
        if enum.doc:
            out.append(f"/** {enum.doc} */")
        out.append(f"export const {constant} = [{values}] as const;")
        out.append(f"export type {enum.name} = (typeof {constant})[number];")
    out.append("")
    out.append("// ------------------------------------------------------------------------------ errors")
    out.append("export const ErrorCodes = {")
    out.extend(f"  /** {error.doc} */\n  {error.name}: {error.code}," for error in ERRORS)
    out.append("} as const;")
    out.append("")
    out.append("// ------------------------------------------------------------------------------ types")
    out.extend(_interface(name, type_) for name, type_ in named_types().items())
    out.append("")
    out.append("// ------------------------------------------------------------------------------ pi/event")
    for event in EVENTS:
        out.append(_interface(pascal(event.type) + "Event", event.shape(), event.doc))
    out.append("/** `pi/event`'s `event`: tell the types apart by `type`. */")
    out.append("export type PiEvent =\n" + "\n".join(f"  | {pascal(e.type)}Event" for e in EVENTS) + ";")
    out.append('export type PiEventType = PiEvent["type"];')
    out.append("")
    out.append("// ------------------------------------------------------------------------------ requests")
    for method in METHODS:
        if not method.params.name:
            out.append(_alias(_params_name(method.short), method.params))
        if not (isinstance(method.result, Obj) and method.result.name):
            out.append(_alias(_result_name(method.short), method.result))
    out.append("")
    out.append("/** Every client → server request: its params and result. */")
    out.append("export interface Requests {")
    for method in METHODS:
        params = method.params.name or _params_name(method.short)
        named = isinstance(method.result, Obj) and method.result.name
        result = method.result.name if named else _result_name(method.short)  # type: ignore[union-attr]
        out.append(f'  "{method.name}": {{ params: {params}; result: {result} }};')
    out.append("}")
    out.append("export type RequestMethod = keyof Requests;")
    out.append('export type ParamsOf<M extends RequestMethod> = Requests[M]["params"];')
    out.append('export type ResultOf<M extends RequestMethod> = Requests[M]["result"];')
    out.append("")
    out.append('/** The method names, by their short name: `Methods.getBranch` is `"pi/getBranch"`. */')
    out.append("export const Methods = {")
    out.extend(f'  {method.short}: "{method.name}",' for method in METHODS)
    out.append("} as const satisfies Record<string, RequestMethod>;")
    out.append("")
    out.append(f"// {_RULE} server → client")
    out.append("/** Every server → client notification and its params. */")
    out.append("export interface NotificationParams {")
    out.extend(f'  "{n.name}": {n.params.name};' for n in NOTIFICATIONS)
    out.append("}")
    out.append("export const Notifications = {")
    out.extend(f'  {n.short}: "{n.name}",' for n in NOTIFICATIONS)
    out.append("} as const satisfies Record<string, keyof NotificationParams>;")
    out.append("")
    out.append("/** Every server → client request: its params and the answer the client sends. */")
    out.append("export interface ServerRequests {")
    for request in SERVER_REQUESTS:
        answer = request.result.name if isinstance(request.result, Obj) and request.result.name else "unknown"
        out.append(f'  "{request.name}": {{ params: {request.params.name}; result: {answer} }};')
    out.append("}")
    out.append("export const ServerRequestMethods = {")
    out.extend(f'  {r.short}: "{r.name}",' for r in SERVER_REQUESTS)
    out.append("} as const satisfies Record<string, keyof ServerRequests>;")
    return "\n".join(out) + "\n"
