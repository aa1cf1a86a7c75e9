"""The pi-lsp language server (pygls 2.x): transports, protocol and the method handlers.

Importing this package is cheap; pygls and the services load when a transport starts.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path


def serve(
    *,
    tcp: str | None = None,
    ws: str | None = None,
    allow_remote: bool = False,
    allow_origins: Sequence[str] = (),
    state_file: str | None = None,
    idle_exit: float | None = None,
    reattach_grace: float = 0.0,
) -> int:
    """Serve over stdio (default), or TCP / WebSocket at ``HOST:PORT``; returns the exit code.

    The network transports admit only clients presenting the token printed at start (see
    ``docs/security.md``); ``allow_remote`` and ``allow_origins`` widen who may connect.
    ``state_file``, ``idle_exit`` and ``reattach_grace`` make it a shared server that editor
    windows find, reconnect to and leave running runs on (:mod:`pi_lsp.server.daemon`).
    """
    if tcp is None and ws is None:
        from pi_lsp.server.transport import serve_stdio

        return serve_stdio()
    from pi_lsp.secrets import register_secret
    from pi_lsp.server import network
    from pi_lsp.server.admission import AdmissionError, server_token

    try:
        token = server_token()
    except AdmissionError as error:
        import sys

        print(f"pi-lsp: error: {error}", file=sys.stderr)
        return 2
    register_secret(token)  # redacted from every log line and error from now on
    options = network.NetworkOptions(
        token,
        allow_remote,
        tuple(allow_origins),
        state_file=Path(state_file) if state_file else None,
        idle_exit=idle_exit,
        reattach_grace=reattach_grace,
    )
    if tcp is not None:
        return network.serve_tcp(tcp, options)
    assert ws is not None
    return network.serve_ws(ws, options)
