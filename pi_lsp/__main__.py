"""``python -m pi_lsp``: the same entry point as the ``pi-lsp`` script."""

from pi_lsp.cli import main

raise SystemExit(main())
