"""Tool definitions vs pi's: same names, schema structure, prompt snippets and guidelines;
descriptions in our own words (never pi's text)."""

from __future__ import annotations

from typing import Any

import pytest

from pi_lsp.agent.tools import ALL_TOOL_NAMES, DEFAULT_TOOL_NAMES, create_tools
from tests.pi.pi_tools import PiTools

pytestmark = pytest.mark.oracle


def _structure(schema: Any) -> Any:
    """The schema with every ``description`` string replaced by a marker (key order kept)."""
    if isinstance(schema, dict):
        return {k: ("<description>" if k == "description" else _structure(v)) for k, v in schema.items()}
    if isinstance(schema, list):
        return [_structure(item) for item in schema]
    return schema


def _descriptions(schema: Any) -> list[str]:
    if isinstance(schema, dict):
        found = [schema["description"]] if isinstance(schema.get("description"), str) else []
        for key, value in schema.items():
            if key != "description":
                found.extend(_descriptions(value))
        return found
    return [d for item in schema for d in _descriptions(item)] if isinstance(schema, list) else []


def test_definitions_match_pi(pi_tools: PiTools) -> None:
    theirs = pi_tools.call("definitions")
    assert list(theirs) == list(ALL_TOOL_NAMES)
    for tool in create_tools(ALL_TOOL_NAMES):
        pi_def = theirs[tool.name]
        assert (tool.name, tool.label) == (pi_def["name"], pi_def["label"])
        assert list(tool.parameters) == list(pi_def["parameters"])
        assert _structure(tool.parameters) == _structure(pi_def["parameters"])
        assert tool.prompt_snippet == pi_def["promptSnippet"]
        assert list(tool.prompt_guidelines) == pi_def["promptGuidelines"]
        assert tool.description != pi_def["description"]
        ours_text, pi_text = _descriptions(tool.parameters), _descriptions(pi_def["parameters"])
        assert len(ours_text) == len(pi_text)
        assert not set(ours_text) & set(pi_text), f"{tool.name}: a description copied from pi"
        assert tool.definition() == {
            "name": tool.name,
            "description": tool.description,
            "parameters": tool.parameters,
        }


def test_default_set_is_pis() -> None:
    assert [t.name for t in create_tools()] == list(DEFAULT_TOOL_NAMES) == ["read", "bash", "edit", "write"]
    with pytest.raises(ValueError, match="Unknown tool name: nope"):
        create_tools(["read", "nope"])
