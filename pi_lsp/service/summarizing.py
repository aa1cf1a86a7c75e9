"""A model call made for an open session: the summariser's life, and checking nothing moved meanwhile.

Compaction and branch summaries both summarise outside the session's lock (a model call takes
seconds) and append the result under it. :func:`summarizer_for` is the one place that finds the
API key, picks the summariser, imports the SDK off the event loop, maps model failures to the
protocol's ModelError and closes the client. :func:`check_unchanged` refuses the append when the
session was closed or its branch moved during the call.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Mapping
from typing import Any, TypeVar

from pi_lsp.gcpause import gc_paused
from pi_lsp.llm import AnthropicSummarizer, OfflineSummarizer, Summarizer, choose_summarizer
from pi_lsp.llm import ModelError as LlmModelError
from pi_lsp.llm.auth import anthropic_api_key
from pi_lsp.secrets import redact
from pi_lsp.service.closing import close_quietly
from pi_lsp.service.compaction_config import RunConfig
from pi_lsp.service.errors import ModelError, SessionBusy, SessionNotFound
from pi_lsp.service.registry import OpenSession, Registry

log = logging.getLogger(__name__)
T = TypeVar("T")
InThread = Callable[[Callable[[], T]], Awaitable[T]]


@contextlib.asynccontextmanager
async def summarizer_for(
    config: RunConfig, branch_model: Mapping[str, Any] | None
) -> AsyncIterator[Summarizer]:
    """The configured summariser, ready to call; model failures inside become protocol ModelErrors.

    The model is the configured one, else the branch's own model when it is an Anthropic one.
    """
    api_key = None
    if config.summarizer != "offline":
        api_key = await asyncio.get_running_loop().run_in_executor(None, anthropic_api_key)
    model = config.model
    if model is None and branch_model is not None and branch_model.get("provider") == "anthropic":
        candidate = branch_model.get("modelId")
        model = candidate if isinstance(candidate, str) and candidate else None
    mode: Any = config.summarizer
    summarizer = choose_summarizer(mode, model, api_key, retry=config.retry_policy(), timeout=config.timeout)
    try:
        await _load_sdk(summarizer)
        yield summarizer
    except LlmModelError as error:
        raise model_error(error) from None
    finally:
        await close_quietly(summarizer, "aclose", "summariser")


async def summarise_off_loop(
    summarizer: Summarizer, make: Callable[[], Coroutine[Any, Any, T]], in_thread: InThread[T]
) -> T:
    """Run the summary that ``make()`` starts; the offline summariser in a worker thread.

    The offline digest is pure computation over every summarised message (seconds for a session
    of tens of thousands of messages); on the event loop it would stop the server answering
    anything meanwhile. In the worker it shares the interpreter lock with the loop, which the
    interpreter hands over every few milliseconds, except during one long C call: the cyclic
    garbage collector's full passes, which its allocations trigger and which walk the whole heap
    (a big open session is millions of objects: up to a second each). So the collector is paused
    while it runs (:func:`~pi_lsp.gcpause.gc_paused`; the digest makes no cycles).
    A model call is network-bound and stays on the loop (its client lives there).
    """
    if isinstance(summarizer, OfflineSummarizer):

        def digest() -> T:
            with gc_paused():
                return asyncio.run(make())

        return await in_thread(digest)
    return await make()


def model_error(error: Any) -> ModelError:
    """The protocol's ModelError (-32004, ``data: {status?, retryable}``) for an llm ModelError."""
    data: dict[str, Any] = {"retryable": bool(error.retryable)}
    if error.status is not None:
        data["status"] = error.status
    return ModelError(redact(error.message), data)


def check_unchanged(registry: Registry, session: OpenSession, leaf_id: str | None, what: str) -> None:
    """Refuse to append when the session was closed or its branch moved during the model call.

    New entries appended under the prepared leaf are fine (they are kept); a leaf moved to
    another branch, or a compaction appended meanwhile, is a conflict. Runs under the lock.
    """
    if registry.get(session.id) is not session:
        raise SessionNotFound(f"session {session.id} was closed during the {what}; nothing was written")
    manager = session.manager
    current = manager.leaf_id
    steps = 0
    limit = manager.entry_count + 1
    while current is not None and current != leaf_id and steps <= limit:
        record = manager.get_record(current)
        if record is None or record.type == "compaction":
            break
        current = record.parent_id
        steps += 1
    if current != leaf_id or (leaf_id is None and manager.leaf_id is not None):
        raise SessionBusy(
            f"session {session.id} moved to another branch during the {what};"
            " nothing was written (try again)",
            {"conflict": True},
        )


async def _load_sdk(summarizer: Summarizer) -> None:
    """Import the Anthropic SDK (seconds) in a thread instead of on the event loop."""
    if isinstance(summarizer, AnthropicSummarizer) and summarizer.client.has_api_key:
        loop = asyncio.get_running_loop()
        for name in ("anthropic", "httpx2"):
            await loop.run_in_executor(None, importlib.import_module, name)
