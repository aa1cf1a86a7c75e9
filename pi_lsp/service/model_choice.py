"""Which model and thinking level a session's runs use: ``pi/listModels``, ``pi/setModel``.

As pi: the session's last Anthropic ``model_change`` (else the ``model`` setting, else pi's
default), and its last ``thinking_level_change`` (else the ``defaultThinkingLevel`` setting),
clamped to what the model supports. A fresh session's first run records both first.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pi_lsp.agent_dir import agent_dir
from pi_lsp.llm.auth import anthropic_api_key
from pi_lsp.llm.models import DEFAULT_MODEL_ID, MODELS, ModelInfo, clamp_thinking_level, find_model
from pi_lsp.service import entries as ops
from pi_lsp.service.errors import InvalidParams, ModelError
from pi_lsp.service.host import SessionHost
from pi_lsp.service.registry import Client, OpenSession, Registry
from pi_lsp.service.settings import DEFAULT_CONTEXT_WINDOW, Settings
from pi_lsp.session import SessionManager
from pi_lsp.session.view import ContextView


@dataclass
class Model:
    """The model and thinking level a run uses, and the entries a fresh session gets first."""

    info: ModelInfo
    thinking_level: str
    initial_entries: list[tuple[str, Any]]


def _next_model_id(view: ContextView, settings: Settings) -> str:
    """The branch's last known Anthropic ``model_change``, else the ``model`` setting, else pi's default."""
    model_id: str | None = None
    if view.model is not None and view.model.get("provider") == "anthropic":
        model_id = view.model.get("modelId")
    if model_id is None or find_model(model_id) is None:
        model_id = settings.model or DEFAULT_MODEL_ID
    return model_id


def window_of(info: ModelInfo, settings: Settings) -> int:
    """A run's context window: the ``contextWindow`` setting when the user set one, else the model's."""
    return settings.context_window_override or info.context_window


def context_window(manager: SessionManager, settings: Settings) -> int:
    """The context window of the session's next run (usage, thresholds, branch summaries), as pi's
    ``model.contextWindow``; an unknown ``model`` setting falls back to
    :data:`~pi_lsp.service.settings.DEFAULT_CONTEXT_WINDOW` (the run itself reports the error).
    Reads the session's context: call under its lock."""
    if (override := settings.context_window_override) is not None:
        return override
    info = find_model(_next_model_id(manager.context_view(), settings))
    return info.context_window if info is not None else DEFAULT_CONTEXT_WINDOW


def resolve_model(session: OpenSession, settings: Settings) -> Model:
    """The model of ``session``'s next run (read its context: call under the session's lock)."""
    manager = session.manager
    view = manager.context_view()
    branch_types = {record.type for record in view.path}
    has_messages = len(view) > 0
    model_id = _next_model_id(view, settings)
    info = find_model(model_id)
    if info is None:
        raise ModelError(
            f'unknown model {model_id!r}: set the pi setting "model" to an Anthropic model id'
            " that pi/listModels lists",
            {"retryable": False, "model": model_id},
        )
    if "thinking_level_change" in branch_types and isinstance(view.thinking_level, str):
        level = view.thinking_level
    else:
        level = settings.thinking_level
    level = clamp_thinking_level(info, level)
    initial: list[tuple[str, Any]] = []
    if not has_messages and "model_change" not in branch_types:
        initial.append(("model_change", info.id))
    if "thinking_level_change" not in branch_types:
        initial.append(("thinking_level_change", level))
    return Model(info, level, initial)


def append_initial(session: OpenSession, entries: list[tuple[str, Any]]) -> list[str]:
    """Append :attr:`Model.initial_entries` (under the session's lock): their ids."""
    manager = session.manager
    ids: list[str] = []
    for kind, value in entries:
        if kind == "model_change":
            ids.append(manager.append_model_change("anthropic", value))
        else:
            ids.append(manager.append_thinking_level_change(value))
    return ids


def check_model_id(model_id: str | None) -> None:
    """``pi/setModel``'s ``modelId``: one of :data:`MODELS` (InvalidParams otherwise)."""
    if model_id is not None and find_model(model_id) is None:
        raise InvalidParams(f"modelId {model_id!r} is not a model this server knows (see pi/listModels)",
                            {"field": "modelId"})  # fmt: skip


async def set_model(
    host: SessionHost,
    session: OpenSession,
    settings: Settings,
    model_id: str | None,
    thinking_level: str | None,
) -> dict[str, Any]:
    """``pi/setModel`` on a session with no run: append the changes pi would (none if nothing
    changes), as ``model_change`` / ``thinking_level_change`` entries."""
    current = resolve_model(session, settings)

    def write() -> tuple[dict[str, Any], list[str]]:
        info = find_model(model_id) if model_id is not None else current.info
        assert info is not None
        level = clamp_thinking_level(info, thinking_level or current.thinking_level)
        manager = session.manager
        ids: list[str] = []
        view = manager.context_view()
        recorded = view.model.get("modelId") if view.model is not None else None
        if info.id != recorded:
            ids.append(manager.append_model_change("anthropic", info.id))
        has_level = any(record.type == "thinking_level_change" for record in view.path)
        if level != view.thinking_level or not has_level:
            ids.append(manager.append_thinking_level_change(level))
        model = {"provider": "anthropic", "modelId": info.id}
        return {"model": model, "thinkingLevel": level, "entryIds": ids}, ids

    result, ids = await host.run(session, write, writes=True)
    if ids:
        host.emit(session, ops.Change("append", ids))
    return result


def list_models(registry: Registry, client: Client) -> dict[str, Any]:
    """``pi/listModels``: every model, the one the client's active session (else its settings) uses."""
    session = registry.get(client.active) if client.active is not None else None
    if session is not None:
        try:
            model = resolve_model(session, client.settings)
            current = {
                "provider": "anthropic",
                "modelId": model.info.id,
                "thinkingLevel": model.thinking_level,
            }
        except ModelError:
            session = None
    if session is None:
        info = find_model(client.settings.model or DEFAULT_MODEL_ID) or find_model(DEFAULT_MODEL_ID)
        assert info is not None
        level = clamp_thinking_level(info, client.settings.thinking_level)
        current = {"provider": "anthropic", "modelId": info.id, "thinkingLevel": level}
    models = [model.to_wire() for model in MODELS.values()]
    # additive: whether a key is configured, so an editor can say how to set one before a prompt fails
    # agentDir: where pi's auth.json and settings live for this server (for the no-key notice)
    return {
        "models": models,
        "current": current,
        "hasApiKey": anthropic_api_key() is not None,
        "agentDir": str(agent_dir()),
    }
