"""textDocument/didOpen|didChange|didSave|didClose reach the agent's editor-buffer table.

Driven through the real connection object (pygls protocol, our handlers, the shared service) by
feeding it JSON-RPC message bodies, as the transports do; incremental changes are applied by
pygls with UTF-16 positions.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pi_lsp.server.app import create_language_server
from pi_lsp.server.capabilities import initialize_result
from pi_lsp.service.build import build_service


def _send(server: Any, method: str, params: dict[str, Any], msg_id: int | None = None) -> None:
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": params}
    if msg_id is not None:
        message["id"] = msg_id
    server.protocol.receive(json.dumps(message).encode())


def test_sync_capability_is_advertised() -> None:
    sync = initialize_result()["capabilities"]["textDocumentSync"]
    assert sync == {"openClose": True, "change": 2, "save": {"includeText": False}}


async def test_buffers_follow_the_editor_and_are_dropped_with_the_connection(tmp_path: Path) -> None:
    path = tmp_path / "m.py"
    path.write_text("x = 1\n")
    uri = path.as_uri()
    service = build_service()
    try:
        server, client = create_language_server(service)
        server.protocol.set_writer(_NullWriter())
        _send(server, "initialize", {"processId": None, "rootUri": tmp_path.as_uri(), "capabilities": {}}, 1)
        _send(server, "initialized", {})
        doc = {"uri": uri, "languageId": "python", "version": 1, "text": "x = 1\n"}
        _send(server, "textDocument/didOpen", {"textDocument": doc})
        assert service.documents.unsaved_text(str(path)) is None  # same as the disk
        change = {
            "range": {"start": {"line": 0, "character": 4}, "end": {"line": 0, "character": 5}},
            "text": "😀 2",
        }
        _send(
            server,
            "textDocument/didChange",
            {"textDocument": {"uri": uri, "version": 2}, "contentChanges": [change]},
        )
        assert service.documents.unsaved_text(str(path)) == "x = 😀 2\n"
        change = {
            "range": {"start": {"line": 0, "character": 6}, "end": {"line": 0, "character": 8}},
            "text": "3",
        }
        _send(
            server,
            "textDocument/didChange",
            {"textDocument": {"uri": uri, "version": 3}, "contentChanges": [change]},
        )
        assert service.documents.unsaved_text(str(path)) == "x = 😀3\n"
        path.write_text("x = 😀3\n")  # the editor saved
        _send(server, "textDocument/didSave", {"textDocument": {"uri": uri}})
        assert service.documents.unsaved_text(str(path)) is None
        _send(
            server,
            "textDocument/didChange",
            {"textDocument": {"uri": uri, "version": 4}, "contentChanges": [{"text": "all new"}]},
        )
        assert service.documents.unsaved_text(str(path)) == "all new"
        _send(server, "textDocument/didClose", {"textDocument": {"uri": uri}})
        assert service.documents.unsaved_text(str(path)) is None
        _send(server, "textDocument/didOpen", {"textDocument": {**doc, "text": "dirty"}})
        assert service.documents.unsaved_text(str(path)) == "dirty"
        await service.disconnect(client)
        assert service.documents.unsaved_text(str(path)) is None
    finally:
        await service.close()


class _NullWriter:
    """Answers (initialize's) are not looked at here."""

    def write(self, data: bytes) -> None:
        pass

    def close(self) -> None:
        pass
