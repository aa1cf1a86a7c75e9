"""Who may use a network transport: the token holder, from an allowed page, on the address meant.

stdio trusts the editor that started the server. A TCP or WebSocket port is reachable by every
local user and, through the browser, by every web page; so the network transports admit a
connection only when its first message is ``initialize`` carrying the secret token printed at start
(``initializationOptions.pi.token``), WebSocket handshakes are checked for ``Origin`` and ``Host``
(DNS rebinding), and a non-loopback address is bound only when asked for explicitly.
See ``docs/security.md``.
"""

from __future__ import annotations

import hmac
import ipaddress
import os
import secrets
import socket
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

import orjson

TOKEN_ENV = "PI_LSP_TOKEN"
MAX_FIRST_MESSAGE_BYTES = 1024 * 1024
"""The first message (before the token is checked) may not be bigger than this."""

_LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")


class AdmissionError(Exception):
    """A refused connection or start-up; the message is safe to show (it never holds the token)."""


def server_token() -> str:
    """``$PI_LSP_TOKEN`` (removed from the environment, so tools never inherit it), else a new one."""
    value = os.environ.pop(TOKEN_ENV, "")
    if value:
        if len(value) < 16 or any(char.isspace() for char in value):
            raise AdmissionError(f"{TOKEN_ENV} must be at least 16 characters without spaces")
        return value
    return secrets.token_urlsafe(32)


def tokens_match(expected: str, given: Any) -> bool:
    """Constant-time comparison, so the token cannot be guessed byte by byte from timings."""
    if not isinstance(given, str):
        return False
    return hmac.compare_digest(expected.encode("utf-8"), given.encode("utf-8", "surrogatepass"))


@dataclass(frozen=True)
class FirstMessage:
    """The verdict on a connection's first message: the body to pass on, or an error to answer."""

    body: bytes | None
    error_id: Any = None
    error: str = ""


def admit_first_message(body: bytes, token: str) -> FirstMessage:
    """Accept only ``initialize`` with the right token; the body passed on no longer holds it."""
    try:
        message = orjson.loads(body)
    except orjson.JSONDecodeError:
        return FirstMessage(None, None, "the first message must be an initialize request (it is not JSON)")
    if not isinstance(message, dict):
        return FirstMessage(None, None, "the first message must be an initialize request")
    msg_id = message.get("id")
    if isinstance(msg_id, bool) or not isinstance(msg_id, str | int):
        msg_id = None
    if message.get("method") != "initialize" or msg_id is None:
        return FirstMessage(None, msg_id, "the first message must be an initialize request")
    params = message.get("params")
    options = params.get("initializationOptions") if isinstance(params, dict) else None
    pi = options.get("pi") if isinstance(options, dict) else None
    given = pi.pop("token", None) if isinstance(pi, dict) else None
    if not tokens_match(token, given):
        reason = "is missing" if given is None else "is wrong"
        return FirstMessage(
            None,
            msg_id,
            f"initializationOptions.pi.token {reason}: use the token pi-lsp printed when it started",
        )
    return FirstMessage(orjson.dumps(message))


def refusal(msg_id: Any, message: str) -> bytes:
    """The JSON-RPC error answer sent before a refused connection is closed."""
    return orjson.dumps({"jsonrpc": "2.0", "id": msg_id, "error": {"code": -32600, "message": message}})


# ---------------------------------------------------------------------- addresses


def is_loopback_host(host: str) -> bool:
    """True when every address ``host`` names is a loopback address."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        pass
    try:
        infos = socket.getaddrinfo(host, None)
    except OSError:
        return False
    return bool(infos) and all(ipaddress.ip_address(info[4][0]).is_loopback for info in infos)


def check_bind(host: str, allow_remote: bool) -> None:
    """Refuse to listen beyond this machine unless the user said so with ``--allow-remote``."""
    if not allow_remote and not is_loopback_host(host):
        raise AdmissionError(
            f"{host} is not a loopback address: other machines could connect; "
            "pass --allow-remote to serve them (they still need the token)"
        )


def _host_name(value: str) -> str:
    """The host of a ``Host`` header value, without the port (``[::1]:80`` → ``::1``)."""
    value = value.strip().lower()
    if value.startswith("["):
        end = value.find("]")
        if end < 0 or (end + 1 < len(value) and not value[end + 1 :].startswith(":")):
            return value  # malformed: compared as is, so it matches nothing
        return value[1:end]
    name, _, port = value.rpartition(":")
    if name and port.isdigit():
        return name
    return value


@dataclass(frozen=True)
class HandshakeRefusal:
    """Why a WebSocket handshake is refused, and the HTTP status that says so."""

    status: int  # 400: the request is malformed; 403: it comes from somewhere not allowed
    reason: str


def _values(headers: Any, name: str) -> list[str]:
    """Every value of header ``name`` (``get`` of websockets' headers raises when there are two)."""
    if hasattr(headers, "get_all"):
        return list(headers.get_all(name))
    value = headers.get(name)
    return [] if value is None else [value]


def check_handshake(
    headers: Any, *, loopback: bool, allowed_origins: Collection[str]
) -> HandshakeRefusal | None:
    """Why a WebSocket handshake is refused, or None when it may proceed.

    ``headers`` is the request's header mapping; ``loopback`` says the server listens on a
    loopback address only. A missing or repeated ``Host`` is malformed HTTP/1.1 (400); a repeated
    ``Host`` is also how a rebinding page could slip a foreign name past a check of the first.
    """
    origins = _values(headers, "Origin")
    if origins and (len(origins) > 1 or origins[0] not in allowed_origins):
        return HandshakeRefusal(
            403, f"origin {origins[0]!r} is not allowed (start pi-lsp with --allow-origin to allow it)"
        )
    if loopback:
        hosts = _values(headers, "Host")
        if len(hosts) != 1:
            return HandshakeRefusal(400, f"the request has {len(hosts)} Host headers; it needs exactly one")
        if _host_name(hosts[0]) not in _LOOPBACK_NAMES:
            return HandshakeRefusal(
                403, f"Host {hosts[0]!r} is not this machine (only localhost, 127.0.0.1 or [::1])"
            )
    return None
