"""The ``usage_update`` gauge is sized as the run's context window: the user's ``contextWindow``
setting when one is set, else the model's own (``model_choice.window_of``, as the run uses)."""

from __future__ import annotations

from typing import Any

from pi_lsp.acp.updates import UpdateStream
from pi_lsp.llm.models import find_model
from pi_lsp.service.settings import Settings

MODEL = "claude-sonnet-4-5"


def usage_after_a_call(settings: Settings) -> dict[str, Any]:
    sent: list[dict[str, Any]] = []
    stream = UpdateStream("/project", sent.append, settings)
    usage = {"input": 100, "output": 20, "cacheRead": 0, "cacheWrite": 0, "cost": {"total": 0.5}}
    message = {"role": "assistant", "model": MODEL, "usage": usage, "content": []}
    stream.on_event({"type": "message_end", "message": message})
    assert len(sent) == 1
    return sent[0]


def test_the_context_window_setting_sizes_the_gauge() -> None:
    settings = Settings(load=False)
    settings.set_client_configuration({"pi": {"contextWindow": 123_456}})
    update = usage_after_a_call(settings)
    assert update == {"sessionUpdate": "usage_update", "used": 120, "size": 123_456,
                      "cost": {"amount": 0.5, "currency": "USD"}}  # fmt: skip


def test_without_the_setting_the_gauge_is_the_models_window() -> None:
    info = find_model(MODEL)
    assert info is not None
    assert usage_after_a_call(Settings(load=False))["size"] == info.context_window
