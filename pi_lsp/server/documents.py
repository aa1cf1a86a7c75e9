"""pygls glue for editor buffers: textDocument/didOpen, didChange, didSave, didClose.

pygls keeps each connection's documents up to date (incremental changes applied); these handlers
pass the whole current text on to ``service.documents`` (:class:`~pi_lsp.agent.documents.EditorDocuments`),
which is what the agent's tools consult before touching a file. Each connection owns its copies.
"""

from __future__ import annotations

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from pi_lsp.server.context import Context


def install(server: LanguageServer, ctx: Context) -> None:
    documents, owner = ctx.service.documents, str(ctx.client.id)

    def current_text(uri: str) -> str:
        return server.workspace.get_text_document(uri).source

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def on_open(params: types.DidOpenTextDocumentParams) -> None:
        documents.open(params.text_document.uri, params.text_document.text, owner)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def on_change(params: types.DidChangeTextDocumentParams) -> None:
        uri = params.text_document.uri
        documents.change(uri, current_text(uri), owner)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def on_save(params: types.DidSaveTextDocumentParams) -> None:
        documents.save(params.text_document.uri, params.text, owner)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def on_close(params: types.DidCloseTextDocumentParams) -> None:
        documents.close(params.text_document.uri, owner)
