"""``pi/getServerStatus`` (pi-lsp's own addition): what an editor's health check reports.

It says whether an Anthropic key is found and where, never the key; where model calls go; which
tokenizer and summariser the connection's settings choose; and which files the server watches for
the connection's system prompts, so a client without file watchers (Neovim 0.7) can show that saves
are noticed.
"""

from __future__ import annotations

import asyncio
from typing import Any

from pi_lsp import __version__
from pi_lsp.llm.anthropic_client import resolve_base_url
from pi_lsp.llm.auth import anthropic_api_key_source
from pi_lsp.service.settings import Settings


async def server_status(
    settings: Settings, watching: dict[str, Any], protocol_version: int
) -> dict[str, Any]:
    """The status record for a client with these ``settings``; ``watching`` comes from the prompt
    service (``PromptService.watch_status``). ``auth.json`` is read in a thread: it may sit on a
    slow disk."""
    source = await asyncio.get_running_loop().run_in_executor(None, anthropic_api_key_source)
    return {
        "version": __version__,
        "protocolVersion": protocol_version,
        "apiKey": {"found": source is not None, "source": source},
        # where model calls go (ANTHROPIC_BASE_URL; null: Anthropic's own endpoint): a health check
        # shows it, since a stale proxy variable is a common reason for failing runs
        "baseUrl": resolve_base_url(None),
        "tokenizer": settings.tokenizer,
        "summarizer": settings.summarizer,
        "approval": settings.approval,
        "watching": watching,
    }
