"""Which lane a test runs in: its marks, judged from what it starts (see ``pytest_collection_modifyitems``).

``make test-fast`` runs only the tests that start none of these (``-m "not (slow or server or agent
or oracle or editor)"``); ``make test`` runs everything. A test is marked

* ``agent`` (and ``server``): it runs the agent through a real server against the fake model
  (its module uses ``tests/agent/chat_support.py`` or ``approval_support.py``);
* ``server``: it starts a real pi-lsp process (the ``client`` fixture, ``RpcClient``, the server
  command ``SERVER``, ``run_cli``, ``start_raw``, or a ``tests/server/*_support.py`` module);
* ``oracle``: it runs pi itself (the ``pi_oracle`` fixture; tests that start pi otherwise carry
  ``@pytest.mark.oracle`` themselves);
* ``editor``: it drives a real editor (``tests/nvim/``, headless Neovim).

The rule looks at what a test module uses, so a new test is put in its lane without a mark of
its own; mark it by hand (``pytestmark = pytest.mark.server``) where it starts a process otherwise.
"""

from __future__ import annotations

from pathlib import Path

import pytest

LANES = ("slow", "server", "agent", "oracle", "editor")
"""Every mark that keeps a test out of ``make test-fast``."""

AGENT_MODULES = frozenset({"tests.agent.chat_support", "tests.agent.approval_support"})
"""A test module using anything of these runs the agent through a server."""
SERVER_MODULES = frozenset(
    {"tests.server.network_support", "tests.server.compaction_support", "tests.server.prompt_support"}
)
SERVER_NAMES = frozenset(
    {"RpcClient", "SERVER", "server_command", "start_raw", "run_cli", "start_network_server", "run_server"}
)
SERVER_FIXTURES = frozenset({"client", "lsp_client"})
EDITOR_DIR = Path(__file__).resolve().parent / "nvim"


def lanes_of(item: pytest.Item) -> set[str]:
    """The lane marks ``item`` gets from what it uses."""
    module = getattr(item, "module", None)
    names = dict(vars(module)) if module is not None else {}
    sources = {getattr(value, "__module__", None) for value in names.values()}
    fixtures = set(getattr(item, "fixturenames", ()))
    lanes: set[str] = set()
    if sources & AGENT_MODULES:
        lanes |= {"agent", "server"}
    if sources & SERVER_MODULES or names.keys() & SERVER_NAMES or fixtures & SERVER_FIXTURES:
        lanes.add("server")
    if "pi_oracle" in fixtures:
        lanes.add("oracle")
    if EDITOR_DIR in item.path.parents and "nvim" in item.path.name:
        lanes.add("editor")
    return lanes


def mark_lanes(items: list[pytest.Item]) -> None:
    for item in items:
        present = {mark.name for mark in item.iter_markers()}
        for lane in sorted(lanes_of(item) - present):
            item.add_marker(getattr(pytest.mark, lane))
