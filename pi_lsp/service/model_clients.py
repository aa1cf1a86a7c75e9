"""The server's Anthropic SDK clients: one per (API key, base URL, retries, timeout), kept for its life.

Making an SDK client is not cheap: its HTTP transport builds a TLS context, which loads and parses
the CA bundle (tens of milliseconds of CPU, most of a short run's own work), and a fresh client has
an empty connection pool, so its first request opens a new connection (TCP and TLS handshakes).
Runs therefore borrow the client of their credentials and options from this cache and give it back
when they end, instead of making and closing one each.

A client is never shared across keys or endpoints: the API key and the base URL (as given, else
``ANTHROPIC_BASE_URL`` when the client is asked for) are part of what picks it. When the key or the
endpoint changes (a new key in pi's ``auth.json``, say), the clients of the old credentials are
retired: closed as soon as no run holds them. At most :data:`MAX_CLIENTS` are kept (the least
recently used beyond that are retired too); every one left is closed at server exit (``aclose``,
registered in ``build.py``).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final

from pi_lsp.llm.anthropic_client import mark_asyncio_thread, resolve_base_url
from pi_lsp.service.closing import close_quietly
from pi_lsp.service.settings import Settings

log = logging.getLogger(__name__)

MAX_CLIENTS: Final = 4
"""Clients kept at once: one per distinct (retries, timeout) setting in use is the common case."""
DEFAULT_MAX_RETRIES: Final = 2  # the SDK's and pi's ``retry.provider.maxRetries`` default
DEFAULT_TIMEOUT: Final = 600.0  # seconds: pi's ``retry.provider.timeoutMs`` default


@dataclass(frozen=True)
class ClientKey:
    """What one client is made for. The key is left out of ``repr`` (it would reach logs)."""

    api_key: str = field(repr=False)
    base_url: str | None
    max_retries: int = DEFAULT_MAX_RETRIES
    timeout: float = DEFAULT_TIMEOUT

    @property
    def credentials(self) -> tuple[str, str | None]:
        return self.api_key, self.base_url


def create_sdk_client(key: ClientKey) -> Any:
    """The SDK client for ``key``, with pi's auth and API-version headers (imports the SDK: slow)."""
    from pi_lsp.llm.anthropic_client import create_async_client

    return create_async_client(key.api_key, key.base_url, max_retries=key.max_retries, timeout=key.timeout)


@dataclass(eq=False)
class _Kept:
    client: Any
    borrowed: int = 0
    retired: bool = False


class ModelClients:
    """Borrow with :meth:`borrow`, give back with :meth:`give_back`; :meth:`aclose` at exit.

    Used from the server's event loop only; the client itself is made in a worker thread (the first
    one imports the SDK, which takes seconds).
    """

    def __init__(
        self, factory: Callable[[ClientKey], Any] = create_sdk_client, limit: int = MAX_CLIENTS
    ) -> None:
        self._factory = factory
        self._limit = limit
        self._clients: dict[ClientKey, _Kept] = {}  # least recently used first
        self._lent: dict[int, _Kept] = {}  # id(client) → its entry, for every client not closed
        self._making: asyncio.Lock | None = None
        self._closed = False

    def __len__(self) -> int:
        """How many clients are kept for new borrowers (retired ones not counted)."""
        return len(self._clients)

    async def borrow(
        self,
        api_key: str,
        *,
        base_url: str | None = None,
        max_retries: int = DEFAULT_MAX_RETRIES,
        timeout: float = DEFAULT_TIMEOUT,
    ) -> Any:
        """The client for these credentials and options, made on first use; give it back after."""
        if self._closed:
            raise RuntimeError("the server's model clients are closed")
        key = ClientKey(api_key, resolve_base_url(base_url), max_retries, float(timeout))
        mark_asyncio_thread()  # runs stream on this thread: the SDK's reads then skip a task lookup
        kept = self._clients.get(key)
        if kept is None:
            if self._making is None:
                self._making = asyncio.Lock()
            async with self._making:  # two runs starting together make one client, not two
                kept = self._clients.get(key)
                if kept is None:
                    client = await asyncio.get_running_loop().run_in_executor(None, self._factory, key)
                    kept = _Kept(client)
                    self._lent[id(client)] = kept
                    await self._retire_others(key)
                    self._clients[key] = kept
        self._clients[key] = self._clients.pop(key)  # most recently used last
        kept.borrowed += 1
        return kept.client

    async def give_back(self, client: Any) -> None:
        """A run is done with ``client``; a retired client is closed once nobody holds it."""
        kept = self._lent.get(id(client))
        if kept is None or kept.client is not client:
            return
        kept.borrowed = max(0, kept.borrowed - 1)
        if kept.retired and kept.borrowed == 0:
            await self._close(kept)

    async def aclose(self) -> None:
        """Server exit: close every client (runs have been ended before)."""
        self._closed = True
        self._clients.clear()
        for kept in list(self._lent.values()):
            await self._close(kept)

    async def _retire_others(self, key: ClientKey) -> None:
        """A client for ``key`` is being added: retire those of other credentials (the key or the
        endpoint changed) and the least recently used beyond the limit."""
        stale = [other for other in self._clients if other.credentials != key.credentials]
        unused = [other for other in self._clients if other not in stale]
        stale += unused[: max(0, len(unused) + 1 - self._limit)]
        for other in stale:
            kept = self._clients.pop(other)
            kept.retired = True
            if kept.borrowed == 0:
                await self._close(kept)

    async def _close(self, kept: _Kept) -> None:
        if self._lent.pop(id(kept.client), None) is None:
            return
        log.debug("closing a model client")
        await close_quietly(kept.client, "close", "SDK client")


def provider_options(settings: Settings) -> dict[str, Any]:
    """pi's ``retry.provider.{maxRetries,timeoutMs}`` for the runs' SDK client, when set."""
    raw = settings.as_dict().get("retry")
    provider = raw.get("provider") if isinstance(raw, dict) else None
    options: dict[str, Any] = {}
    if isinstance(provider, dict):
        retries = provider.get("maxRetries")
        if isinstance(retries, int) and not isinstance(retries, bool) and retries >= 0:
            options["max_retries"] = retries
        timeout = provider.get("timeoutMs")
        if isinstance(timeout, int | float) and not isinstance(timeout, bool) and timeout > 0:
            options["timeout"] = timeout / 1000
    return options
