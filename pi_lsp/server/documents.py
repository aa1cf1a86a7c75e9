"""pygls glue for editor buffers: textDocument/didOpen, didChange, didSave, didClose.

pygls keeps each connection's documents up to date (incremental changes applied); these handlers
pass the whole current text on to :meth:`PiService.editor_document`, which is what the agent's
tools consult before touching a file (``pi_lsp/agent/documents.py``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lsprotocol import types

if TYPE_CHECKING:
    from pygls.lsp.server import LanguageServer

    from pi_lsp.server.handlers import Context


def install(server: LanguageServer, ctx: Context) -> None:
    service, client = ctx.service, ctx.client

    def current_text(uri: str) -> str:
        return server.workspace.get_text_document(uri).source

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def on_open(params: types.DidOpenTextDocumentParams) -> None:
        service.editor_document(client, "open", params.text_document.uri, params.text_document.text)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def on_change(params: types.DidChangeTextDocumentParams) -> None:
        uri = params.text_document.uri
        service.editor_document(client, "change", uri, current_text(uri))

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def on_save(params: types.DidSaveTextDocumentParams) -> None:
        service.editor_document(client, "save", params.text_document.uri, params.text)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def on_close(params: types.DidCloseTextDocumentParams) -> None:
        service.editor_document(client, "close", params.text_document.uri)
