"""Argument coercion and the validation error text, against pi's ``validateToolArguments``."""

from __future__ import annotations

from typing import Any

import pytest

from tests.pi.pi_tools import PiTools, ours_validate

pytestmark = pytest.mark.oracle

CASES: list[tuple[str, Any]] = [
    ("read", {"path": "a", "offset": "5", "limit": "x"}),
    ("read", {}),
    ("read", {"path": 5, "offset": True, "extra": 1}),
    ("read", {"path": True, "offset": False, "limit": None}),
    ("read", {"path": "x", "offset": [3], "limit": {}}),
    ("read", {"path": "x", "offset": "", "limit": "  "}),
    ("read", {"path": 1.5e300}),
    ("read", {"path": "a", "offset": 2.5, "limit": "1e2"}),
    ("read", "str"),
    ("read", None),
    ("ls", []),
    ("ls", {}),
    ("edit", {"path": "a", "edits": [{"oldText": 1, "newText": "b", "x": 2}], "y": 3}),
    ("edit", {"path": "a", "edits": "[]"}),
    ("edit", {"path": "a", "edits": "not json"}),
    ("edit", {"path": "a"}),
    ("edit", {"path": "a", "edits": [{"oldText": "x"}, "s", None]}),
    ("edit", {"edits": 5, "zz": 1, "path": {}}),
    ("edit", {"path": "x", "edits": {"oldText": "a", "newText": "b"}}),
    ("edit", {"path": "x", "oldText": "a", "newText": "b"}),
    ("edit", {"path": "x", "edits": [{"oldText": "c", "newText": "d"}], "oldText": "a", "newText": "b"}),
    ("write", {}),
    ("write", {"content": [1], "zz": 1}),
    ("grep", {"pattern": "a", "ignoreCase": "true", "literal": 1, "context": "abc", "limit": None}),
    ("grep", {"pattern": None, "ignoreCase": "yes"}),
    ("grep", {"pattern": "a", "limit": "1e3", "context": "0x10", "ignoreCase": 0, "literal": "false"}),
    ("grep", {"pattern": "a", "limit": "Infinity", "context": " 5 "}),
    ("grep", {"pattern": "x", "ignoreCase": "TRUE", "literal": "1"}),
    ("grep", {"pattern": "x", "ignoreCase": 2, "context": "-0x10", "limit": "12n"}),
    ("grep", {"pattern": "x", "context": "1.50", "limit": "+7"}),
    ("bash", {"command": ["a"], "timeout": "1.5"}),
    ("bash", {"command": {"a": 1}, "timeout": " "}),
    ("bash", {"command": "ls", "timeout": "\u00a03\n"}),
    ("find", {"pattern": 12, "limit": "0b101"}),
    ("find", {"pattern": "*", "path": None, "unknown": {"nested": [1, 2.5, "x"]}}),
]


@pytest.mark.parametrize(("tool", "args"), CASES, ids=[f"{t}-{i}" for i, (t, _) in enumerate(CASES)])
def test_validation_matches_pi(pi_tools: PiTools, tool: str, args: Any) -> None:
    prepared = pi_tools.call("prepare", tool=tool, args=args)
    assert ours_validate(tool, args) == pi_tools.call("validate", tool=tool, args=prepared)
