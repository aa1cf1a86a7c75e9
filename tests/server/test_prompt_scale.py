"""Many session cwds: prompt syncs are coalesced and adding a root costs the same however many are
watched (issue 8: 1,000 sessions with distinct cwds made ``pi/getSystemPrompt`` take 108 s).

Work is counted, not timed: how often a root's watch directories are computed (each is a few
dozen ``stat`` calls) and how many sync passes run. The service runs in process on real folders
with the real watcher.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pi_lsp.prompt.assemble import PromptResult
from pi_lsp.prompt.watch_plan import WatchPlan
from pi_lsp.service.build import build_service
from pi_lsp.service.registry import Client

SESSIONS = 300


@pytest.fixture
def watch_dirs_calls(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    calls: list[str] = []
    real = WatchPlan.watch_dirs

    def counting(plan: WatchPlan, *args: Any) -> set[tuple[str, bool]]:
        calls.append(plan.cwd)
        return real(plan, *args)

    monkeypatch.setattr(WatchPlan, "watch_dirs", counting)
    return calls


async def test_many_session_cwds_cost_linear_watch_work(tmp_path: Path, watch_dirs_calls: list[str]) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    cwds = [tmp_path / "projects" / f"p{n}" for n in range(SESSIONS)]
    for cwd in cwds:
        cwd.mkdir(parents=True)
    service = build_service()
    client = Client()
    service.connect(client)
    try:
        service.prompt.initialized(client, [str(workspace)])
        for cwd in cwds:
            await service.sessions.new_session(
                client, cwd=str(cwd), session_dir=None, parent_session=None, session_id=None, persist=False
            )
        result = await service.prompt.get_system_prompt(
            client, str(workspace), tools=None, custom_prompt=None, append_prompt=None
        )
        assert result["text"]
        watcher = service.prompt.watcher
        assert watcher is not None and len(watcher.roots()) == SESSIONS + 1
        # every root planned once, its watch directories found once (no re-planning per root added)
        assert watcher.plans_made == SESSIONS + 1
        assert len(watch_dirs_calls) <= 2 * (SESSIONS + 1)
        await service.prompt.sync()  # the background builds finish: one per root
        builds = service.prompt._state(client).builds
        assert sorted(builds) == sorted([str(workspace), *map(str, cwds)])
        # a hover on a Markdown file no root's prompt can contain rebuilds nothing; one on a
        # new skill of one root rebuilds that root only
        assembled: list[str] = []
        real_assemble = service.prompt._assemble

        async def counting(root: str, tokenizer_name: str) -> PromptResult:
            assembled.append(root)
            return await real_assemble(root, tokenizer_name)

        service.prompt._assemble = counting  # type: ignore[method-assign]
        readme = tmp_path / "elsewhere" / "README.md"
        readme.parent.mkdir()
        readme.write_text("# Not a prompt file\n")
        assert await service.prompt.hover(client, str(readme)) is None
        assert assembled == []
        skill = cwds[7] / ".pi" / "skills" / "fresh" / "SKILL.md"
        skill.parent.mkdir(parents=True)
        skill.write_text("---\nname: fresh\ndescription: Just written.\n---\nBody.\n")
        text = await service.prompt.hover(client, str(skill))
        assert text is not None and "skill `fresh`" in text
        assert assembled == [str(cwds[7])]
    finally:
        await service.close()


async def test_roots_known_before_the_watcher_starts_are_planned_once(
    tmp_path: Path, watch_dirs_calls: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Sessions opened before the prompt service exists (a client opening its sessions before its
    first prompt request): the first sync adds every root and starts the watcher; each root's
    watch directories are found once, not again when the watcher starts, and each directory
    they share is looked at once."""
    import pi_lsp.prompt.watch_plan as watch_plan

    stats: list[str] = []
    real_isdir = watch_plan.os.path.isdir

    def counting_isdir(path: str) -> bool:
        stats.append(path)
        return real_isdir(path)

    monkeypatch.setattr(watch_plan.os.path, "isdir", counting_isdir)
    workspace = tmp_path / "ws"
    workspace.mkdir()
    cwds = [tmp_path / "projects" / f"p{n}" for n in range(100)]
    for cwd in cwds:
        cwd.mkdir(parents=True)
    service = build_service()
    client = Client()
    service.connect(client)
    try:
        for cwd in cwds:
            await service.sessions.new_session(
                client, cwd=str(cwd), session_dir=None, parent_session=None, session_id=None, persist=False
            )
        assert service.lazy.prompt.built is None
        service.prompt.initialized(client, [str(workspace)])
        await service.prompt.get_system_prompt(
            client, str(workspace), tools=None, custom_prompt=None, append_prompt=None
        )
        assert sorted(watch_dirs_calls) == sorted([str(workspace), *map(str, cwds)])
        shared = str(tmp_path)  # every root's ancestor: its AGENTS.md and .agents/skills
        assert stats.count(shared) <= 2
    finally:
        await service.close()


async def test_a_burst_of_root_changes_is_one_sync_pass(tmp_path: Path) -> None:
    service = build_service()
    client = Client()
    service.connect(client)
    try:
        service.prompt.initialized(client, [str(tmp_path)])
        await service.prompt.sync()
        before = service.prompt.syncs_run
        for _ in range(100):
            service.prompt.sessions_changed()
        await service.prompt.settled()
        await service.prompt.sync()
        assert service.prompt.syncs_run - before <= 2  # the burst, plus sync()'s own request
    finally:
        await service.close()


async def test_the_tokenizer_of_a_roots_build_is_made_off_the_event_loop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first tokenizer loads its ranks (about a second); a root's background build made it on
    the event loop, stopping every other request (a compaction's, another session's) meanwhile."""
    import threading

    import pi_lsp.prompt.workspace as prompt_module

    threads: list[str] = []
    real = prompt_module.shared_tokenizer

    def recording(name: str) -> Any:
        threads.append(threading.current_thread().name)
        return real(name)

    monkeypatch.setattr(prompt_module, "shared_tokenizer", recording)
    workspace = tmp_path / "ws"
    workspace.mkdir()
    service = build_service()
    client = Client()
    service.connect(client)
    try:
        service.prompt.initialized(client, [str(workspace)])
        await service.prompt.sync()
        assert str(workspace) in service.prompt._state(client).builds
        assert threads and threading.main_thread().name not in threads
    finally:
        await service.close()
