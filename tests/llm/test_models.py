"""Our model table, cost and thinking-level clamping against pi's own (read from the installed pi)."""

from __future__ import annotations

import json
import subprocess
from typing import Any

import pytest

from pi_lsp.llm.models import (
    DEFAULT_MODEL_ID,
    MODELS,
    THINKING_LEVELS,
    calculate_cost,
    clamp_thinking_level,
    empty_usage,
    find_model,
    supported_thinking_levels,
)
from tests.oracle import oracle_dir, require_oracle

_SCRIPT = r"""
const root = process.argv[1];
const ai = await import(root + "/node_modules/@mariozechner/pi-ai/dist/index.js");
const agent = root + "/node_modules/@mariozechner/pi-coding-agent/dist";
const resolver = await import(agent + "/core/model-resolver.js");
const levels = ["off", "minimal", "low", "medium", "high", "xhigh", "bogus"];
const usages = [[1500, 120, 0, 1400], [0, 0, 0, 0], [123457, 9876, 54321, 777], [1, 3, 7, 11]];
const models = ai.getModels("anthropic").map((m) => ({
  model: m,
  clamp: Object.fromEntries(levels.map((l) => [l, ai.clampThinkingLevel(m, l)])),
  supported: ai.getSupportedThinkingLevels(m),
  costs: usages.map(([input, output, cacheRead, cacheWrite]) => {
    const usage = {input, output, cacheRead, cacheWrite, totalTokens: 0,
                   cost: {input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0}};
    ai.calculateCost(m, usage);
    return usage;
  }),
}));
console.log(JSON.stringify({models, defaultId: resolver.defaultModelPerProvider.anthropic}));
"""


@pytest.fixture(scope="module")
def pi_models() -> dict[str, Any]:
    require_oracle()
    completed = subprocess.run(
        ["node", "--input-type=module", "-e", _SCRIPT, str(oracle_dir())],
        capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    result: dict[str, Any] = json.loads(completed.stdout)
    return result


@pytest.mark.oracle
def test_table_equals_pis_anthropic_models(pi_models: dict[str, Any]) -> None:
    theirs = {entry["model"]["id"]: entry["model"] for entry in pi_models["models"]}
    assert sorted(theirs) == sorted(MODELS)
    for model_id, pi_model in theirs.items():
        ours = MODELS[model_id]
        wire = ours.to_wire()
        expected = {key: pi_model[key] for key in ("id", "name", "contextWindow", "maxTokens", "reasoning",
                                                     "input", "cost")}  # fmt: skip
        assert wire == {"provider": "anthropic", **expected}, model_id
        assert pi_model["provider"] == "anthropic" and pi_model["api"] == "anthropic-messages"
        assert dict(ours.thinking_level_map) == pi_model.get("thinkingLevelMap", {}), model_id


@pytest.mark.oracle
def test_cost_clamping_and_default_equal_pis(pi_models: dict[str, Any]) -> None:
    assert pi_models["defaultId"] == DEFAULT_MODEL_ID
    for entry in pi_models["models"]:
        model = find_model(entry["model"]["id"])
        assert model is not None
        assert supported_thinking_levels(model) == entry["supported"]
        for level in (*THINKING_LEVELS, "bogus"):
            assert clamp_thinking_level(model, level) == entry["clamp"][level], (model.id, level)
        for pi_usage in entry["costs"]:
            usage = empty_usage()
            for key in ("input", "output", "cacheRead", "cacheWrite"):
                usage[key] = pi_usage[key]
            calculate_cost(model, usage)
            assert usage["cost"] == pi_usage["cost"]  # the same doubles, bit for bit


def test_wire_shape_and_lookups() -> None:
    sonnet = find_model("claude-sonnet-4-5")
    assert sonnet is not None and find_model("gpt-5") is None
    assert sonnet.to_wire() == {
        "provider": "anthropic", "id": "claude-sonnet-4-5", "name": "Claude Sonnet 4.5 (latest)",
        "contextWindow": 200000, "maxTokens": 64000, "reasoning": True, "input": ["text", "image"],
        "cost": {"input": 3, "output": 15, "cacheRead": 0.3, "cacheWrite": 3.75},
    }  # fmt: skip
    haiku = find_model("claude-3-5-haiku-latest")
    assert haiku is not None and clamp_thinking_level(haiku, "high") == "off"
    opus = find_model("claude-opus-4-6")
    assert opus is not None and opus.adaptive_thinking and not sonnet.adaptive_thinking
    assert clamp_thinking_level(sonnet, "xhigh") == "high"
    assert clamp_thinking_level(opus, "xhigh") == "xhigh"
