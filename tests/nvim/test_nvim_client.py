"""End-to-end: the Neovim plugin (nvim-client/) in a real headless Neovim against the real server.

Neovim runs ``tests/nvim/e2e.lua``, which drives ``require("pi")`` (sessions, entries, tree,
context, labels, navigation, settings changes, fork/branch/close, the :PiTree / :PiContext /
:PiLabel / :PiName / :PiSessions / :PiOpen / :PiNew / :PiContinue commands, a tree deeper than
Neovim's JSON decoder nests) and records what it saw as JSON. Meanwhile this process appends to the
session file like another pi process would, and the plugin must receive ``pi/sessionChanged`` with
reason ``external``. Skipped only where ``nvim`` is not installed.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pi_lsp.llm.models import DEFAULT_MODEL_ID, find_model
from tests.nvim.headless import REPO, server_cmd

SCRIPT = Path(__file__).with_name("e2e.lua")
DEADLINE_S = 25.0
DEEP_ENTRIES = 1200  # a linear chain: a nested pi/getTree answer would be ~2400 JSON levels deep


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _roles(step: dict[str, Any]) -> list[str]:
    return [m["role"] for m in step["result"]["messages"]]


def _texts(step: dict[str, Any]) -> list[str]:
    out = []
    for message in step["result"]["messages"]:
        content = message.get("content")
        if isinstance(content, str):
            out.append(content)
        else:
            out.append("".join(block.get("text", "") for block in content or []))
    return out


def _tree_nodes(roots: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    nodes: dict[str, dict[str, Any]] = {}
    stack = list(roots)
    while stack:
        node = stack.pop()
        nodes[node["id"]] = node
        stack.extend(node.get("children") or [])
    return nodes


def _deep_session(workspace: Path, session_dir: Path, count: int) -> Path:
    """A session file holding one linear chain of ``count`` messages (written with our store)."""
    from pi_lsp.session import SessionManager

    manager = SessionManager.create(str(workspace), session_dir)
    usage = {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2}
    for number in range(count):
        if number % 2 == 0:
            manager.append_message(
                {"role": "user", "content": f"deep question {number}", "timestamp": number}
            )
        else:
            manager.append_message(
                {
                    "role": "assistant",
                    "content": [{"type": "text", "text": f"deep answer {number}"}],
                    "api": "anthropic-messages",
                    "provider": "anthropic",
                    "model": "claude-test",
                    "usage": usage,
                    "stopReason": "stop",
                    "timestamp": number,
                }
            )
    assert manager.session_file is not None
    return Path(manager.session_file)


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory, nvim: str) -> Iterator[dict[str, Any]]:
    """Run the Lua script once; returns its results plus what this side did."""
    tmp = tmp_path_factory.mktemp("nvim-e2e")
    agent_dir = tmp / "agent"
    with pytest.MonkeyPatch.context() as patch:
        # this process writes session files too: keep its side files away from ~/.pi as well
        patch.setenv("PI_CODING_AGENT_DIR", str(agent_dir))
        yield _run_nvim(nvim, tmp, agent_dir)


def _run_nvim(nvim: str, tmp: Path, agent_dir: Path) -> dict[str, Any]:
    from pi_lsp.session import SessionManager

    sessions_dir = tmp / "sessions"
    workspace = tmp / "workspace"
    for folder in (agent_dir, sessions_dir, workspace):
        folder.mkdir()
    deep_file = _deep_session(workspace, tmp / "deep", DEEP_ENTRIES)
    results = tmp / "results.json"
    ready = tmp / "ready.json"
    config = tmp / "config.json"
    config.write_text(
        json.dumps(
            {
                "cmd": server_cmd(),
                "sessions_dir": str(sessions_dir),
                "workspace": str(workspace),
                "results": str(results),
                "ready": str(ready),
                "deep_file": str(deep_file),
                "external_timeout_ms": 8000,
            }
        )
    )
    env = {
        **os.environ,
        "PI_NVIM_TEST_CONFIG": str(config),
        "PI_CODING_AGENT_DIR": str(agent_dir),
        "XDG_CACHE_HOME": str(tmp / "cache"),
        "XDG_STATE_HOME": str(tmp / "state"),
        "XDG_DATA_HOME": str(tmp / "data"),
        "NVIM_LOG_FILE": str(tmp / "nvim.log"),
    }
    env.pop("ANTHROPIC_API_KEY", None)
    command = [
        nvim,
        "--headless",
        "--clean",
        "-u",
        "NONE",
        "-i",
        "NONE",
        "-n",
        "--cmd",
        f"set rtp+={REPO / 'nvim-client'}",
        "-c",
        f"luafile {SCRIPT}",
    ]
    started = time.monotonic()
    proc = subprocess.Popen(
        command,
        cwd=workspace,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    external: dict[str, Any] = {}
    try:
        while time.monotonic() - started < DEADLINE_S and proc.poll() is None and not ready.exists():
            time.sleep(0.05)
        if ready.exists():
            info = json.loads(ready.read_text())
            external["file"] = info["file"]
            # Another process (e.g. pi in a terminal) appends to the open session's file.
            manager = SessionManager.open(info["file"])
            external["id"] = manager.append_message(
                {"role": "user", "content": "appended by another process", "timestamp": 1_700_000_000_000}
            )
        output, _ = proc.communicate(timeout=max(1.0, DEADLINE_S - (time.monotonic() - started)))
    except subprocess.TimeoutExpired:
        proc.kill()
        output, _ = proc.communicate()
        tail = output.decode(errors="replace")[-3000:]
        pytest.fail(f"nvim did not finish within {DEADLINE_S}s; output:\n{tail}")
    elapsed = time.monotonic() - started
    tail = output.decode(errors="replace")[-3000:]
    assert results.exists(), f"nvim wrote no results (rc {proc.returncode}):\n{tail}"
    data: dict[str, Any] = json.loads(results.read_text())
    data["_external"] = external
    data["_elapsed"] = elapsed
    data["_sessions_dir"] = str(sessions_dir)
    data["_workspace"] = str(workspace)
    data["_output"] = tail
    return data


def _step(run: dict[str, Any], name: str) -> dict[str, Any]:
    step = run["steps"].get(name)
    assert step is not None, f"step {name} did not run; fatal: {run.get('fatal')}"
    assert step.get("err") is None, f"{name}: {step['err']}"
    return step


def test_script_ran_cleanly(run: dict[str, Any]) -> None:
    assert run.get("fatal") is None, run["fatal"]
    assert run["ready"] is True
    assert run["errors"] == [], run["errors"]
    assert run["_elapsed"] < 30


def test_new_session_and_file(run: dict[str, Any]) -> None:
    state = _step(run, "new")["result"]
    assert state["sessionId"]
    assert state["cwd"] == run["_workspace"]
    assert state["entryCount"] == 0
    assert state["version"] == 3
    assert state.get("name") is None
    assert run["active_after_new"] == state["sessionId"]

    named = _step(run, "state_a3")["result"]
    path = Path(named["file"])
    assert path.parent == Path(run["_sessions_dir"])
    lines = _lines(path)
    header, entries = lines[0], lines[1:]
    assert header["type"] == "session"
    assert header["id"] == state["sessionId"]
    assert header["version"] == 3
    ids = run["ids"]
    expected = ["u1", "a1", "label", "u2", "a2", "u3", "a3"]
    assert [e["id"] for e in entries[: len(expected)]] == [ids[k] for k in expected]
    by_id = {e["id"]: e for e in entries}
    assert by_id[ids["u1"]]["message"] == {
        "role": "user",
        "content": "hello from neovim",
        "timestamp": by_id[ids["u1"]]["message"]["timestamp"],
    }
    assert by_id[ids["a1"]]["parentId"] == ids["u1"]
    assert by_id[ids["a1"]]["message"]["content"] == [{"type": "text", "text": "hi from the assistant"}]
    assert by_id[ids["label"]]["type"] == "label"
    assert by_id[ids["label"]]["targetId"] == ids["u1"]
    assert by_id[ids["label"]]["label"] == "start"
    assert by_id[ids["u2"]]["parentId"] == ids["label"]  # the label entry became the leaf
    assert by_id[ids["u3"]]["parentId"] == ids["a1"]  # after navigating to a1
    names = [e for e in entries if e["type"] == "session_info"]
    assert [e["name"] for e in names] == ["nvim e2e", "renamed in nvim"]
    labels = [e for e in entries if e["type"] == "label"]
    assert [(e["targetId"], e.get("label")) for e in labels] == [
        (ids["u1"], "start"),
        (ids["a2"], "via-command"),
    ]
    # the external append is the last line
    assert entries[-1]["id"] == run["_external"]["id"]


def test_contexts_and_navigation(run: dict[str, Any]) -> None:
    ids = run["ids"]
    assert _roles(_step(run, "ctx_leaf")) == ["user", "assistant", "user", "assistant"]
    assert _texts(_step(run, "ctx_leaf"))[2:] == ["alternative question", "alternative answer"]

    nav = _step(run, "nav_u2")["result"]
    assert nav["leafId"] == ids["label"]  # a user-message target moves the leaf to its parent
    assert nav["editorText"] == "second question"
    assert run["editor_text"] == "second question"
    assert run["leaf_after_nav_u2"] == ids["label"]
    assert _step(run, "nav_a1")["result"]["leafId"] == ids["a1"]

    assert _roles(_step(run, "ctx_after_nav")) == ["user", "assistant"]
    assert _texts(_step(run, "ctx_a2")) == [
        "hello from neovim",
        "hi from the assistant",
        "second question",
        "second answer",
    ]
    assert _step(run, "ctx_null")["result"]["messages"] == []

    branch = _step(run, "branch_a2")["result"]["entries"]
    assert [e["id"] for e in branch] == [ids[k] for k in ("u1", "a1", "label", "u2", "a2")]
    assert _step(run, "entry_u1")["result"]["entry"]["id"] == ids["u1"]
    entries = _step(run, "entries")["result"]
    assert entries["total"] == 7
    assert len(entries["entries"]) == 7
    page = _step(run, "entries_page")["result"]
    assert [e["id"] for e in page["entries"]] == [ids["a1"], ids["label"]]

    assert _step(run, "state_named")["result"]["name"] == "nvim e2e"
    assert _step(run, "set_leaf_a3")["result"]["leafId"] == ids["a3"]
    assert _step(run, "state_a3")["result"]["leafId"] == ids["a3"]


def test_tree(run: dict[str, Any]) -> None:
    ids = run["ids"]
    tree = _step(run, "tree")["result"]
    assert tree["leafId"] == ids["a3"]
    assert [r["id"] for r in tree["roots"]] == [ids["u1"]]
    nodes = _tree_nodes(tree["roots"])
    assert nodes[ids["u1"]]["label"] == "start"
    assert nodes[ids["u1"]]["role"] == "user"
    assert nodes[ids["u1"]]["preview"] == "hello from neovim"
    assert [c["id"] for c in nodes[ids["a1"]]["children"]] == [ids["label"], ids["u3"]]

    final = _tree_nodes(_step(run, "tree_final")["result"]["roots"])
    assert final[ids["a2"]]["label"] == "via-command"


def test_tree_and_context_buffers(run: dict[str, Any]) -> None:
    ids = run["ids"]
    assert run["tree_ok"], run.get("_output")
    lines = run["tree_lines"]
    tree_ids = run["tree_ids"]
    default = run["tree_default_lines"]
    assert len(default) == 6 and not any("session_info" in line or "label: " in line for line in default)
    assert "user: hello from neovim  [start]" in default[0]  # labels still show on their targets
    assert len(lines) == len(tree_ids) == 8
    assert set(tree_ids) == {ids[k] for k in ("u1", "a1", "label", "u2", "a2", "u3", "a3", "name")}
    assert "session_info: nvim e2e" in lines[tree_ids.index(ids["name"])]
    text = "\n".join(lines)
    assert "user: hello from neovim  [start]" in text
    leaf_line = lines[tree_ids.index(ids["a3"])]
    assert leaf_line.startswith("> ") and "alternative answer" in leaf_line and "leaf" in leaf_line
    assert "├─ " in text and "└─ " in text  # a1 has two children

    assert run["tree_enter_ok"], "<CR> in :PiTree did not navigate"
    assert run["leaf_after_enter"] == ids["a2"]
    after = run["tree_lines_after_enter"]
    assert any(line.startswith("> ") and "second answer" in line for line in after), after

    assert run["context_ok"]
    ctx = run["context_lines"]
    assert ctx[0].startswith("# pi context: 4 messages")
    assert ctx.count("## user") == 2
    assert "second answer" in ctx
    assert run["commands_ok"], ":PiLabel / :PiName produced no notifications"
    assert _step(run, "state_renamed")["result"]["name"] == "renamed in nvim"


def test_notifications(run: dict[str, Any]) -> None:
    ids = run["ids"]
    notes = run["notifications"]
    sid = _step(run, "new")["result"]["sessionId"]
    mine = [n for n in notes if n["sessionId"] == sid]
    reasons = {n["reason"] for n in mine}
    assert {"append", "navigate", "external"} <= reasons, reasons
    appended = [i for n in mine if n["reason"] == "append" for i in n["appendedIds"]]
    for key in ("u1", "a1", "label", "u2", "a2", "u3", "a3"):
        assert ids[key] in appended, key
    navigations = [n for n in mine if n["reason"] == "navigate"]
    assert navigations[0]["leafId"] == ids["a1"]
    assert navigations[0]["appendedIds"] == []
    # one autocmd per notification, and the plugin's counter agrees
    assert run["autocmd_count"] == len(notes)
    assert run["changes_counter"] == len(notes)


def test_external_append(run: dict[str, Any]) -> None:
    ext = run["_external"]
    assert "id" in ext, "the script never signalled readiness"
    assert run["external_ok"], "no pi/sessionChanged with reason external within 8 s"
    notes = [n for n in run["notifications"] if n["reason"] == "external"]
    assert notes[0]["appendedIds"] == [ext["id"]]
    assert notes[0]["leafId"] == ext["id"]  # it continued from the leaf, so the leaf follows
    state = _step(run, "state_after_external")["result"]
    assert state["leafId"] == ext["id"]
    assert _texts(_step(run, "ctx_after_external"))[-1] == "appended by another process"


def test_listing_fork_branch_close(run: dict[str, Any]) -> None:
    ids = run["ids"]
    state = _step(run, "state_a3")["result"]
    listed = _step(run, "list")["result"]["sessions"]
    assert state["file"] in [s["path"] for s in listed]
    mine = next(s for s in listed if s["path"] == state["file"])
    assert mine["name"] == "renamed in nvim"
    assert mine["firstMessage"] == "hello from neovim"
    queried = _step(run, "list_query")["result"]["sessions"]
    assert [s["path"] for s in queried] == [state["file"]]

    assert run["picker_ok"], ":PiSessions did not open the picked session"
    assert run["picker"]["count"] == 1
    assert run["picker"]["path"] == state["file"]
    assert "renamed in nvim" in run["picker"]["first"]

    fork = _step(run, "fork")["result"]
    assert fork["sessionId"] != state["sessionId"]
    assert fork["file"] != state["file"]
    assert fork.get("parentSession") == state["file"]
    branched = _step(run, "branch_new")["result"]
    assert branched["file"] and Path(branched["file"]).exists()
    path = _step(run, "branch_new_path")["result"]["entries"]
    assert [e["id"] for e in path[:4]] == [ids[k] for k in ("u1", "a1", "u3", "a3")]
    # as in pi, labels of entries on the path are re-created after it
    assert [(e["type"], e["targetId"], e["label"]) for e in path[4:]] == [("label", ids["u1"], "start")]
    assert _step(run, "open_again")["result"]["sessionId"] == state["sessionId"]
    assert _step(run, "continue")["result"]["sessionId"]
    assert _step(run, "close_fork")["result"] == {} or _step(run, "close_fork")["result"] == []


def test_commands_and_settings(run: dict[str, Any]) -> None:
    assert run["open_command_ok"], ":PiOpen did not open the file"
    assert run["new_command_ok"], ":PiNew did not start a session"
    assert run["continue_command_ok"], ":PiContinue did not switch to a recent session"


def test_context_usage_and_settings(run: dict[str, Any]) -> None:
    usage = _step(run, "ctx_leaf")["result"].get("usage")
    assert usage is not None, "pi/buildContext result has no usage (ContextUsage)"
    fields = {"tokens", "usageTokens", "trailingTokens", "contextWindow", "percent", "shouldCompact"}
    assert fields <= set(usage)
    default_model = find_model(DEFAULT_MODEL_ID)
    assert default_model is not None
    window = default_model.context_window  # no model set: pi's default model's own window
    assert usage["contextWindow"] == window
    assert usage["tokens"] > 0
    small = _step(run, "ctx_small_window")["result"]["usage"]
    assert small["contextWindow"] == 100000  # workspace/didChangeConfiguration reached the server
    assert f"tokens of {window}" in run["context_lines"][0]  # :PiContext shows the usage


def test_deep_tree(run: dict[str, Any]) -> None:
    assert _step(run, "open_deep")["result"]["entryCount"] == DEEP_ENTRIES
    assert run["deep_tree_ok"], "the tree of a deep session never arrived (undecodable nested JSON?)"
    deep = run["deep_tree"]
    assert "err" not in deep, deep
    assert deep["lines"] == DEEP_ENTRIES
    assert deep["first"] == "* user: deep question 0"
    assert deep["last"].startswith("> assistant: deep answer") and deep["last_id"] == deep["leaf"]
    assert deep["source"] in ("flat", "entries")


def test_later_methods_answer(run: dict[str, Any]) -> None:
    expected = {
        "prepare_compaction": {"firstKeptEntryId", "tokensBefore", "summarizeCount"},
        "get_system_prompt": {"text", "tokens", "sources"},
        "list_skills": {"skills", "diagnostics"},
    }
    for name, keys in expected.items():
        outcome = run["later"][name]
        if outcome["supported"]:
            assert outcome["code"] is None, (name, outcome)
            assert keys <= set(outcome["keys"]), (name, outcome)
        else:  # reserved by this build: answered with MethodNotFound, never left hanging
            assert outcome["code"] == -32601, (name, outcome)


def test_errors_and_shutdown(run: dict[str, Any]) -> None:
    assert run["error_codes"] == {"entry": -32002, "session": -32001, "params": -32602}
    assert run["stopped"], "the server did not exit after stop()"
