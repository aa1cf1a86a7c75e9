"""The prompt watcher: one debounced callback per burst, for every kind of prompt input.

Each test runs against both backends (native events via watchdog, and stat polling). Timing is
asserted generously: a callback must arrive within WAIT seconds, and no second one may follow
within QUIET seconds; nothing here measures latency (see benchmarks/bench_prompt.py for that).
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Literal

import pytest

from pi_lsp.prompt.watch import PromptWatcher
from tests.prompt.helpers import Tree

WAIT = 2.0
QUIET = 0.35
Backend = Literal["watchdog", "poll"]

BACKENDS = ["watchdog", "poll"]  # watchdog is a dependency: never skipped


class Recorder:
    """Collects callbacks; ``expect`` waits for the first and then checks nothing else arrives."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, list[str]]] = []
        self.threads: list[threading.Thread] = []
        self._event = threading.Event()
        self._lock = threading.Lock()

    def __call__(self, cwd: str, paths: list[str]) -> None:
        with self._lock:
            self.calls.append((cwd, paths))
            self.threads.append(threading.current_thread())
        self._event.set()

    def expect(self, action: Callable[[], object], *, calls: int = 1) -> list[tuple[str, list[str]]]:
        with self._lock:
            self.calls.clear()
            self._event.clear()
        action()
        if calls:
            assert self._event.wait(WAIT), "no callback within the bound"
        time.sleep(QUIET)
        with self._lock:
            got = list(self.calls)
        assert len(got) == calls, got
        return got


@pytest.fixture
def workspace(tmp_path: Path) -> Tree:
    tree = Tree(tmp_path)
    for rel in ("ws/proj", "agent", "home"):
        os.makedirs(tree.path(rel))
    return tree


@pytest.fixture(params=BACKENDS)
def watched(
    request: pytest.FixtureRequest, workspace: Tree
) -> Iterator[tuple[PromptWatcher, Recorder, Tree]]:
    recorder = Recorder()
    watcher = PromptWatcher(
        recorder, agent_dir=workspace.path("agent"), home=workspace.path("home"), backend=request.param
    )
    watcher.add_root(workspace.path("ws/proj"))
    watcher.start()
    time.sleep(0.1)  # let a polling backend take its first snapshot
    yield watcher, recorder, workspace
    watcher.stop()


def test_agents_md_create_edit_delete(watched: tuple[PromptWatcher, Recorder, Tree]) -> None:
    _, recorder, tree = watched
    path = tree.path("ws/proj/AGENTS.md")
    [(cwd, paths)] = recorder.expect(lambda: tree.write("ws/proj/AGENTS.md", "v1"))
    assert cwd == tree.path("ws/proj") and paths == [path]
    assert recorder.expect(lambda: tree.write("ws/proj/AGENTS.md", "v2"))[0][1] == [path]
    assert recorder.expect(lambda: os.remove(path))[0][1] == [path]


def test_a_burst_of_writes_is_one_callback(watched: tuple[PromptWatcher, Recorder, Tree]) -> None:
    _, recorder, tree = watched

    def burst() -> None:  # what an editor's save or a `git checkout` looks like: quick successive writes
        for index in range(5):
            tree.write("ws/CLAUDE.md", f"version {index}")  # an ancestor of the cwd
            tree.write("ws/proj/CLAUDE.MD", f"version {index}")

    [(_, paths)] = recorder.expect(burst)
    assert paths == sorted([tree.path("ws/CLAUDE.md"), tree.path("ws/proj/CLAUDE.MD")])


def test_new_skill_in_new_directories(watched: tuple[PromptWatcher, Recorder, Tree]) -> None:
    _, recorder, tree = watched
    [(_, paths)] = recorder.expect(lambda: tree.skill("ws/proj/.pi/skills/fresh/deeper", "New."))
    assert tree.path("ws/proj/.pi/skills/fresh/deeper/SKILL.md") in paths
    [(_, paths)] = recorder.expect(lambda: tree.skill("ws/proj/.pi/skills/fresh/deeper", "Edited."))
    assert paths == [tree.path("ws/proj/.pi/skills/fresh/deeper/SKILL.md")]


def test_skill_root_deleted_and_recreated(watched: tuple[PromptWatcher, Recorder, Tree]) -> None:
    _, recorder, tree = watched
    recorder.expect(lambda: tree.skill("ws/proj/.pi/skills/old", "Old."))

    def replace_root() -> None:  # same path, new directory: the old native watch is dead
        shutil.rmtree(tree.path("ws/proj/.pi/skills"))
        os.makedirs(tree.path("ws/proj/.pi/skills"))

    assert tree.path("ws/proj/.pi/skills/old/SKILL.md") in recorder.expect(replace_root)[0][1]
    [(_, paths)] = recorder.expect(lambda: tree.skill("ws/proj/.pi/skills/new", "New."))
    assert tree.path("ws/proj/.pi/skills/new/SKILL.md") in paths


def test_agent_dir_and_home_outside_the_workspace(watched: tuple[PromptWatcher, Recorder, Tree]) -> None:
    _, recorder, tree = watched
    assert recorder.expect(lambda: tree.write("agent/AGENTS.md", "global"))[0][1] == [
        tree.path("agent/AGENTS.md")
    ]
    assert recorder.expect(lambda: tree.write("agent/APPEND_SYSTEM.md", "x"))[0][1] == [
        tree.path("agent/APPEND_SYSTEM.md")
    ]
    [(_, paths)] = recorder.expect(lambda: tree.skill("home/.agents/skills/mine", "Home skill."))
    assert tree.path("home/.agents/skills/mine/SKILL.md") in paths


def test_irrelevant_files_do_not_call_back(watched: tuple[PromptWatcher, Recorder, Tree]) -> None:
    _, recorder, tree = watched
    tree.skill("ws/proj/.pi/skills/s", "S.")
    time.sleep(QUIET)

    def noise() -> None:
        tree.write("ws/proj/main.py", "print()")
        tree.write("ws/proj/.pi/skills/s/script.py", "x")
        tree.write("ws/proj/.pi/skills/node_modules/x/SKILL.md", "---\ndescription: x\n---\n")
        tree.write("ws/proj/sub/AGENTS.md", "below the cwd")
        Path(tree.path("ws/proj/.pi/skills/s/SKILL.md")).read_text()

    recorder.expect(noise, calls=0)


def test_settings_entry_adds_a_watched_skill_dir(watched: tuple[PromptWatcher, Recorder, Tree]) -> None:
    _, recorder, tree = watched
    os.makedirs(tree.path("elsewhere"))
    settings = json.dumps({"skills": ["../../../elsewhere"]})  # relative to <cwd>/.pi
    assert recorder.expect(lambda: tree.write("ws/proj/.pi/settings.json", settings))[0][1] == [
        tree.path("ws/proj/.pi/settings.json")
    ]
    [(_, paths)] = recorder.expect(lambda: tree.skill("elsewhere/extra", "Listed in settings."))
    assert tree.path("elsewhere/extra/SKILL.md") in paths


def test_client_notifications_share_the_debounce(watched: tuple[PromptWatcher, Recorder, Tree]) -> None:
    watcher, recorder, tree = watched
    path = tree.path("ws/proj/AGENTS.md")

    def both() -> None:
        tree.write("ws/proj/AGENTS.md", "x")
        watcher.notify_paths([Path(path).as_uri(), path])

    assert recorder.expect(both)[0][1] == [path]
    recorder.expect(lambda: watcher.notify_paths([tree.path("ws/proj/README.md")]), calls=0)


def test_every_root_hears_about_the_agent_dir(watched: tuple[PromptWatcher, Recorder, Tree]) -> None:
    watcher, recorder, tree = watched
    os.makedirs(tree.path("ws/other"))
    watcher.add_root(tree.path("ws/other"))
    time.sleep(0.1)
    calls = recorder.expect(lambda: tree.write("agent/CLAUDE.md", "g"), calls=2)
    assert sorted(cwd for cwd, _ in calls) == [tree.path("ws/other"), tree.path("ws/proj")]
    watcher.remove_root(tree.path("ws/other"))
    recorder.expect(lambda: tree.write("ws/other/AGENTS.md", "x"), calls=0)


def test_callbacks_run_on_the_worker_thread_and_stop_is_final(
    watched: tuple[PromptWatcher, Recorder, Tree],
) -> None:
    watcher, recorder, tree = watched
    recorder.expect(lambda: tree.write("ws/proj/AGENTS.md", "x"))
    assert recorder.threads[0] is not threading.main_thread()
    watcher.stop()
    recorder.expect(lambda: tree.write("ws/proj/AGENTS.md", "y"), calls=0)
    watcher.start()  # a stopped watcher can be started again
    time.sleep(0.1)
    recorder.expect(lambda: tree.write("ws/proj/AGENTS.md", "z"))


@pytest.mark.parametrize("backend", BACKENDS)
async def test_loop_mode_runs_on_the_loop_and_awaits_coroutines(
    workspace: Tree, backend: Literal["watchdog", "poll"]
) -> None:
    loop = asyncio.get_running_loop()
    seen: asyncio.Queue[tuple[str, list[str], bool]] = asyncio.Queue()

    async def on_change(cwd: str, paths: list[str]) -> None:
        await asyncio.sleep(0)
        seen.put_nowait((cwd, paths, asyncio.get_running_loop() is loop))

    watcher = PromptWatcher(
        on_change, agent_dir=workspace.path("agent"), home=workspace.path("home"), backend=backend, loop=loop
    )
    watcher.add_root(workspace.path("ws/proj"))
    watcher.start()
    try:
        await asyncio.sleep(0.1)
        workspace.write("ws/proj/.pi/SYSTEM.md", "custom")
        cwd, paths, on_loop = await asyncio.wait_for(seen.get(), WAIT)
        assert (cwd, paths, on_loop) == (
            workspace.path("ws/proj"),
            [workspace.path("ws/proj/.pi/SYSTEM.md")],
            True,
        )
        await asyncio.sleep(QUIET)
        assert seen.empty()
    finally:
        watcher.stop()


async def test_polling_hears_a_change_made_before_its_first_look(workspace: Tree) -> None:
    """The polling backend gets its plans after its thread started; a file written before the
    first poll (a loaded machine, a slow poll) was taken into that poll's baseline and never
    reported. The plans' baseline is now taken when they are applied."""
    loop = asyncio.get_running_loop()
    seen: asyncio.Queue[list[str]] = asyncio.Queue()

    async def on_change(cwd: str, paths: list[str]) -> None:
        seen.put_nowait(paths)

    watcher = PromptWatcher(
        on_change, agent_dir=workspace.path("agent"), home=workspace.path("home"), backend="poll",
        loop=loop, poll_interval=0.5,
    )  # fmt: skip
    watcher.add_root(workspace.path("ws/proj"))
    watcher.start()
    try:
        workspace.write("ws/proj/.pi/SYSTEM.md", "custom")  # before the first poll, 0.5 s away
        paths = await asyncio.wait_for(seen.get(), WAIT + 1)
        assert paths == [workspace.path("ws/proj/.pi/SYSTEM.md")]
    finally:
        watcher.stop()


def test_many_roots_take_a_bounded_number_of_threads_and_each_is_heard(workspace: Tree) -> None:
    """Each root's flat watches (its cwd, its parents) were a watchdog emitter thread each: a
    thousand session roots were a thousand threads, and past the kernel's 128 inotify instances
    their saves went unheard. Now they share one descriptor and one thread."""
    roots = [workspace.path(f"projects/p{n:03d}") for n in range(200)]
    for root in roots:
        os.makedirs(root)
    recorder = Recorder()
    before = threading.active_count()
    watcher = PromptWatcher(
        recorder, agent_dir=workspace.path("agent"), home=workspace.path("home"), backend="watchdog"
    )
    with watcher:
        watcher.update_roots(roots)
        assert threading.active_count() - before < 10
        got = recorder.expect(lambda: Path(roots[-1], "AGENTS.md").write_text("Rules.\n"))
        assert got == [(roots[-1], [os.path.join(roots[-1], "AGENTS.md")])]


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_burst_in_one_root_re_plans_that_root_only(workspace: Tree, backend: Backend) -> None:
    """After each burst the watcher re-plans what it touched (settings may name new skill
    folders), not every root: a save in one of a thousand roots took half a second of planning."""
    roots = [workspace.path(f"projects/p{n:02d}") for n in range(30)]
    for root in roots:
        os.makedirs(root)
    recorder = Recorder()
    watcher = PromptWatcher(
        recorder, agent_dir=workspace.path("agent"), home=workspace.path("home"), backend=backend
    )
    with watcher:
        watcher.update_roots(roots)
        time.sleep(0.1)  # let a polling backend take its first snapshot
        planned = watcher.plans_made
        recorder.expect(lambda: Path(roots[3], "AGENTS.md").write_text("Rules.\n"))
        assert watcher.plans_made == planned + 1
        # a change every root hears about (the agent dir's AGENTS.md) re-plans them all
        recorder.expect(lambda: Path(workspace.path("agent"), "AGENTS.md").write_text("All.\n"), calls=30)
        assert watcher.plans_made == planned + 1 + 30


def test_a_folder_watched_under_two_paths_is_still_heard_when_one_goes(workspace: Tree) -> None:
    """A root and a symlink to it are one inotify watch: dropping the link's root keeps the other."""
    real = workspace.path("projects/real")
    os.makedirs(real)
    link = workspace.path("projects/z-link")  # added after the real path
    os.symlink(real, link)
    recorder = Recorder()
    watcher = PromptWatcher(
        recorder, agent_dir=workspace.path("agent"), home=workspace.path("home"), backend="watchdog"
    )
    with watcher:
        watcher.update_roots([real, link])
        watcher.remove_root(link)
        got = recorder.expect(lambda: Path(real, "AGENTS.md").write_text("Rules.\n"))
        assert got == [(real, [os.path.join(real, "AGENTS.md")])]
