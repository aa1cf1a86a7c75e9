"""The pi-lsp language server (pygls 2.x): transports, protocol and the method handlers.

Importing this package is cheap; pygls and the services load when a transport starts.
"""

from __future__ import annotations


def serve(*, tcp: str | None = None, ws: str | None = None) -> int:
    """Serve over stdio (default), or TCP / WebSocket at ``HOST:PORT``; returns the exit code."""
    from pi_lsp.server import transport

    if tcp is not None:
        return transport.serve_tcp(tcp)
    if ws is not None:
        return transport.serve_ws(ws)
    return transport.serve_stdio()
