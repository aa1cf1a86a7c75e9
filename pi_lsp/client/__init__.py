"""Clients of the server, in Python: they start ``pi-lsp`` as a process and speak to it over the wire.

The JSON-RPC client the tests, benchmarks and tools share (``rpc_client.py``), ``pi-lsp chat``
(``chat_cli.py``) and ``pi-lsp demo`` (``demo.py`` with its chat and checkpoint scenes). None imports
``pi_lsp.server``: like the editors, they know the server only by its protocol.
"""
