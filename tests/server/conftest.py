"""The ``client`` fixture of the language-server tests: a real server subprocess per test, over stdio
(helpers in ``support.py``)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from tests.server.support import SERVER, make_client, server_env


@pytest_lsp.fixture(
    config=ClientServerConfig(server_command=SERVER, server_env=server_env(), client_factory=make_client)
)
async def client(
    lsp_client: LanguageClient, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[LanguageClient]:
    root = tmp_path_factory.mktemp("workspace")
    params = types.InitializeParams(
        capabilities=types.ClientCapabilities(),
        root_uri=root.as_uri(),
        workspace_folders=[types.WorkspaceFolder(uri=root.as_uri(), name="workspace")],
        initialization_options={"pi": {"sessionDir": str(root / "sessions")}},
    )
    await lsp_client.initialize_session(params)
    lsp_client.root = root  # type: ignore[attr-defined]
    yield lsp_client
    await lsp_client.shutdown_session()
