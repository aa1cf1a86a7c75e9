"""Differential tests: random operation sequences run through our SessionManager and through pi.

Each seeded case builds a random tree with every entry type (messages of every role, including
bashExecution, custom and toolResult with images; thinking/model changes; compactions; branch
summaries; custom entries and messages; labels set and cleared; session names set and cleared)
and moves the leaf with ``branch``/``reset_leaf``/``branch_with_summary``. The same steps run in
pi's SessionManager (oracle ``script`` op). Compared: every step's result (ids mapped by step),
entries (modulo ids and times), tree shape and child order, labels, the session name, getBranch
and getChildren at random entries, contexts at random leaves and at null, the session files line
by line (modulo ids and times, so key order and number formatting are checked too), and
cross-loading: pi loads our file (oracle ``load``) and we load pi's file, with equal results.

pi's duplicate-header flush (spec §8.1) needs an *opened* file without assistant messages; these
scripts always start from ``create`` or ``in_memory``, where pi's flush is correct.
"""

from __future__ import annotations

import random
import re
from pathlib import Path
from typing import Any

import pytest

from pi_lsp.session import EntryNotFoundError, SessionManager
from tests.oracle import PiOracle
from tests.session.helpers import flat_tree

CASES = 150
CWD = "/proj/diff"

TEXTS = [
    "hello",
    "",
    "multi\nline\n\ntext",
    'quotes " and \\ backslashes',
    "unicode é ñ 日本語 🚀",
    "separators \u2028 and \u2029",
    "control \x01\x1f\x7f chars \t tab",
    "</summary> <tag attr='x'>",
    "  padded  ",
    "a" * 300,
]
FLOATS = [
    0.000009,
    1e-7,
    2.0,
    0.1 + 0.2,
    1.5e-10,
    123.456,
    1e21,
    1e-6,
    0.013875000000000002,
    -0.0,
    3.0e15,
    5e-324,
]
LEVELS = ["off", "minimal", "low", "medium", "high", "xhigh"]
MODELS = [("anthropic", "claude-sonnet-4-5"), ("openai", "gpt-5"), ("google", "gemini-2.5-pro")]


class Ref:
    """The id returned by an earlier step."""

    def __init__(self, step: int) -> None:
        self.step = step

    def __repr__(self) -> str:
        return f"$R{self.step}"


def rand_text(rng: random.Random) -> str:
    return rng.choice(TEXTS) if rng.random() < 0.7 else f"t{rng.randrange(10**6)} {rng.choice(TEXTS)}"


def rand_number(rng: random.Random) -> float | int:
    return (
        rng.choice(FLOATS) if rng.random() < 0.5 else rng.choice([0, 1, 42, 1_767_225_600_000, rng.random()])
    )


def image(rng: random.Random) -> dict[str, Any]:
    data = "".join(
        rng.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdef0123456789+/") for _ in range(rng.randrange(4, 60))
    )
    return {"type": "image", "data": data + "==", "mimeType": rng.choice(["image/png", "image/jpeg"])}


def text_blocks(rng: random.Random, images: bool) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = [
        {"type": "text", "text": rand_text(rng)} for _ in range(rng.randrange(0, 3))
    ]
    if images:
        blocks.extend(image(rng) for _ in range(rng.randrange(0, 3)))
    rng.shuffle(blocks)
    return blocks


def usage(rng: random.Random) -> dict[str, Any]:
    result: dict[str, Any] = {
        key: rng.randrange(0, 10**5) for key in ("input", "output", "cacheRead", "cacheWrite")
    }
    if rng.random() < 0.7:
        result["totalTokens"] = sum(result.values())
    result["cost"] = {
        key: rand_number(rng) for key in ("input", "output", "cacheRead", "cacheWrite", "total")
    }
    return result


def message(rng: random.Random, ts: int) -> dict[str, Any]:
    role = rng.choice(["user", "user", "assistant", "assistant", "toolResult", "bashExecution", "custom"])
    if role == "user":
        content: Any = rand_text(rng) if rng.random() < 0.4 else text_blocks(rng, images=True)
        return {"role": "user", "content": content, "timestamp": ts}
    if role == "assistant":
        blocks: list[dict[str, Any]] = []
        for _ in range(rng.randrange(0, 4)):
            kind = rng.choice(["text", "thinking", "toolCall"])
            if kind == "text":
                blocks.append({"type": "text", "text": rand_text(rng)})
            elif kind == "thinking":
                block = {"type": "thinking", "thinking": rand_text(rng), "thinkingSignature": "sig"}
                if rng.random() < 0.2:
                    block["redacted"] = True
                blocks.append(block)
            else:
                blocks.append(
                    {
                        "type": "toolCall",
                        "id": f"call_{rng.randrange(1000)}",
                        "name": rng.choice(["read", "bash", "edit"]),
                        "arguments": {
                            "path": rand_text(rng),
                            "n": rand_number(rng),
                            "nested": {"list": [1, 2.5]},
                        },
                        **({"partialJson": '{"pa'} if rng.random() < 0.2 else {}),
                    }
                )
        provider, model_id = rng.choice(MODELS)
        msg: dict[str, Any] = {
            "role": "assistant",
            "content": blocks,
            "api": "anthropic-messages",
            "provider": provider,
            "model": model_id,
            "usage": usage(rng),
            "stopReason": rng.choice(["stop", "length", "toolUse", "error", "aborted"]),
        }
        if rng.random() < 0.2:
            msg["errorMessage"] = rand_text(rng)
        if rng.random() < 0.2:  # pi 0.73 optional fields / unknown fields survive
            msg["responseId"] = f"resp_{rng.randrange(1000)}"
            msg["diagnostics"] = [{"type": "retry", "timestamp": ts, "error": {"message": "x"}}]
        msg["timestamp"] = ts
        return msg
    if role == "toolResult":
        msg = {
            "role": "toolResult",
            "toolCallId": f"call_{rng.randrange(1000)}",
            "toolName": rng.choice(["read", "bash", "edit", "write"]),
            "content": text_blocks(rng, images=True),
        }
        if rng.random() < 0.5:
            msg["details"] = rng.choice(
                [{}, {"diff": rand_text(rng)}, {"truncation": {"lines": 3, "ratio": 0.5}}]
            )
        msg["isError"] = rng.random() < 0.2
        msg["timestamp"] = ts
        return msg
    if role == "bashExecution":
        msg = {"role": "bashExecution", "command": rand_text(rng), "output": rand_text(rng)}
        if rng.random() < 0.8:
            msg["exitCode"] = rng.choice([0, 1, 127])
        msg.update(cancelled=rng.random() < 0.2, truncated=rng.random() < 0.2)
        if rng.random() < 0.3:
            msg["fullOutputPath"] = "/tmp/out.txt"
        msg["timestamp"] = ts
        if rng.random() < 0.2:
            msg["excludeFromContext"] = True
        return msg
    msg = {
        "role": "custom",
        "customType": "ext",
        "content": rand_text(rng) if rng.random() < 0.5 else text_blocks(rng, True),
    }
    msg["display"] = rng.random() < 0.5
    if rng.random() < 0.5:
        msg["details"] = {"k": rand_number(rng)}
    msg["timestamp"] = ts
    return msg


def generate(seed: int) -> list[tuple[str, list[Any]]]:
    """A random script: (pi method name, args) with ``Ref``s to earlier steps' ids."""
    rng = random.Random(seed)
    steps: list[tuple[str, list[Any]]] = []
    entries: list[int] = []  # steps that created an entry
    ts = 1_767_225_600_000 + seed * 1000
    branch_at = rng.randrange(3, 40) if rng.random() < 0.3 else -1
    for number in range(rng.randrange(3, 40)):
        ts += rng.randrange(0, 5000)
        roll = rng.random()
        target = Ref(rng.choice(entries)) if entries else None
        if number == branch_at and target is not None:
            # into a new session holding only the path to one entry (labels re-created)
            steps.append(("createBranchedSession", [target]))
            continue
        if rng.random() < 0.1:  # contexts in the middle exercise the cached/extended current view
            steps.append(("buildSessionContext", []))
        if roll < 0.40 or not entries:
            steps.append(("appendMessage", [message(rng, ts)]))
        elif roll < 0.45:
            steps.append(("appendThinkingLevelChange", [rng.choice(LEVELS)]))
        elif roll < 0.50:
            steps.append(("appendModelChange", list(rng.choice(MODELS))))
        elif roll < 0.56:
            first_kept: Any = target if rng.random() < 0.85 else "not-an-entry"
            args: list[Any] = [rand_text(rng), first_kept, rng.randrange(0, 200_000)]
            if rng.random() < 0.5:
                args.append({"readFiles": ["a.ts"], "modifiedFiles": []})
                if rng.random() < 0.5:
                    args.append(rng.random() < 0.5)
            steps.append(("appendCompaction", args))
        elif roll < 0.60:
            args = ["ext-state"]
            if rng.random() < 0.7:
                args.append(rng.choice([{"k": rand_number(rng)}, None, [1, "x"], "s", 0]))
            steps.append(("appendCustomEntry", args))
        elif roll < 0.65:
            content: Any = rand_text(rng) if rng.random() < 0.5 else text_blocks(rng, images=True)
            args = ["note", content, rng.random() < 0.5]
            if rng.random() < 0.4:
                args.append({"source": rand_text(rng)})
            steps.append(("appendCustomMessageEntry", args))
        elif roll < 0.72:
            args = [target]
            if rng.random() < 0.75:
                args.append(rng.choice(["start", "checkpoint", "", "ünïcode label"]))
            steps.append(("appendLabelChange", args))
        elif roll < 0.76:
            steps.append(
                ("appendSessionInfo", [rng.choice(["Name one", "  Trimmed  ", "", "   ", "Näme 2"])])
            )
        elif roll < 0.84:
            steps.append(("branch", [target]))
            continue
        elif roll < 0.88:
            steps.append(("resetLeaf", []))
            continue
        elif roll < 0.94:
            args = [target if rng.random() < 0.8 else None, rand_text(rng)]
            if rng.random() < 0.5:
                args.append({"readFiles": [], "modifiedFiles": ["b.ts"]})
                if rng.random() < 0.5:
                    args.append(rng.random() < 0.5)
            steps.append(("branchWithSummary", args))
        else:  # error paths: unknown ids
            method = rng.choice(["branch", "appendLabelChange", "branchWithSummary"])
            steps.append((method, ["nope"] if method == "branch" else ["nope", "x"]))
            continue
        entries.append(len(steps) - 1)
    # queries: paths, children and labels at random entries; contexts at random leaves and at null
    for step in rng.sample(entries, min(len(entries), 6)):
        steps.append(("getBranch", [Ref(step)]))
        steps.append(("getChildren", [Ref(step)]))
        steps.append(("getLabel", [Ref(step)]))
    steps.append(("getSessionName", []))
    for step in [*rng.sample(entries, min(len(entries), 4)), None]:
        if step is None:
            steps.append(("resetLeaf", []))
        else:
            steps.append(("branch", [Ref(step)]))
        steps.append(("buildSessionContext", []))
    if entries and rng.random() < 0.5:
        steps.append(("branch", [Ref(rng.choice(entries))]))
    return steps


# ---------------------------------------------------------------------------------------------
# running a script on our side


def _ours_call(manager: SessionManager, method: str, args: list[Any]) -> Any:
    if method == "appendMessage":
        return manager.append_message(*args)
    if method == "appendThinkingLevelChange":
        return manager.append_thinking_level_change(*args)
    if method == "appendModelChange":
        return manager.append_model_change(*args)
    if method == "appendCompaction":
        return manager.append_compaction(*args)
    if method == "appendCustomEntry":
        return manager.append_custom_entry(*args)
    if method == "appendCustomMessageEntry":
        return manager.append_custom_message_entry(*args)
    if method == "appendLabelChange":
        return manager.append_label_change(*args)
    if method == "appendSessionInfo":
        return manager.append_session_info(*args)
    if method == "branch":
        return manager.branch(*args)
    if method == "resetLeaf":
        return manager.reset_leaf()
    if method == "branchWithSummary":
        return manager.branch_with_summary(*args)
    if method == "getBranch":
        # JS ``getBranch(null)`` means ``fromId ?? leafId``; our None means "no entry" ([]), our
        # default means the leaf. A null here comes from a Ref to a step that failed in both.
        return manager.get_branch(*args) if args[0] is not None else manager.get_branch()
    if method == "getChildren":
        return manager.get_children(*args)
    if method == "getLabel":
        return manager.get_label(*args)
    if method == "getSessionName":
        return manager.get_session_name()
    if method == "buildSessionContext":
        return manager.build_session_context()
    if method == "createBranchedSession":
        return manager.create_branched_session(*args)
    raise AssertionError(method)


def run_ours(manager: SessionManager, steps: list[tuple[str, list[Any]]]) -> list[dict[str, Any]]:
    results: list[dict[str, Any]] = []
    for method, args in steps:
        real = [results[a.step].get("value") if isinstance(a, Ref) else a for a in args]
        try:
            value = _ours_call(manager, method, real)
        except EntryNotFoundError as error:
            results.append({"method": method, "error": str(error)})
        else:
            results.append({"method": method, "value": value})
    return results


def to_pi_steps(steps: list[tuple[str, list[Any]]]) -> list[dict[str, Any]]:
    return [{"method": m, "args": [repr(a) if isinstance(a, Ref) else a for a in args]} for m, args in steps]


# ---------------------------------------------------------------------------------------------
# normalisation: ids by the step that created them, entry times masked

ID_KEYS = ("id", "parentId", "targetId", "fromId", "firstKeptEntryId")


class IdMap:
    def __init__(self, results: list[dict[str, Any]]) -> None:
        self.names: dict[str, str] = {}
        for step, result in enumerate(results):
            value = result.get("value")
            creates = result["method"].startswith("append") or result["method"] == "branchWithSummary"
            if creates and isinstance(value, str):
                self.names[value] = f"#{step}"

    def add_unknown(self, entries: list[dict[str, Any]]) -> None:
        """Ids no step returned (labels re-created by createBranchedSession): named by order."""
        for entry in entries:
            if isinstance(entry.get("id"), str) and entry["id"] not in self.names:
                self.names[entry["id"]] = f"L{len(self.names)}"

    def name(self, value: Any) -> Any:
        return self.names.get(value, value) if isinstance(value, str) else value

    def entry(self, entry: dict[str, Any]) -> dict[str, Any]:
        out = dict(entry)
        for key in ID_KEYS:
            if key in out:
                out[key] = self.name(out[key])
        if "timestamp" in out:
            out["timestamp"] = "T"
        return out

    def context(self, context: dict[str, Any]) -> dict[str, Any]:
        messages = []
        for message in context["messages"]:
            copy = dict(message)
            # summaries and custom_message entries get their time from the entry timestamp
            if copy.get("role") in ("branchSummary", "compactionSummary") or copy.get("customType") == "note":
                copy["timestamp"] = "T"
            if "fromId" in copy:
                copy["fromId"] = self.name(copy["fromId"])
            messages.append(copy)
        return {**context, "messages": messages}

    def tree(self, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [
            {
                **row,
                "id": self.name(row["id"]),
                "parentId": self.name(row["parentId"]),
                "children": [self.name(c) for c in row["children"]],
            }
            for row in rows
        ]

    def line(self, data: str) -> str:
        def replace(match: re.Match[str]) -> str:
            return f'"{match.group(1)}":"{self.name(match.group(2))}"'

        data = re.sub(r'"(id|parentId|targetId|fromId|firstKeptEntryId)":"([^"]*)"', replace, data)
        return re.sub(r'"timestamp":"[^"]*"', '"timestamp":"T"', data)


def normalise_result(ids: IdMap, result: dict[str, Any]) -> Any:
    if "error" in result:
        # (a step whose referenced id came from a failed step passes null: JS prints "null")
        return (
            "error",
            re.sub(
                r"^Entry (\S+) not found$",
                lambda m: f"Entry {ids.name(m.group(1))} not found",
                result["error"].replace("Entry None ", "Entry null "),
            ),
        )
    value = result["value"]
    method = result["method"]
    if method in ("getBranch", "getChildren"):
        return [ids.entry(e) for e in value]
    if method == "buildSessionContext":
        return ids.context(value)
    if isinstance(value, str) and (method.startswith("append") or method == "branchWithSummary"):
        return "<id>"
    if method == "createBranchedSession":
        return "<path>" if isinstance(value, str) else value
    return value


# ---------------------------------------------------------------------------------------------


def _pi_file(files: dict[str, str], session_file: str | None) -> tuple[str, str] | None:
    """pi's current session file (a branched session leaves the earlier file behind)."""
    sessions = {
        name: text for name, text in files.items() if name.startswith("s/") and name.endswith(".jsonl")
    }
    assert len(sessions) <= 2, sessions.keys()
    if session_file is None:
        assert not sessions
        return None
    name = "s/" + Path(session_file).name
    return (name, sessions[name]) if name in sessions else None


@pytest.mark.oracle
@pytest.mark.parametrize("seed", range(CASES))
def test_random_script_matches_pi(seed: int, tmp_path: Path, pi_oracle: PiOracle) -> None:
    steps = generate(seed)
    persisted = seed % 4 != 0
    if persisted:
        init: dict[str, Any] = {"kind": "create", "cwd": CWD, "sessionDir": "$TMP/s"}
        manager = SessionManager.create(CWD, tmp_path / "s")
    else:
        init = {"kind": "inMemory", "cwd": CWD}
        manager = SessionManager.in_memory(CWD)
    pi = pi_oracle.result("script", init=init, steps=to_pi_steps(steps), returnFiles=True, treeFormat="flat")
    ours_results = run_ours(manager, steps)

    pi_ids = IdMap(pi["results"])
    our_ids = IdMap(ours_results)
    assert len(pi_ids.names) == len(our_ids.names)
    pi_ids.add_unknown(pi["entries"])
    our_ids.add_unknown(manager.get_entries())

    # every step: same success/error, same (normalised) value
    for step, (mine, theirs) in enumerate(zip(ours_results, pi["results"], strict=True)):
        assert normalise_result(our_ids, mine) == normalise_result(pi_ids, theirs), (step, steps[step][0])

    # final state
    assert [our_ids.entry(e) for e in manager.get_entries()] == [pi_ids.entry(e) for e in pi["entries"]]
    assert our_ids.tree(flat_tree(manager.get_tree())) == pi_ids.tree(pi["tree"])
    assert our_ids.name(manager.leaf_id) == pi_ids.name(pi["leafId"])
    assert manager.get_session_name() == pi["sessionName"]
    assert our_ids.context(manager.build_session_context()) == pi_ids.context(pi["context"])
    assert manager.get_header()["cwd"] == pi["header"]["cwd"] == CWD
    assert set(manager.get_header()) == set(pi["header"])
    branched = any(method == "createBranchedSession" for method, _ in steps)

    pi_file = _pi_file(pi["files"], pi["sessionFile"])
    our_file = Path(manager.session_file) if manager.session_file else None
    if not persisted:
        assert pi_file is None and our_file is None
        return
    assert our_file is not None
    has_assistant = any(e["type"] == "message" and e["message"]["role"] == "assistant" for e in pi["entries"])
    assert our_file.exists() == (pi_file is not None) == has_assistant
    if pi_file is None:
        return

    # the files: same lines modulo ids and times (key order, escaping and number formatting included)
    pi_lines = pi_file[1].split("\n")
    our_text = our_file.read_text(encoding="utf-8")
    our_lines = our_text.split("\n")
    assert pi_lines[-1] == our_lines[-1] == ""
    assert len(pi_lines) == len(our_lines)
    header_pattern = (
        r'^\{"type":"session","version":3,"id":"[0-9a-f-]{36}","timestamp":"[^"]+","cwd":"/proj/diff"'
        + (r',"parentSession":"[^"]+\.jsonl"' if branched else "")
        + r"\}$"
    )
    assert re.match(header_pattern, pi_lines[0]) and re.match(header_pattern, our_lines[0])
    for number, (mine_line, theirs_line) in enumerate(zip(our_lines[1:], pi_lines[1:], strict=True), start=2):
        assert our_ids.line(mine_line) == pi_ids.line(theirs_line), number

    # pi loads our file: same entries, tree and context (at the last entry, pi's reopen rule)
    loaded = pi_oracle.result("load", content=our_text, treeFormat="flat")
    assert loaded["entries"] == manager.get_entries()
    assert loaded["tree"] == flat_tree(manager.get_tree())
    last_id = manager.get_entries()[-1]["id"]
    assert loaded["leafId"] == last_id
    assert loaded["context"] == manager.build_session_context(last_id)
    assert loaded["sessionName"] == manager.get_session_name()

    # we load pi's file: exactly pi's entries, tree, name, and context at pi's final leaf
    pi_copy = tmp_path / "from-pi" / Path(pi_file[0]).name
    pi_copy.parent.mkdir()
    pi_copy.write_text(pi_file[1], encoding="utf-8")
    reopened = SessionManager.open(pi_copy)
    assert pi_copy.read_text(encoding="utf-8") == pi_file[1]
    assert reopened.get_entries() == pi["entries"]
    assert flat_tree(reopened.get_tree()) == pi["tree"]
    assert reopened.get_session_name() == pi["sessionName"]
    assert reopened.leaf_id == pi["entries"][-1]["id"]
    assert reopened.build_session_context(pi["leafId"]) == pi["context"]
    assert reopened.diagnostics == []
