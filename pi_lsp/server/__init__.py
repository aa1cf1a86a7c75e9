"""The pi-lsp language server (pygls 2.x): transports, protocol and the method handlers.

Importing this package is cheap; pygls and the services load when a transport starts.
"""

from __future__ import annotations

from collections.abc import Sequence


def serve(
    *,
    tcp: str | None = None,
    ws: str | None = None,
    allow_remote: bool = False,
    allow_origins: Sequence[str] = (),
) -> int:
    """Serve over stdio (default), or TCP / WebSocket at ``HOST:PORT``; returns the exit code.

    The network transports admit only clients presenting the token printed at start (see
    ``docs/security.md``); ``allow_remote`` and ``allow_origins`` widen who may connect.
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
    options = network.NetworkOptions(token, allow_remote, tuple(allow_origins))
    if tcp is not None:
        return network.serve_tcp(tcp, options)
    assert ws is not None
    return network.serve_ws(ws, options)
