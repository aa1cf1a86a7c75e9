"""``pi-lsp acp``: the Agent Client Protocol door into the same services as the language server.

``connection.py`` frames newline-delimited JSON-RPC; ``agent.py`` answers the ACP methods with the
services of ``service/build.py``; ``updates.py`` and ``replay.py`` turn runs and stored branches
into ``session/update``s; ``permissions.py`` asks approvals; ``serve.py`` runs it over stdio.
No pygls here (import-linter): this package and ``server/`` are siblings over ``service/``.
"""
