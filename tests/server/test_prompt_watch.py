"""Server-side watching of the prompt's files over LSP: one ``pi/systemPromptChanged`` per burst,
diagnostics that appear and clear, client-sent change events, roots from workspace folders and
sessions, and files that cannot be read. The test client registers no file watchers (like Neovim
0.7), so everything here comes from the server's own watcher."""

from __future__ import annotations

import asyncio
import os
import shutil
from pathlib import Path

import pytest
from lsprotocol import types

from pi_lsp.service.build import build_service
from pi_lsp.service.registry import Client
from tests.server.prompt_support import (
    DIAGNOSTICS,
    burst,
    call,
    changes,
    editor_save,
    make_workspace,
    prompt_server,
    restricted_command,
    send_watched,
    wait_diagnostics,
    wait_watching,
)


def _sources(change: dict[str, object]) -> list[tuple[str, str]]:
    sources = change["sources"]
    assert isinstance(sources, list)
    return [(s["kind"], s["path"]) for s in sources]


async def test_edits_in_workspace_and_agent_dir_give_one_notification_per_burst(tmp_path: Path) -> None:
    space = make_workspace(tmp_path)
    agents = space.write(space.ws / "AGENTS.md", "First rules.\n")
    skills = space.ws / ".pi" / "skills"
    async with prompt_server(space) as client:
        await wait_watching(client, space.ws)
        cwd = str(space.ws)

        # Workspace AGENTS.md: an editor-style save (write temp, rename, chmod) twice in a row.
        def save_twice() -> None:
            editor_save(agents, "Second rules.\n")
            editor_save(agents, "Third rules, longer than before.\n")

        found = await burst(client, save_twice)
        assert len(found) == 1 and found[0]["cwd"] == cwd
        assert _sources(found[0]) == [("agents", str(agents))]
        prompt = await call(client, "pi/getSystemPrompt", {})
        assert "Third rules" in prompt["text"] and found[0]["sources"] == prompt["sources"]

        # A new skill (directories created on the way) in the workspace.
        found = await burst(client, lambda: space.skill(skills, "deploy", "Deploy it."))
        skill = skills / "deploy" / "SKILL.md"
        assert len(found) == 1 and ("skill", str(skill)) in _sources(found[0])

        # The agent dir lies outside the workspace: global AGENTS.md added, then a global skill.
        global_agents = space.agent / "AGENTS.md"
        found = await burst(client, lambda: space.write(global_agents, "Global.\n"))
        assert len(found) == 1 and _sources(found[0])[0] == ("agents", str(global_agents))
        found = await burst(client, lambda: space.skill(space.agent / "skills", "audit", "Audit it."))
        global_skill = space.agent / "skills" / "audit" / "SKILL.md"
        assert len(found) == 1 and ("skill", str(global_skill)) in _sources(found[0])
        found = await burst(client, lambda: editor_save(global_skill, global_skill.read_text() + "More.\n"))
        assert len(found) == 1

        # Deletions: the workspace skill directory, the workspace AGENTS.md, the global files.
        found = await burst(client, lambda: shutil.rmtree(skills / "deploy"))
        assert len(found) == 1 and ("skill", str(skill)) not in _sources(found[0])
        found = await burst(client, agents.unlink)
        assert len(found) == 1 and ("agents", str(agents)) not in _sources(found[0])

        def delete_globals() -> None:
            global_agents.unlink()
            shutil.rmtree(space.agent / "skills")

        found = await burst(client, delete_globals)
        assert len(found) == 1 and found[0]["sources"] == []

        # CLAUDE.md, SYSTEM.md, APPEND_SYSTEM.md and settings files are watched too.
        found = await burst(client, lambda: space.write(space.ws / ".pi" / "SYSTEM.md", "You are terse."))
        assert len(found) == 1 and _sources(found[0]) == [("system", str(space.ws / ".pi" / "SYSTEM.md"))]
        settings = space.ws / ".pi" / "settings.json"
        found = await burst(client, lambda: space.write(settings, '{"skills": ["../extra"]}'))
        assert len(found) == 1
        found = await burst(client, lambda: space.skill(space.ws / "extra", "extra-skill", "From settings."))
        assert len(found) == 1 and any(kind == "skill" for kind, _ in _sources(found[0]))


async def test_broken_skill_diagnostics_appear_and_clear(tmp_path: Path) -> None:
    space = make_workspace(tmp_path)
    skills = space.ws / ".pi" / "skills"
    async with prompt_server(space) as client:
        await wait_watching(client, space.ws)
        skill = skills / "lint" / "SKILL.md"

        # Missing description: pi drops the skill; an error on the file.
        found = await burst(client, lambda: space.write(skill, "---\nname: lint\n---\nBody.\n"))
        assert len(found) == 1 and _sources(found[0]) == []
        errors = await wait_diagnostics(client, skill, lambda d: len(d) > 0)
        assert [(d.severity, d.message) for d in errors] == [
            (types.DiagnosticSeverity.Error, "description is required (skill not loaded)")
        ]

        # Fixed: the skill loads and the diagnostics are cleared with an empty list.
        await burst(client, lambda: editor_save(skill, "---\nname: lint\ndescription: Lint.\n---\nBody.\n"))
        await wait_diagnostics(client, skill, lambda d: d == [])

        # A bad name (pi loads it with warnings), placed on the name line.
        await burst(client, lambda: editor_save(skill, "---\nname: Lint_It\ndescription: Lint.\n---\n"))
        warnings = await wait_diagnostics(client, skill, lambda d: len(d) > 0)
        assert {d.severity for d in warnings} == {types.DiagnosticSeverity.Warning}
        assert all(d.range.start.line == 1 for d in warnings)
        assert any("invalid characters" in d.message for d in warnings)
        await burst(client, lambda: editor_save(skill, "---\nname: lint\ndescription: Lint.\n---\n"))
        await wait_diagnostics(client, skill, lambda d: d == [])

        # Broken again, then deleted: a file that no longer exists is cleared too.
        await burst(client, lambda: editor_save(skill, "---\ndescription: [unclosed\n---\n"))
        await wait_diagnostics(client, skill, lambda d: len(d) > 0)
        await burst(client, lambda: shutil.rmtree(skills / "lint"))
        await wait_diagnostics(client, skill, lambda d: d == [])


async def test_client_sent_watched_files_trigger_one_notification(tmp_path: Path) -> None:
    space = make_workspace(tmp_path)
    async with prompt_server(space) as client:
        await wait_watching(client, space.ws)
        agents = space.ws / "AGENTS.md"
        # The client reports a change (no file was touched): exactly one notification.
        found = await burst(client, lambda: send_watched(client, agents, kind=1))
        assert len(found) == 1 and found[0]["cwd"] == str(space.ws)
        # A real save also reported by the client is still one burst.

        def save_and_report() -> None:
            space.write(agents, "Rules.\n")
            send_watched(client, agents)
            send_watched(client, agents)

        found = await burst(client, save_and_report)
        assert len(found) == 1 and _sources(found[0]) == [("agents", str(agents))]
        # Files that do not feed the prompt are ignored.
        changes(client).clear()
        send_watched(client, space.ws / "README.md", space.ws / "src" / "main.py")
        await asyncio.sleep(0.5)
        assert changes(client) == []


async def test_roots_follow_workspace_folders_and_sessions(tmp_path: Path) -> None:
    space = make_workspace(tmp_path)
    second = space.root / "second"
    project = space.root / "project"
    second.mkdir()
    project.mkdir()
    async with prompt_server(space) as client:
        await wait_watching(client, space.ws)
        client.workspace_did_change_workspace_folders(
            types.DidChangeWorkspaceFoldersParams(
                event=types.WorkspaceFoldersChangeEvent(
                    added=[types.WorkspaceFolder(uri=second.as_uri(), name="second")], removed=[]
                )
            )
        )
        await wait_watching(client, second)
        found = await burst(client, lambda: space.write(second / "CLAUDE.md", "Second.\n"))
        assert [c["cwd"] for c in found] == [str(second)]

        # A session's cwd is watched while the session is open.
        state = await call(client, "pi/newSession", {"cwd": str(project), "persist": False})
        await wait_watching(client, project)
        found = await burst(client, lambda: space.write(project / "AGENTS.md", "Project.\n"))
        assert [c["cwd"] for c in found] == [str(project)]
        await call(client, "pi/closeSession", {"session": state["sessionId"]})

        client.workspace_did_change_workspace_folders(
            types.DidChangeWorkspaceFoldersParams(
                event=types.WorkspaceFoldersChangeEvent(
                    added=[], removed=[types.WorkspaceFolder(uri=second.as_uri(), name="second")]
                )
            )
        )
        await asyncio.sleep(0.5)
        changes(client).clear()
        space.write(second / "CLAUDE.md", "Second, changed.\n")
        space.write(project / "AGENTS.md", "Project, changed.\n")
        found = await burst(client, lambda: space.write(space.ws / "AGENTS.md", "Main.\n"))
        assert [c["cwd"] for c in found] == [str(space.ws)]


@pytest.mark.skipif(
    restricted_command() is None, reason="running as root without setpriv: chmod 000 binds nothing"
)
async def test_symlink_loops_and_unreadable_files_give_diagnostics(tmp_path: Path) -> None:
    space = make_workspace(tmp_path)
    skills = space.ws / ".pi" / "skills"
    space.skill(skills / "group", "real", "Real.")
    os.symlink(skills, skills / "group" / "loop")
    locked_skill = space.skill(skills, "locked", "Locked.")
    locked_agents = space.write(space.ws / "AGENTS.md", "Secret rules.\n")
    os.chmod(locked_skill, 0)
    os.chmod(locked_agents, 0)
    command = restricted_command()
    try:
        async with prompt_server(space, command=command) as client:
            prompt = await call(client, "pi/getSystemPrompt", {})
            assert [s["path"] for s in prompt["sources"]] == [str(skills / "group" / "real" / "SKILL.md")]
            messages = [d["message"] for d in prompt["diagnostics"]]
            assert any(m.startswith("symlink loop") for m in messages), messages
            assert any(d["path"] == str(locked_agents) for d in prompt["diagnostics"])
            skill_errors = await wait_diagnostics(client, locked_skill, lambda d: len(d) > 0)
            assert skill_errors[0].severity == types.DiagnosticSeverity.Error
            agents_errors = await wait_diagnostics(client, locked_agents, lambda d: len(d) > 0)
            assert agents_errors[0].severity == types.DiagnosticSeverity.Error

            # The watcher survives the loop and the unreadable files: fixing both clears them.
            await wait_watching(client, space.ws)

            def unlock() -> None:
                os.chmod(locked_skill, 0o644)
                os.chmod(locked_agents, 0o644)
                locked_agents.write_text("Readable rules.\n")

            found = await burst(client, unlock)
            assert len(found) == 1 and ("agents", str(locked_agents)) in _sources(found[0])
            await wait_diagnostics(client, locked_skill, lambda d: d == [])
            await wait_diagnostics(client, locked_agents, lambda d: d == [])
    finally:
        for path in (locked_skill, locked_agents):
            os.chmod(path, 0o644)


async def test_shutdown_stops_the_watcher(tmp_path: Path) -> None:
    space = make_workspace(tmp_path)
    log = tmp_path / "server.log"
    async with prompt_server(space, log_file=log) as client:
        await wait_watching(client, space.ws)
        assert f"watching {space.ws}" in log.read_text()
        assert "prompt watcher stopped" not in log.read_text()
        await asyncio.wait_for(client.shutdown_session(), 10)
        assert "prompt watcher stopped" in log.read_text()  # before the shutdown response


async def test_watcher_runs_from_initialized_to_shutdown(tmp_path: Path) -> None:
    """In process: the watcher starts with the first root and stops at the client's shutdown."""
    space = make_workspace(tmp_path)
    space.skill(space.ws / ".pi" / "skills", "broken", None)
    service = build_service()
    client = Client()
    sent: list[tuple[str, dict[str, object]]] = []
    client.notify = lambda method, params: sent.append((method, params))
    service.connect(client)
    try:
        assert service.prompt.watcher is None
        service.prompt.initialized(client, [str(space.ws)])
        await service.prompt.sync()
        watcher = service.prompt.watcher
        assert watcher is not None and watcher.roots() == [str(space.ws)]
        broken = str(space.ws / ".pi" / "skills" / "broken" / "SKILL.md")
        assert broken in service.prompt.published(client)
        assert any(m == DIAGNOSTICS and p["uri"] == Path(broken).as_uri() for m, p in sent)
        hover = await service.prompt.hover(client, broken)
        assert hover is None  # not loaded: no tokens to show
        await service.prompt.shutdown(client)
        assert service.prompt.watcher is None
    finally:
        await service.close()
