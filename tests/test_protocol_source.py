"""The protocol source (``pi_lsp/protocol``) and everything made or checked from it.

The generated files must be what the source makes now, the server's handler table must match the
declared methods one for one, the editors must not spell method names by hand, the docs' tables
must name exactly the declared methods and errors, and the shape checker must catch what it is
there to catch.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pi_lsp.protocol import (
    ENUMS,
    ERRORS,
    EVENTS,
    METHOD_NAMES,
    METHODS,
    NOTIFICATIONS,
    THINKING_LEVELS,
    generate,
)
from pi_lsp.protocol.check import named_types, notification_problem, problem, result_problem, roots, walk
from pi_lsp.protocol.gen_docs import BEGIN, END
from pi_lsp.protocol.shapes import Enum
from pi_lsp.server import handlers

ROOT = Path(__file__).resolve().parents[1]


def test_generated_files_are_what_the_source_makes() -> None:
    stale = [str(path.relative_to(ROOT)) for path in generate.stale(ROOT)]
    assert stale == [], f"stale generated files {stale}: run `make protocol`"


def test_a_changed_source_makes_the_committed_files_stale(tmp_path: Path) -> None:
    for relative in generate.TARGETS:
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / relative).write_text((ROOT / relative).read_text(encoding="utf-8"), encoding="utf-8")
    assert generate.stale(tmp_path) == []
    lua = tmp_path / "nvim-client/lua/pi/protocol.lua"
    lua.write_text(lua.read_text(encoding="utf-8").replace('"pi/getTree"', '"pi/getTreeX"'), encoding="utf-8")
    assert generate.stale(tmp_path) == [lua]
    assert generate.main(["--root", str(tmp_path), "--check"]) == 1
    assert generate.main(["--root", str(tmp_path)]) == 0
    assert generate.stale(tmp_path) == []


def test_every_declared_method_has_one_handler_and_every_handler_is_declared(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert handlers.undeclared_and_unhandled() == ([], [])
    table = dict(handlers.METHODS)
    table["pi/notDeclared"] = table.pop("pi/getTree")
    monkeypatch.setattr(handlers, "METHODS", table)
    assert handlers.undeclared_and_unhandled() == (["pi/notDeclared"], ["pi/getTree"])


def test_names_are_unique() -> None:
    assert len(set(METHOD_NAMES)) == len(METHOD_NAMES)
    assert len({event.type for event in EVENTS}) == len(EVENTS)
    assert len({error.code for error in ERRORS}) == len(ERRORS)
    named = named_types()
    assert "SessionState" in named and "TreeNode" in named and "ApprovalRequest" in named


def test_every_enum_used_is_listed_so_the_editors_get_its_type() -> None:
    used = {t.name for root in roots() for t in walk(root) if isinstance(t, Enum)}
    assert used <= {enum.name for enum in ENUMS}


def test_the_vscode_extension_spells_no_method_name_by_hand() -> None:
    """``Methods.x`` / ``Notifications.x`` from the generated ``protocol.ts``, never a literal."""
    literal = re.compile(r"""["']pi/[A-Za-z]""")  # comments may name methods in backticks
    found = [
        f"{path.relative_to(ROOT)}:{number}"
        for path in sorted((ROOT / "vscode-client/src").rglob("*.ts"))
        if path.name != "protocol.ts"
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if literal.search(line.split("//", 1)[0])
    ]
    assert found == []


def _docs_outside_the_generated_index() -> str:
    text = (ROOT / "docs/protocol.md").read_text(encoding="utf-8")
    return text[: text.index(BEGIN)] + text[text.index(END) + len(END) :]


def test_the_docs_method_tables_name_exactly_the_declared_methods() -> None:
    rows = re.findall(r"^\| (`pi/[^|]*)\|", _docs_outside_the_generated_index(), re.MULTILINE)
    in_tables = {name for cell in rows for name in re.findall(r"`(pi/[A-Za-z]+)`", cell)}
    in_tables -= {n.name for n in NOTIFICATIONS}
    assert sorted(in_tables) == sorted(METHOD_NAMES)


def test_the_docs_error_table_has_every_declared_code() -> None:
    rows = dict(re.findall(r"^\| (-\d+) \| (\w+) \|", _docs_outside_the_generated_index(), re.MULTILINE))
    assert {name: int(code) for code, name in rows.items()} == {e.name: e.code for e in ERRORS}


# ------------------------------------------------------------------------------ the checker


def test_the_checker_accepts_a_real_shape_and_names_what_is_wrong() -> None:
    state = {
        "sessionId": "s",
        "file": None,
        "cwd": "/w",
        "name": None,
        "leafId": None,
        "entryCount": 0,
        "version": 3,
        "diagnostics": [{"severity": "warning", "message": "torn last line"}],
    }
    assert result_problem("pi/getSessionState", state) is None
    assert result_problem("pi/getSessionState", {**state, "extra": 1}) == (
        "pi/getSessionState result: undeclared field(s) ['extra'] in SessionState"
    )
    missing = {key: value for key, value in state.items() if key != "cwd"}
    assert result_problem("pi/getSessionState", missing) == (
        "pi/getSessionState result.cwd: missing (required in SessionState)"
    )
    bad = {**state, "diagnostics": [{"severity": "fatal", "message": "x"}]}
    assert "result.diagnostics[0].severity: expected one of Severity" in str(
        result_problem("pi/getSessionState", bad)
    )
    assert result_problem("pi/notDeclared", {"anything": True}) is None


def test_the_checker_tells_events_apart_by_type() -> None:
    def event(body: dict[str, object]) -> str | None:
        return notification_problem("pi/event", {"sessionId": "s", "seq": 1, "event": body})

    assert event({"type": "agent_end", "entryIds": ["a"], "stopReason": "stop"}) is None
    assert event({"type": "agent_end", "entryIds": ["a"], "stopReason": "done"}) == (
        "pi/event params.event.stopReason: expected one of StopReason "
        "['stop', 'length', 'toolUse', 'error', 'aborted'], got 'done'"
    )
    undeclared = "pi/event params.event.type: undeclared event type 'agent_finished'"
    assert event({"type": "agent_finished"}) == undeclared
    # pi's own records are open: unknown fields of a message travel as pi wrote them
    assert event({"type": "message_start", "message": {"role": "user", "content": "hi", "x": 1}}) is None


def test_recursive_and_union_shapes() -> None:
    node = {"id": "a", "parentId": None, "type": "message", "timestamp": "t", "children": []}
    tree = {"leafId": "a", "roots": [{**node, "children": [{**node, "id": "b", "parentId": "a"}]}]}
    assert result_problem("pi/getTree", tree) is None
    broken = {"leafId": "a", "roots": [{**node, "children": [{"id": "b"}]}]}
    assert result_problem("pi/getTree", broken) is not None
    assert problem(1.5, METHODS[0].params.fields[0].type) == "value: expected string, got 1.5"


def test_the_enums_are_the_ones_every_layer_uses() -> None:
    from pi_lsp.llm import models
    from pi_lsp.service import settings

    assert THINKING_LEVELS == ("off", "minimal", "low", "medium", "high", "xhigh")
    assert models.THINKING_LEVELS is THINKING_LEVELS and settings.THINKING_LEVELS is THINKING_LEVELS
