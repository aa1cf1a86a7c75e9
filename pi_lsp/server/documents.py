"""pygls glue for editor buffers: textDocument/didOpen, didChange, didSave, didClose.

pygls keeps each connection's documents up to date (incremental changes applied); these handlers
pass the whole current text on to ``service.documents`` (:class:`~pi_lsp.agent.documents.EditorDocuments`),
which is what the agent's tools consult before touching a file. Each connection owns its copies.
A document whose URI names no possible file (a NUL, a lone surrogate) is not kept: no tool can
touch such a file, and every file call on its path would raise.
"""

from __future__ import annotations

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from pi_lsp.paths import uri_to_path, usable_path
from pi_lsp.server.context import Context


def _usable(uri: str) -> bool:
    return usable_path(uri) and usable_path(uri_to_path(uri))


def install(server: LanguageServer, ctx: Context) -> None:
    documents, owner = ctx.service.documents, str(ctx.client.id)

    def current_text(uri: str) -> str:
        return server.workspace.get_text_document(uri).source

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def on_open(params: types.DidOpenTextDocumentParams) -> None:
        if _usable(params.text_document.uri):
            documents.open(params.text_document.uri, params.text_document.text, owner)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def on_change(params: types.DidChangeTextDocumentParams) -> None:
        uri = params.text_document.uri
        if _usable(uri):
            documents.change(uri, current_text(uri), owner)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def on_save(params: types.DidSaveTextDocumentParams) -> None:
        if _usable(params.text_document.uri):
            documents.save(params.text_document.uri, params.text, owner)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def on_close(params: types.DidCloseTextDocumentParams) -> None:
        if _usable(params.text_document.uri):
            documents.close(params.text_document.uri, owner)
