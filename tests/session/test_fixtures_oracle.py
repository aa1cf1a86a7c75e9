"""The shared fixtures load in ours exactly as in pi 0.73.1 (oracle ``load``/``context``/``list``).

pi's own v1 fixtures are migrated on open (random 8-hex ids), so ids are compared by position; the
hand-made v3 fixture has fixed ids and is compared literally. Every test works on copies in tmp.
The ``test_fact_*`` tests check the spec's recorded fixture facts and run without the oracle.
"""

from __future__ import annotations

import re
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from pi_lsp.session import SessionManager, list_sessions
from tests.oracle import FIXTURES, PI_FIXTURES, PiOracle
from tests.session.helpers import flat_tree, read_objects

LARGE = PI_FIXTURES / "large-session.jsonl"
BEFORE = PI_FIXTURES / "before-compaction.jsonl"
BRANCHED = FIXTURES / "branched-v3.jsonl"

V1_FIXTURES = {
    # name: (bytes after migration, lines, context roles, model, entries)
    "large-session.jsonl": (
        1_012_721,
        1019,
        {"user": 88, "assistant": 453, "toolResult": 373},
        {"provider": "anthropic", "modelId": "claude-sonnet-4-5"},
        1018,
    ),
    "before-compaction.jsonl": (
        2_408_582,
        1003,
        {"compactionSummary": 1, "user": 31, "assistant": 219, "toolResult": 192, "bashExecution": 3},
        {"provider": "anthropic", "modelId": "claude-opus-4-5"},
        1002,
    ),
}

_ID_FIELD = re.compile(rb'"(id|parentId|firstKeptEntryId|targetId|fromId)":"([^"]*)"')


def copy_fixture(source: Path, directory: Path) -> Path:
    target = directory / source.name
    shutil.copyfile(source, target)
    return target


def id_positions(lines: list[dict[str, Any]]) -> dict[str, int]:
    """Entry id → position among the non-header entries of a file (first occurrence wins)."""
    positions: dict[str, int] = {}
    for obj in lines:
        if obj.get("type") != "session" and isinstance(obj.get("id"), str):
            positions.setdefault(obj["id"], len(positions))
    return positions


def normalise_ids(data: bytes, positions: dict[str, int]) -> bytes:
    """Replace every id reference by ``#<position>`` so two migrations can be compared."""

    def replace(match: re.Match[bytes]) -> bytes:
        value = match.group(2).decode()
        if value in positions:
            return b'"%s":"#%d"' % (match.group(1), positions[value])
        return match.group(0)

    return _ID_FIELD.sub(replace, data)


def normalise_entries(entries: list[dict[str, Any]], positions: dict[str, int]) -> list[dict[str, Any]]:
    out = []
    for entry in entries:
        copy = dict(entry)
        for key in ("id", "parentId", "firstKeptEntryId", "targetId", "fromId"):
            if isinstance(copy.get(key), str) and copy[key] in positions:
                copy[key] = positions[copy[key]]
        out.append(copy)
    return out


def normalise_flat_tree(rows: list[dict[str, Any]], positions: dict[str, int]) -> list[dict[str, Any]]:
    out = []
    for row in rows:
        copy = dict(row)
        copy["id"] = positions.get(row["id"], row["id"])
        copy["parentId"] = positions.get(row["parentId"], row["parentId"]) if row["parentId"] else None
        copy["children"] = [positions.get(child, child) for child in row["children"]]
        out.append(copy)
    return out


def roles(messages: list[dict[str, Any]]) -> dict[str, int]:
    return dict(Counter(m["role"] for m in messages))


# ---------------------------------------------------------------------------------------------
# facts recorded in the spec (§7, delta §13): no oracle needed


@pytest.mark.parametrize("name", sorted(V1_FIXTURES))
def test_fact_v1_fixture_migrates_like_pi(name: str, tmp_path: Path) -> None:
    size, line_count, context_roles, model, entry_count = V1_FIXTURES[name]
    original = (PI_FIXTURES / name).read_bytes()
    path = copy_fixture(PI_FIXTURES / name, tmp_path)
    manager = SessionManager.open(path)
    assert (PI_FIXTURES / name).read_bytes() == original
    data = path.read_bytes()
    assert len(data) == size
    assert data.count(b"\n") == line_count and data.endswith(b"\n")
    objects = read_objects(path)
    assert objects[0]["version"] == 3 and list(objects[0])[-1] == "version"
    assert all(re.fullmatch(r"[0-9a-f]{8}", o["id"]) for o in objects[1:])
    assert [o["parentId"] for o in objects[1:]] == [None] + [o["id"] for o in objects[1:-1]]
    assert len(manager.get_entries()) == entry_count
    assert manager.leaf_id == objects[-1]["id"]
    context = manager.build_session_context()
    assert roles(context["messages"]) == context_roles
    assert context["model"] == model
    assert context["thinkingLevel"] == "off"
    assert manager.get_session_name() is None
    assert any(d["severity"] == "info" and "migrated" in d["message"] for d in manager.diagnostics)
    # a second open does not migrate again
    again = SessionManager.open(path)
    assert path.read_bytes() == data
    assert [e["id"] for e in again.get_entries()] == [e["id"] for e in manager.get_entries()]


def test_fact_before_compaction_compactions_get_first_kept_ids(tmp_path: Path) -> None:
    path = copy_fixture(BEFORE, tmp_path)
    SessionManager.open(path)
    objects = read_objects(path)
    compactions = [(i, o) for i, o in enumerate(objects) if o["type"] == "compaction"]
    assert [i + 1 for i, _ in compactions] == [360, 629]
    for _, compaction in compactions:
        assert "firstKeptEntryIndex" not in compaction
        target = next(o for o in objects if o.get("id") == compaction["firstKeptEntryId"])
        assert target["message"]["role"] == "user"
    assert [
        objects.index(next(o for o in objects if o.get("id") == c["firstKeptEntryId"]))
        for _, c in compactions
    ] == [
        293,
        551,
    ]


def test_fact_branched_v3(tmp_path: Path) -> None:
    path = copy_fixture(BRANCHED, tmp_path)
    manager = SessionManager.open(path)
    assert path.read_bytes() == BRANCHED.read_bytes()
    assert manager.leaf_id == "e17"
    assert manager.get_session_name() == "Branched demo"
    assert manager.get_label("e4") == "A-start"
    context = manager.build_session_context()
    assert [m["role"] for m in context["messages"]] == [
        "compactionSummary",
        "user",
        "assistant",
        "branchSummary",
        "user",
        "custom",
        "assistant",
    ]
    assert context["model"] == {"provider": "openai", "modelId": "gpt-5"}
    assert context["thinkingLevel"] == "high"
    e6 = manager.build_session_context("e6")
    assert [m["role"] for m in e6["messages"]] == ["user", "assistant", "user", "assistant", "toolResult"]
    assert e6["thinkingLevel"] == "high"
    assert manager.build_session_context(None) == {"messages": [], "thinkingLevel": "off", "model": None}


# ---------------------------------------------------------------------------------------------
# differential against pi


@pytest.fixture(scope="module")
def pi_v1_loads(pi_oracle: PiOracle) -> dict[str, dict[str, Any]]:
    return {
        name: pi_oracle.request("load", path=str(PI_FIXTURES / name), treeFormat="flat", returnFile=True)
        for name in V1_FIXTURES
    }


@pytest.mark.oracle
@pytest.mark.parametrize("name", sorted(V1_FIXTURES))
def test_v1_fixture_loads_like_pi(name: str, tmp_path: Path, pi_v1_loads: dict[str, dict[str, Any]]) -> None:
    response = pi_v1_loads[name]
    pi, info = response["result"], response["info"]
    path = copy_fixture(PI_FIXTURES / name, tmp_path)
    manager = SessionManager.open(path)

    assert info["rewritten"] is True
    ours_data = path.read_bytes()
    pi_data: bytes = info["fileContent"].encode()
    ours_pos = id_positions(read_objects(path))
    pi_pos = id_positions([{"type": "x", "id": e["id"]} for e in pi["entries"]])
    # the migrated file equals pi's rewrite byte for byte, modulo the random 8-hex ids
    assert len(ours_data) == len(pi_data) == info["bytesAfter"]
    assert normalise_ids(ours_data, ours_pos) == normalise_ids(pi_data, pi_pos)

    assert manager.get_header() == pi["header"]
    assert manager.session_id == pi["sessionId"]
    assert manager.cwd == pi["cwd"]
    assert normalise_entries(manager.get_entries(), ours_pos) == normalise_entries(pi["entries"], pi_pos)
    assert ours_pos[manager.leaf_id or ""] == pi_pos[pi["leafId"]]
    assert manager.get_session_name() == pi["sessionName"]
    assert normalise_flat_tree(flat_tree(manager.get_tree()), ours_pos) == normalise_flat_tree(
        pi["tree"], pi_pos
    )
    # context messages carry no entry ids, so they compare literally (order, roles, content)
    assert manager.build_session_context() == pi["context"]


@pytest.mark.oracle
@pytest.mark.parametrize("name", sorted(V1_FIXTURES))
def test_v1_fixture_context_function_matches_pi(name: str, tmp_path: Path, pi_oracle: PiOracle) -> None:
    """pi's ``context`` op (parse + migrate + buildSessionContext) vs ours on the migrated entries."""
    path = copy_fixture(PI_FIXTURES / name, tmp_path)
    manager = SessionManager.open(path)
    from pi_lsp.session import build_session_context

    pi = pi_oracle.result("context", path=str(PI_FIXTURES / name))
    assert build_session_context(manager.get_entries()) == pi


@pytest.mark.oracle
def test_branched_v3_loads_like_pi(tmp_path: Path, pi_oracle: PiOracle) -> None:
    response = pi_oracle.request("load", path=str(BRANCHED), treeFormat="flat", returnFile=True)
    pi, info = response["result"], response["info"]
    path = copy_fixture(BRANCHED, tmp_path)
    manager = SessionManager.open(path)
    assert info["rewritten"] is False and path.read_bytes() == BRANCHED.read_bytes()
    assert manager.get_header() == pi["header"]
    assert manager.get_entries() == pi["entries"]
    assert manager.leaf_id == pi["leafId"] == "e17"
    assert manager.get_session_name() == pi["sessionName"] == "Branched demo"
    assert flat_tree(manager.get_tree()) == pi["tree"]
    assert manager.build_session_context() == pi["context"]
    labelled = {row["id"]: row["label"] for row in pi["tree"] if "label" in row}
    assert labelled == {"e4": "A-start"}
    assert {
        e["id"]: manager.get_label(e["id"]) for e in manager.get_entries() if manager.get_label(e["id"])
    } == labelled


@pytest.mark.oracle
@pytest.mark.parametrize("leaf", ["e6", None, "e4", "e9", "e12", "e14", "e17", "missing"])
def test_branched_v3_leaf_variants_match_pi(leaf: str | None, tmp_path: Path, pi_oracle: PiOracle) -> None:
    path = copy_fixture(BRANCHED, tmp_path)
    manager = SessionManager.open(path)
    pi = pi_oracle.result("context", path=str(BRANCHED), leafId=leaf)
    assert manager.build_session_context(leaf) == pi
    from pi_lsp.session import build_session_context

    assert build_session_context(manager.get_entries(), leaf) == pi
    if leaf == "e6":
        assert [m["role"] for m in pi["messages"]] == ["user", "assistant", "user", "assistant", "toolResult"]
    if leaf is None:
        assert pi == {"messages": [], "thinkingLevel": "off", "model": None}


@pytest.mark.oracle
def test_branched_v3_get_branch_matches_pi(pi_oracle: PiOracle) -> None:
    ids = [o["id"] for o in read_objects(BRANCHED)[1:]]
    steps = [{"method": "getBranch", "args": [entry_id]} for entry_id in ids]
    pi = pi_oracle.result("script", init={"kind": "open", "path": str(BRANCHED)}, steps=steps)
    manager = SessionManager.open(BRANCHED)  # a v3 file is only read, never written
    for entry_id, result in zip(ids, pi["results"], strict=True):
        assert [e["id"] for e in manager.get_branch(entry_id)] == [e["id"] for e in result["value"]]
        assert manager.get_children(entry_id) == [e for e in pi["entries"] if e["parentId"] == entry_id]


@pytest.mark.oracle
def test_listing_matches_pi(tmp_path: Path, pi_oracle: PiOracle) -> None:
    """SessionInfo for the three fixtures (unmigrated v1 files included) equals pi's ``list``."""
    directory = tmp_path / "sessions"
    directory.mkdir()
    for source in (LARGE, BEFORE, BRANCHED):
        copy_fixture(source, directory)
    before = {p.name: p.read_bytes() for p in directory.iterdir()}
    pi = pi_oracle.result("list", dir=str(directory))
    ours = list_sessions("/unused", directory)
    assert {p.name: p.read_bytes() for p in directory.iterdir()} == before  # listing never writes
    assert [info.path for info in ours] == [info["path"] for info in pi]
    for mine, theirs in zip(ours, pi, strict=True):
        wire = mine.to_wire()
        for key in (
            "id",
            "cwd",
            "created",
            "modified",
            "messageCount",
            "firstMessage",
            "name",
            "parentSessionPath",
        ):
            assert wire.get(key) == theirs.get(key), key
        assert mine.all_messages_text == theirs["allMessagesText"]
