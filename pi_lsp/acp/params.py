"""ACP request params, checked: a bad one is JSON-RPC invalid params (-32602) naming the field.

Also the prompt's content blocks made into what ``pi/prompt`` takes: text, pi images, and
``resource`` / ``resource_link`` blocks as pi's ``@file`` text (``<file name="…">…</file>``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from pi_lsp.paths import file_uri_path, usable_path
from pi_lsp.service.errors import InvalidParams
from pi_lsp.session.validate import image_problem

MAX_LINKED_FILE_BYTES = 4 * 1024 * 1024
"""A ``resource_link`` to a bigger file is refused (pi would send the whole file to the model)."""


def _bad(field_name: str, what: str) -> InvalidParams:
    return InvalidParams(f"{field_name} must be {what}", {"field": field_name})


def params_object(params: Any) -> dict[str, Any]:
    if params is None:
        return {}
    if not isinstance(params, dict):
        raise _bad("params", "an object")
    return params


def string(params: dict[str, Any], name: str) -> str:
    value = params.get(name)
    if not isinstance(value, str) or not value:
        raise _bad(name, "a non-empty string")
    if not usable_path(value):  # NUL or a lone surrogate: no file name, no session id
        raise _bad(name, "a string without NUL characters or lone surrogates")
    return value


def opt_string(params: dict[str, Any], name: str) -> str | None:
    if params.get(name) is None:
        return None
    return string(params, name)


def absolute_path(params: dict[str, Any], name: str, *, required: bool = True) -> str | None:
    value = string(params, name) if required else opt_string(params, name)
    if value is None:
        return None
    if not os.path.isabs(value):
        raise _bad(name, "an absolute path")
    return os.path.normpath(value)


def opt_array(params: dict[str, Any], name: str) -> list[Any]:
    value = params.get(name)
    if value is None:
        return []
    if not isinstance(value, list):
        raise _bad(name, "an array")
    return value


def _string_field(item: dict[str, Any], key: str, where: str) -> str:
    value = item.get(key)
    if not isinstance(value, str):
        raise _bad(f"{where}.{key}", "a string")
    return value


def _pairs(item: dict[str, Any], key: str, where: str) -> None:
    """``env`` / ``headers``: an array of ``{name, value}`` strings."""
    pairs = item.get(key)
    if not isinstance(pairs, list):
        raise _bad(f"{where}.{key}", "an array of {name, value} objects")
    for number, pair in enumerate(pairs):
        if not isinstance(pair, dict):
            raise _bad(f"{where}.{key}[{number}]", "a {name, value} object")
        _string_field(pair, "name", f"{where}.{key}[{number}]")
        _string_field(pair, "value", f"{where}.{key}[{number}]")


def mcp_servers(params: dict[str, Any]) -> list[str]:
    """``mcpServers``, checked as the schema has them: the stdio servers' names.

    Every ACP agent must accept stdio servers; pi has no MCP, so the caller ignores them. The
    initialize answer says ``mcpCapabilities {http: false, sse: false}``, so an http or sse
    server is refused (a client that sends one anyway learns it was not connected)."""
    names: list[str] = []
    for number, item in enumerate(opt_array(params, "mcpServers")):
        where = f"mcpServers[{number}]"
        if not isinstance(item, dict):
            raise _bad(where, "an MCP server object")
        kind = item.get("type")
        if kind in ("http", "sse"):
            raise InvalidParams(f"{where}.type: {kind} MCP servers are not supported (this agent's"
                                f" mcpCapabilities.{kind} is false)", {"field": f"{where}.type"})  # fmt: skip
        if kind is not None:
            raise _bad(f"{where}.type", 'absent (stdio), "http" or "sse"')
        name = _string_field(item, "name", where)
        _string_field(item, "command", where)
        args = item.get("args")
        if not isinstance(args, list) or not all(isinstance(arg, str) for arg in args):
            raise _bad(f"{where}.args", "an array of strings")
        _pairs(item, "env", where)
        names.append(name)
    return names


@dataclass
class PromptInput:
    """A ``session/prompt``'s blocks as pi's prompt: the text and the images."""

    text: str
    images: list[dict[str, Any]] = field(default_factory=list)


def prompt_input(params: dict[str, Any]) -> PromptInput:
    """Text blocks joined by newlines after the files' ``<file>`` blocks (pi puts ``@file`` text
    first); ``image`` blocks (and image ``blob`` resources) as pi images; audio is refused."""
    blocks = params.get("prompt")
    if not isinstance(blocks, list) or not blocks:
        raise _bad("prompt", "a non-empty array of content blocks")
    files: list[str] = []
    texts: list[str] = []
    images: list[dict[str, Any]] = []
    for number, block in enumerate(blocks):
        where = f"prompt[{number}]"
        if not isinstance(block, dict):
            raise _bad(where, "a content block object")
        kind = block.get("type")
        if kind == "text":
            text = block.get("text")
            if not isinstance(text, str):
                raise _bad(f"{where}.text", "a string")
            texts.append(text)
        elif kind == "image":
            images.append(_image(block, where))
        elif kind == "resource":
            resource = block.get("resource")
            if not isinstance(resource, dict):
                raise _bad(f"{where}.resource", "an object {uri, text} or {uri, blob}")
            uri = resource.get("uri")
            if not isinstance(uri, str):
                raise _bad(f"{where}.resource.uri", "a string")
            if isinstance(resource.get("text"), str):
                files.append(file_block(_shown_path(uri), resource["text"]))
            elif isinstance(resource.get("blob"), str) and str(resource.get("mimeType", "")).startswith(
                "image/"
            ):
                images.append(_image({"data": resource["blob"], "mimeType": resource["mimeType"]}, where))
            else:
                raise _bad(f"{where}.resource", "text contents, or an image blob with its mimeType")
        elif kind == "resource_link":
            uri = block.get("uri")
            if not isinstance(uri, str) or not uri:
                raise _bad(f"{where}.uri", "a non-empty string")
            files.append(_linked_file(uri, where))
        elif kind == "audio":
            raise InvalidParams(f"{where}: audio is not supported (pi's models take text and images)",
                                {"field": where})  # fmt: skip
        else:
            raise _bad(f"{where}.type", '"text", "image", "resource" or "resource_link"')
    return PromptInput("".join(files) + "\n".join(texts), images)


def file_block(path: str, text: str) -> str:
    """pi's text for an ``@file`` argument."""
    return f'<file name="{path}">\n{text}\n</file>\n'


def _shown_path(uri: str) -> str:
    return file_uri_path(uri) or uri


def _linked_file(uri: str, where: str) -> str:
    path = file_uri_path(uri) or (uri if os.path.isabs(uri) else None)
    if path is None:
        raise _bad(f"{where}.uri", "a file: URI or an absolute path (other resources cannot be read here)")
    try:
        size = os.path.getsize(path)
        if size > MAX_LINKED_FILE_BYTES:
            raise InvalidParams(f"{where}: {path} is {size} bytes, over the {MAX_LINKED_FILE_BYTES}-byte"
                                " limit for a linked file", {"field": f"{where}.uri"})  # fmt: skip
        with open(path, encoding="utf-8", errors="replace") as handle:
            return file_block(path, handle.read())
    except OSError as error:
        raise InvalidParams(
            f"{where}: could not read {path}: {error.strerror}", {"field": f"{where}.uri"}
        ) from None


def _image(block: dict[str, Any], where: str) -> dict[str, Any]:
    if (problem := image_problem(block)) is not None:
        key, what = problem
        raise _bad(f"{where}.{key}", what)
    return {"data": block["data"], "mimeType": block["mimeType"]}
