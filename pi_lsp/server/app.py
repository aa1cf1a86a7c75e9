"""Building one connection's language server: handlers bound to the shared service and a client.

Every transport calls :func:`create_language_server` once per connection (stdio has exactly one),
so each editor gets its own protocol, settings and active session while sessions are shared.
"""

from __future__ import annotations

import logging
from typing import Any

from lsprotocol import types
from pygls.exceptions import FeatureRequestError
from pygls.lsp.server import LanguageServer
from pygls.protocol import default_converter

from pi_lsp import __version__
from pi_lsp.paths import uri_to_path, usable_path
from pi_lsp.secrets import redact
from pi_lsp.server import documents, prompt_features
from pi_lsp.server.capabilities import initialize_result
from pi_lsp.server.context import Context, Handler
from pi_lsp.server.handlers import METHODS
from pi_lsp.server.initialize import apply_initialize
from pi_lsp.server.params import Params
from pi_lsp.server.protocol import PiProtocol
from pi_lsp.service.build import PiService
from pi_lsp.service.notifications import handling
from pi_lsp.service.registry import Client, request_arrived

log = logging.getLogger(__name__)


class PiLanguageServer(LanguageServer):
    """pygls' server with errors outside requests logged rather than shown as editor pop-ups."""

    protocol: PiProtocol

    def report_server_error(self, error: Exception, source: Any) -> None:
        if source is FeatureRequestError:  # already answered as an error response
            log.debug("request failed: %s", redact(str(error)))
            return
        log.error("%s: %s", getattr(source, "__name__", source), redact(str(error)))


def ready_converter(initialize: Any = None) -> Any:
    """A new converter for one connection, with the hooks its start needs already made: cattrs
    generates code for each class the first time it meets it (lsprotocol's ``InitializeParams``
    and the client capabilities, and our ``InitializeResult``: ~40 ms, on top of ~40 ms for
    lsprotocol resolving the types of all its classes when the converter is built). The stdio
    transport calls this off the event loop's thread, with the ``initialize`` request it will
    replay into pygls."""
    converter = default_converter()  # type: ignore[no-untyped-call]
    if initialize is not None:
        try:
            converter.structure(initialize, types.InitializeRequest)
        except Exception:  # pygls answers it at the replay as before; only the head start is lost
            log.debug("the initialize request did not structure ahead of pygls", exc_info=True)
    converter.structure(initialize_result(), types.InitializeResult)
    return converter


def _bind(ctx: Context, handler: Handler) -> Any:
    async def handle(params: Any) -> Any:
        handling(ctx.client)  # its notifications wait for the response (service/notifications.py)
        request_arrived()  # which session is active follows arrival order (service/registry.py)
        return await handler(ctx, Params(params))

    return handle


def _uri_path(uri: str | None) -> str | None:
    """The path of ``uri``; None without one, or when no file can have it (NUL, lone surrogate)."""
    path = uri_to_path(uri) if uri else None
    return path if path is not None and usable_path(path) else None


def create_language_server(
    service: PiService, client: Client | None = None, converter: Any = None
) -> tuple[PiLanguageServer, Client]:
    """A fresh server object for one connection, registered with ``service`` as a client (a new
    one, or ``client`` when the start-up phase already connected it, applied its ``initialize``
    and answered its first requests), with ``converter`` when one was built for it ahead of time
    (``transport.prepare_takeover``), else a new one.
    """
    server = PiLanguageServer(
        "pi-lsp",
        __version__,
        text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
        protocol_cls=PiProtocol,
        converter_factory=default_converter if converter is None else lambda: converter,
        max_workers=2,
    )
    initialize_applied = client is not None  # by the start-up phase, which replays it into pygls
    if client is None:
        client = Client()
        service.connect(client)
    server.protocol.on_message = service.warm_up.touch
    service.warm_up.touch()  # after start-up: the first prompt's modules load once the client goes quiet
    client.notify = server.protocol.notify  # the raw sink; services send through notifications.send
    client.request = lambda method, params: server.protocol.send_request_async(method, params)
    ctx = Context(service, client)
    converter = server.protocol._converter

    @server.feature(types.INITIALIZE)
    async def on_initialize(params: types.InitializeParams) -> None:
        nonlocal initialize_applied
        if initialize_applied:
            # The replay of the initialize the start-up phase applied: its params again would change
            # nothing (and unstructuring them is ~30 ms of code generation on the loop). Its
            # settings files are read again, as applying it did, for an edit made meanwhile.
            initialize_applied = False
            await client.settings.reload_files_async()
            return
        await apply_initialize(client, converter.unstructure(params))

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    def on_configuration(params: types.DidChangeConfigurationParams) -> None:
        if not client.settings.set_client_configuration(params.settings):
            log.debug("didChangeConfiguration without a pi section; settings unchanged")

    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    async def on_watched_files(params: types.DidChangeWatchedFilesParams) -> None:
        paths = [_uri_path(change.uri) or "" for change in params.changes]
        for path in paths:
            session = service.registry.find_path(path)
            if session is not None:
                service.watcher.touch(session.id)
        prompt_features.watched_files(ctx, [change.uri for change in params.changes])
        if any(path.endswith("settings.json") for path in paths):
            await client.settings.reload_files_async()

    documents.install(server, ctx)  # textDocument/didOpen|didChange|didSave|didClose
    prompt_features.install(server, ctx)  # initialized/shutdown/folders/hover for the system prompt
    for method, handler in METHODS.items():
        server.feature(method)(_bind(ctx, handler))
    return server, client
