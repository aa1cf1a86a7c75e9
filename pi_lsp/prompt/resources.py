"""The files around the prompt that pi's resource loader reads: SYSTEM.md, APPEND_SYSTEM.md, settings.

Precedence follows pi 0.73.1: a request-given custom or append prompt replaces discovery
entirely; otherwise ``<cwd>/.pi/SYSTEM.md`` beats ``<agentDir>/SYSTEM.md`` (same for
APPEND_SYSTEM.md, first hit only). Settings come from ``<agentDir>/settings.json`` (global) and
``<cwd>/.pi/settings.json`` (project); only their ``skills`` arrays matter here.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from pi_lsp.safe_io import read_error_message, read_text
from pi_lsp.settings_file import (
    CONFIG_DIR_NAME,
    SETTINGS_FILE,
    global_settings_path,
    project_settings_path,
    read_settings_file,
)

__all__ = [
    "PiSettings",
    "PromptFile",
    "PromptSources",
    "discover_append_prompt_file",
    "discover_system_prompt_file",
    "load_settings",
    "prompt_resource_candidates",
    "resolve_prompt_sources",
    "settings_entries",
]

SYSTEM_FILE = "SYSTEM.md"
APPEND_FILE = "APPEND_SYSTEM.md"


@dataclass(frozen=True)
class PromptFile:
    """A custom or append prompt; ``path`` is None when the text came with the request."""

    text: str
    path: str | None = None


@dataclass
class PromptSources:
    """What replaces and what is appended to the default prompt, plus read problems."""

    system: PromptFile | None = None
    append: list[PromptFile] = field(default_factory=list)
    problems: list[tuple[str, str]] = field(default_factory=list)

    @property
    def custom_prompt(self) -> str | None:
        """The replacement prompt text (an empty one means "use the default", as in pi)."""
        return self.system.text if self.system is not None else None

    @property
    def append_prompt(self) -> str | None:
        """The appended text: items joined by a blank line, None when there are none."""
        return "\n\n".join(item.text for item in self.append) if self.append else None


def _project_file(cwd: str, name: str) -> str:
    return os.path.normpath(os.path.join(cwd, CONFIG_DIR_NAME, name))


def _discover(cwd: str, agent_dir: str, name: str) -> str | None:
    for path in (_project_file(cwd, name), os.path.normpath(os.path.join(agent_dir, name))):
        if os.path.exists(path):
            return path
    return None


def discover_system_prompt_file(cwd: str, agent_dir: str) -> str | None:
    """``<cwd>/.pi/SYSTEM.md`` if it exists, else ``<agentDir>/SYSTEM.md`` if it exists."""
    return _discover(cwd, agent_dir, SYSTEM_FILE)


def discover_append_prompt_file(cwd: str, agent_dir: str) -> str | None:
    """``<cwd>/.pi/APPEND_SYSTEM.md`` if it exists, else the agent dir's."""
    return _discover(cwd, agent_dir, APPEND_FILE)


def _read_prompt_file(path: str, problems: list[tuple[str, str]]) -> PromptFile:
    """pi's file-or-text rule for a discovered file: an unreadable file yields its own path as text."""
    try:
        return PromptFile(read_text(path), path)
    except OSError as error:
        problems.append((path, read_error_message(error, path)))
        return PromptFile(path, path)


def resolve_prompt_sources(
    cwd: str,
    agent_dir: str,
    *,
    custom_prompt: str | None = None,
    append_prompt: str | None = None,
) -> PromptSources:
    """Resolve the custom and append prompts; request values are text and win over files.

    An empty request ``custom_prompt`` means "no custom prompt" and also suppresses SYSTEM.md
    discovery, exactly as an empty ``--system-prompt`` does in pi.
    """
    sources = PromptSources()
    if custom_prompt is not None:
        sources.system = PromptFile(custom_prompt) if custom_prompt else None
    else:
        path = discover_system_prompt_file(cwd, agent_dir)
        if path is not None:
            sources.system = _read_prompt_file(path, sources.problems)
    if append_prompt is not None:
        sources.append = [PromptFile(append_prompt)] if append_prompt else []
    else:
        path = discover_append_prompt_file(cwd, agent_dir)
        if path is not None:
            sources.append = [_read_prompt_file(path, sources.problems)]
    return sources


# ---------------------------------------------------------------------------------------------
# settings.json


@dataclass
class PiSettings:
    """pi's two settings files, parsed; a broken file reads as ``{}`` with a recorded problem."""

    global_path: str
    project_path: str
    global_settings: dict[str, Any] = field(default_factory=dict)
    project_settings: dict[str, Any] = field(default_factory=dict)
    problems: list[tuple[str, str]] = field(default_factory=list)


def _migrate(settings: dict[str, Any]) -> dict[str, Any]:
    """pi's legacy ``skills: {customDirectories: [...]}`` object becomes the array form."""
    skills = settings.get("skills")
    if isinstance(skills, dict):
        directories = skills.get("customDirectories")
        if isinstance(directories, list) and directories:
            settings["skills"] = directories
        else:
            del settings["skills"]
    return settings


def _load_settings_file(path: str, problems: list[tuple[str, str]]) -> dict[str, Any]:
    data, problem = read_settings_file(path)
    if problem is not None:
        problems.append((path, problem))
    return _migrate(data)


def load_settings(cwd: str, agent_dir: str) -> PiSettings:
    """Read ``<agentDir>/settings.json`` and ``<cwd>/.pi/settings.json``."""
    settings = PiSettings(
        global_path=global_settings_path(agent_dir),
        project_path=project_settings_path(cwd),
    )
    settings.global_settings = _load_settings_file(settings.global_path, settings.problems)
    settings.project_settings = _load_settings_file(settings.project_path, settings.problems)
    return settings


def settings_entries(settings: dict[str, Any], key: str) -> list[str]:
    """A settings array of path/pattern strings (other values are ignored)."""
    value = settings.get(key)
    if not isinstance(value, list):
        return []
    return [item for item in value if isinstance(item, str)]


def prompt_resource_candidates(cwd: str, agent_dir: str) -> list[str]:
    """Every path whose appearance or change can alter the custom/append prompt or settings."""
    names = (SYSTEM_FILE, APPEND_FILE, SETTINGS_FILE)
    project = [_project_file(cwd, name) for name in names]
    agent = [os.path.normpath(os.path.join(agent_dir, name)) for name in names]
    return [*project, *agent]
