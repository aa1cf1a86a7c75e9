"""pi-lsp: a language server that owns AI coding-agent conversations as pi-compatible session trees."""

__version__ = "0.1.0"
