"""``pi/getSystemPrompt``, ``pi/listSkills`` and the hover over LSP, against the domain and pi itself."""

from __future__ import annotations

import os
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from pi_lsp.compaction.tokenizers import make_tokenizer
from pi_lsp.prompt.assemble import assemble_system_prompt, list_skills
from pi_lsp.prompt.system_prompt import pi_docs_paths
from pi_lsp.protocol import METHOD_NAMES
from tests.oracle import PiOracle, pi_app_system_prompt
from tests.prompt.helpers import COLLISION_FIXTURES, SKILL_FIXTURES, Tree, build_rich_tree, copy_fixtures
from tests.server.prompt_support import (
    Workspace,
    call,
    make_workspace,
    normalise,
    prompt_server,
    wait_diagnostics,
)

# (tools, customPrompt, appendPrompt): the request params of pi/getSystemPrompt
REQUESTS: list[tuple[list[str] | None, str | None, str | None]] = [
    (None, None, None),
    (["read", "bash", "grep", "find", "ls"], None, None),
    (["bash", "edit"], None, None),
    ([], None, None),
    (["read"], "Request prompt.", None),
    (None, "", None),
    (None, None, "Request append."),
]


def _params(tools: list[str] | None, custom: str | None, append: str | None) -> dict[str, Any]:
    params: dict[str, Any] = {}
    if tools is not None:
        params["tools"] = tools
    if custom is not None:
        params["customPrompt"] = custom
    if append is not None:
        params["appendPrompt"] = append
    return params


def _same_prompt(server: dict[str, Any], domain: dict[str, Any]) -> None:
    """Equal up to the date line (the server and this process may straddle midnight)."""
    assert normalise(server["text"]) == normalise(domain["text"])
    server_rest = {k: v for k, v in server.items() if k not in ("text", "tokens")}
    assert server_rest == {k: v for k, v in domain.items() if k not in ("text", "tokens")}
    if server["text"] == domain["text"]:
        assert server["tokens"] == domain["tokens"]


def _rich(tmp_path: Path) -> tuple[Workspace, str]:
    """pi's discovery rules in one tree (tests/prompt/helpers.py), laid out as a Workspace."""
    space = Workspace(tmp_path)
    cwd, agent, home = build_rich_tree(Tree(tmp_path))
    assert (agent, home) == (str(space.agent), str(space.home))
    return space, cwd


async def test_get_system_prompt_equals_the_domain(tmp_path: Path) -> None:
    space, cwd = _rich(tmp_path)
    tokenizer = make_tokenizer("tiktoken")
    docs = pi_docs_paths("/opt/pi-docs")
    async with prompt_server(space, folders=[Path(cwd)]) as client:
        for keep_system in (True, False):
            if not keep_system:
                os.remove(os.path.join(cwd, ".pi", "SYSTEM.md"))
            for tools, custom, append in REQUESTS:
                ours = await call(
                    client, "pi/getSystemPrompt", {"cwd": cwd, **_params(tools, custom, append)}
                )
                domain = assemble_system_prompt(
                    cwd,
                    agent_dir=space.agent,
                    home=str(space.home),
                    tools=tools,
                    custom_prompt=custom,
                    append_prompt=append,
                    tokenizer=tokenizer,
                    docs=docs,
                    now=datetime.now(UTC),
                ).to_json()
                _same_prompt(ours, dict(domain))

        # The default cwd is the first workspace folder; a session's cwd is its header cwd.
        def domain_for(where: str) -> dict[str, Any]:
            result = assemble_system_prompt(
                where, agent_dir=space.agent, home=str(space.home), tokenizer=tokenizer, docs=docs
            )
            return dict(result.to_json())

        _same_prompt(await call(client, "pi/getSystemPrompt", {}), domain_for(cwd))
        state = await call(client, "pi/newSession", {"cwd": str(space.home), "persist": False})
        by_session = await call(client, "pi/getSystemPrompt", {"session": state["sessionId"]})
        _same_prompt(by_session, domain_for(str(space.home)))
        assert f"Current working directory: {space.home}" in by_session["text"]
        _same_prompt(await call(client, "pi/getSystemPrompt", {}), by_session)  # the active session's
        assert await call(client, "pi/listSkills", {}) == list_skills(cwd, space.agent, home=str(space.home))


@pytest.mark.oracle
async def test_get_system_prompt_equals_pi(pi_oracle: PiOracle, tmp_path: Path) -> None:
    info = pi_oracle.request("systemPrompt", options={"cwd": "/"})["info"]
    package_dir = os.path.dirname(info["readmePath"])
    space, cwd = _rich(tmp_path)
    async with prompt_server(space, folders=[Path(cwd)], PI_PACKAGE_DIR=package_dir) as client:
        for keep_system in (True, False):
            if not keep_system:
                os.remove(os.path.join(cwd, ".pi", "SYSTEM.md"))
            for tools, custom, append in REQUESTS:
                ours = await call(client, "pi/getSystemPrompt", _params(tools, custom, append))
                expected = _pi_prompt(pi_oracle, cwd, space, tools, custom, append)
                assert normalise(ours["text"]) == normalise(expected), (tools, custom, append)
                assert "\nCurrent date: 20" in ours["text"]


def _pi_prompt(
    oracle: PiOracle,
    cwd: str,
    space: Workspace,
    tools: list[str] | None,
    custom: str | None,
    append: str | None,
) -> str:
    return pi_app_system_prompt(
        oracle,
        cwd=cwd,
        agent_dir=str(space.agent),
        home=str(space.home),
        tools=tools,
        now=_NOW,
        tz="UTC",
        custom=custom,
        append=append,
    )


_NOW = "2026-03-02T03:00:00Z"


def _fixture_project(space: Workspace) -> Path:
    """Every shared skill fixture directory under ``<ws>/.pi/skills`` (the collision pair too)."""
    skills = space.ws / ".pi" / "skills"
    skills.mkdir(parents=True)
    for fixture in sorted(SKILL_FIXTURES.iterdir()):
        copy_fixtures(fixture, skills / fixture.name)
    for side in ("first", "second"):
        copy_fixtures(COLLISION_FIXTURES / side, skills / f"collision-{side}")
    return skills


def _wire_diagnostics(pi_diagnostics: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {
            "path": d.get("path", ""),
            "severity": "error" if d["type"] == "error" else "warning",
            "message": d["message"],
        }
        for d in pi_diagnostics
    ]


@pytest.mark.oracle
async def test_list_skills_of_every_fixture_equals_pi(pi_oracle: PiOracle, tmp_path: Path) -> None:
    space = make_workspace(tmp_path)
    skills_dir = _fixture_project(space)
    expected = pi_oracle.result(
        "resources", cwd=str(space.ws), agentDir=str(space.agent), home=str(space.home)
    )
    async with prompt_server(space) as client:
        ours = await call(client, "pi/listSkills", {"cwd": str(space.ws)})
        assert ours == list_skills(str(space.ws), space.agent, home=str(space.home))
        assert [
            (s["name"], s["path"], s["baseDir"], s["disableModelInvocation"]) for s in ours["skills"]
        ] == [
            (s["name"], s["filePath"], s["baseDir"], s["disableModelInvocation"]) for s in expected["skills"]
        ]
        assert {s["source"] for s in ours["skills"]} == {"project"}
        assert ours["diagnostics"] == _wire_diagnostics(expected["skillDiagnostics"])
        assert any("collision" in d["message"] for d in ours["diagnostics"])
        # The same problems reach the editor as LSP diagnostics on each SKILL.md.
        for path in {d["path"] for d in ours["diagnostics"] if d["path"].endswith(".md")}:
            await wait_diagnostics(client, Path(path), lambda found: len(found) > 0)
        await wait_diagnostics(
            client,
            skills_dir / "missing-description" / "SKILL.md",
            lambda found: any("description is required" in d.message and d.severity == 1 for d in found),
        )
        valid = skills_dir / "valid-skill" / "SKILL.md"
        await wait_diagnostics(client, valid, lambda found: found == [])


async def test_hover_shows_token_counts(tmp_path: Path) -> None:
    space = make_workspace(tmp_path)
    agents = space.write(space.ws / "AGENTS.md", "Always run the tests.\n" * 20)
    global_agents = space.write(space.agent / "AGENTS.md", "Be brief.\n")
    skill = space.skill(space.ws / ".pi" / "skills", "deploy", "Deploy the app to staging.")
    hidden = space.skill(space.agent / "skills", "secret", "Manual only.", "disable-model-invocation: true")
    other = space.write(space.ws / "src" / "main.py", "print('hi')\n")
    shadowed = space.write(space.ws / "CLAUDE.md", "Not read: AGENTS.md wins.\n")

    async def hover(path: Path) -> str | None:
        params = types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=path.as_uri()), position=types.Position(0, 0)
        )
        result = await call(client, types.TEXT_DOCUMENT_HOVER, params)
        if result is None:
            return None
        contents = result["contents"] if isinstance(result, dict) else result.contents
        if isinstance(contents, dict):
            assert contents["kind"] == "markdown"
            return str(contents["value"])
        assert contents.kind == types.MarkupKind.Markdown
        return str(contents.value)

    async with prompt_server(space) as client:
        prompt = await call(client, "pi/getSystemPrompt", {})
        tokens = {s["path"]: s["tokens"] for s in prompt["sources"]}
        text = await hover(agents)
        assert text is not None and text.startswith(
            f"Adds {tokens[str(agents)]:,} tokens to the system prompt"
        )
        assert "(context file)" in text and f"{prompt['tokens']:,} tokens" in text
        text = await hover(global_agents)
        assert text is not None and f"Adds {tokens[str(global_agents)]:,} tokens" in text
        text = await hover(skill)
        assert text == (
            f"Adds {tokens[str(skill)]:,} tokens to the system prompt (skill `deploy`)\n\n"
            f"The whole system prompt for `{space.ws}` is {prompt['tokens']:,} tokens (tiktoken tokenizer)."
        )
        text = await hover(hidden)
        assert text is not None and text.startswith(
            "Adds 0 tokens to the system prompt (skill `secret`, hidden"
        )
        assert await hover(other) is None
        assert await hover(shadowed) is None
        assert await hover(space.ws / "missing" / "AGENTS.md") is None
        # The shadowed CLAUDE.md gets an information diagnostic instead.
        await wait_diagnostics(
            client, shadowed, lambda found: any("pi reads AGENTS.md" in d.message for d in found)
        )


async def test_params_errors_and_capabilities(tmp_path: Path) -> None:
    space = make_workspace(tmp_path)
    async with prompt_server(space) as client:
        caps = client.init_result.capabilities  # type: ignore[attr-defined]
        assert "pi/getSystemPrompt" in METHOD_NAMES and "pi/listSkills" in METHOD_NAMES
        assert caps.hover_provider is True
        experimental = caps.experimental["pi"]
        assert "pi/systemPromptChanged" in experimental["notifications"]
        assert {"pi/getSystemPrompt", "pi/listSkills"} <= set(experimental["methods"])
        for method, params, code in (
            ("pi/getSystemPrompt", {"tools": "read"}, -32602),
            ("pi/getSystemPrompt", {"tools": ["read", 1]}, -32602),
            ("pi/getSystemPrompt", {"customPrompt": 3}, -32602),
            ("pi/getSystemPrompt", {"session": "nope", "cwd": "/"}, -32602),
            ("pi/getSystemPrompt", {"session": "nope"}, -32001),
            ("pi/getSystemPrompt", {"cwd": "a\u0000b"}, -32602),
            ("pi/listSkills", {"cwd": 5}, -32602),
        ):
            with pytest.raises(JsonRpcException) as info:
                await call(client, method, params)
            assert info.value.code == code, (method, params)
        # Relative and file:// cwds are taken like every other path param.
        space.write(space.ws / "sub" / "AGENTS.md", "Sub rules.\n")
        relative = await call(client, "pi/getSystemPrompt", {"cwd": "sub"})
        uri = await call(client, "pi/getSystemPrompt", {"cwd": (space.ws / "sub").as_uri()})
        assert [s["path"] for s in relative["sources"]] == [str(space.ws / "sub" / "AGENTS.md")]
        assert relative["sources"] == uri["sources"]
        assert (await call(client, "pi/listSkills", {"cwd": "sub"})) == {"skills": [], "diagnostics": []}


def test_demo_step_prints_the_prompt_sources(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from pi_lsp.client.demo import STEPS, run_demo, system_prompt

    steps = [STEPS[0], ("The system prompt", system_prompt)]
    assert ("The system prompt", system_prompt) in STEPS
    assert run_demo(str(tmp_path / "demo"), steps) == 0
    out = capsys.readouterr().out
    assert re.search(r"system prompt: [\d,]+ tokens; files it is built from:", out)
    assert re.search(r"agents +\d+ tokens  project/AGENTS\.md", out)
    assert re.search(r"skill +\d+ tokens  project/\.pi/skills/release-notes/SKILL\.md", out)
    assert "│ You are an expert coding assistant" in out and "skills: release-notes (project)" in out
    assert "hover on SKILL.md: Adds" in out and "tokens to the system prompt (skill `release-notes`)" in out
    assert re.search(
        r"edited AGENTS.md → pi/systemPromptChanged after \d+ ms \(AGENTS.md \d+, SKILL.md \d+ tokens\)", out
    )
