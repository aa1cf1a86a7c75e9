"""Effective settings for one client: pi's settings files, then the editor's ``pi`` settings.

Layers, later wins, nested objects merged key by key (arrays and scalars replace):
``<agentDir>/settings.json`` → ``<cwd>/.pi/settings.json`` → ``initializationOptions.pi`` →
``workspace/didChangeConfiguration`` ``settings.pi``. The workspace's file is a cloned
repository's to write, so only the keys :mod:`~pi_lsp.service.settings_trust` allows are taken
from it (``approval`` only stricter, ``tools`` only narrower). Values of the wrong type are
ignored (the default applies) and reported in the log, so one typo never breaks the server.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pi_lsp.agent.approval_modes import APPROVAL_MODES, DEFAULT_APPROVAL, stricter
from pi_lsp.agent.queue import QUEUE_MODES
from pi_lsp.agent_dir import SESSION_DIR_ENV, agent_dir, expand_home
from pi_lsp.paths import usable_path
from pi_lsp.protocol.enums import SUMMARIZER_SETTING, THINKING_LEVELS, TOKENIZER
from pi_lsp.service.settings_trust import (
    IgnoredSetting,
    ignored_workspace_settings,
    narrowed_tools,
    workspace_layer,
)
from pi_lsp.session.paths import default_session_dir
from pi_lsp.settings_file import global_settings_path, project_settings_path, read_settings_file

if TYPE_CHECKING:
    from pi_lsp.agent.runner import RetrySettings
    from pi_lsp.checkpoints.snapshot import Limits

log = logging.getLogger(__name__)

DEFAULT_CONTEXT_WINDOW = 200_000
DEFAULT_RESERVE_TOKENS = 16_384
DEFAULT_KEEP_RECENT_TOKENS = 20_000
SUMMARIZERS = SUMMARIZER_SETTING.values
TOKENIZERS = TOKENIZER.values
SETTINGS_READ_TIMEOUT = 5.0
DEFAULT_THINKING_LEVEL = "medium"
DEFAULT_TOOLS = ("read", "bash", "edit", "write")


@dataclass(frozen=True)
class CheckpointSettings:
    enabled: bool
    limits: Limits


def deep_merge(base: Mapping[str, Any], override: Mapping[str, Any]) -> dict[str, Any]:
    """pi's settings merge: objects merge recursively, anything else in ``override`` wins."""
    merged = dict(base)
    for key, value in override.items():
        current = merged.get(key)
        if isinstance(value, Mapping) and isinstance(current, Mapping):
            merged[key] = deep_merge(current, value)
        else:
            merged[key] = value
    return merged


def _read_settings(path: str) -> dict[str, Any]:
    data, problem = read_settings_file(path)
    if problem is not None:
        log.warning("ignoring settings file %s: %s", path, problem)
    return data


@dataclass(frozen=True, slots=True)
class CompactionConfig:
    enabled: bool
    reserve_tokens: int
    keep_recent_tokens: int
    model: str | None


def read_settings_files(cwd: str | None) -> tuple[dict[str, Any], dict[str, Any]]:
    """``<agentDir>/settings.json`` and ``<cwd>/.pi/settings.json`` (later merged over the first)."""
    agent = _read_settings(global_settings_path(str(agent_dir())))
    project = _read_settings(project_settings_path(cwd)) if cwd else {}
    return agent, project


class Settings:
    """The merged settings of one client, re-read when the client's configuration changes.

    ``Settings(cwd)`` reads the files at once (for the CLI); the server makes ``Settings(load=False)``
    and reads them in a worker with :meth:`reload_files_async`, never on its event loop.
    """

    def __init__(self, cwd: str | None = None, *, load: bool = True) -> None:
        self.cwd = cwd
        self._files: dict[str, Any] = {}
        self._agent_file: dict[str, Any] = {}
        self._project_file: dict[str, Any] = {}
        self._init: dict[str, Any] = {}
        self._client: dict[str, Any] = {}
        self._merged: dict[str, Any] = {}
        self._trusted: dict[str, Any] = {}
        self.on_change: Callable[[], None] | None = None
        """Called after any layer changed (the server republishes the settings file's diagnostics)."""
        if load:
            self.reload_files()

    # -------------------------------------------------------------- layers

    def reload_files(self) -> None:
        """Re-read pi's global and project settings files (blocking: not on the event loop)."""
        self._use_files(read_settings_files(self.cwd))

    async def reload_files_async(self, timeout: float = SETTINGS_READ_TIMEOUT) -> None:
        """Re-read the settings files in a worker thread; after ``timeout`` seconds (a file on a
        hung mount) the settings stay as they were and the read is abandoned with a warning."""
        cwd = self.cwd
        loop = asyncio.get_running_loop()
        try:
            files = await asyncio.wait_for(loop.run_in_executor(None, read_settings_files, cwd), timeout)
        except TimeoutError:
            log.warning("reading the settings files for %s took over %.0f s; not applied", cwd, timeout)
            return
        if self.cwd == cwd:
            self._use_files(files)

    def _use_files(self, layers: tuple[dict[str, Any], dict[str, Any]]) -> None:
        self._agent_file, self._project_file = layers  # kept apart: see settings_trust
        self._files = deep_merge(self._agent_file, workspace_layer(self._project_file))
        self._remerge()

    async def set_cwd(self, cwd: str | None) -> None:
        """The workspace root changed (``initialize``): read its settings off the event loop."""
        self.cwd = cwd
        await self.reload_files_async()

    def set_initialization_options(self, options: Any) -> None:
        """``initializationOptions``: only its ``pi`` object is ours."""
        self._init = _pi_section(options)
        self._remerge()

    def set_client_configuration(self, settings: Any) -> bool:
        """``didChangeConfiguration`` settings; returns False when they carry no ``pi`` object."""
        if not isinstance(settings, Mapping) or not isinstance(settings.get("pi"), Mapping):
            return False
        self._client = dict(settings["pi"])
        self._remerge()
        return True

    def _remerge(self) -> None:
        self._merged = deep_merge(deep_merge(self._files, self._init), self._client)
        self._trusted = deep_merge(deep_merge(self._agent_file, self._init), self._client)
        if self.on_change is not None:
            self.on_change()

    def as_dict(self) -> dict[str, Any]:
        return dict(self._merged)

    # -------------------------------------------------------------- typed values

    def _get(
        self, key: str, kind: type | tuple[type, ...], default: Any, source: Mapping[str, Any] | None = None
    ) -> Any:
        data = self._merged if source is None else source
        value = data.get(key, default)
        if value is default:
            return default
        if isinstance(value, bool) and bool not in (kind if isinstance(kind, tuple) else (kind,)):
            value = None
        if not isinstance(value, kind):
            log.warning("setting %s has the wrong type (%s); using the default", key, type(value).__name__)
            return default
        return value

    @property
    def session_dir(self) -> str | None:
        value = self._get("sessionDir", str, None)
        if value and not usable_path(value):
            log.warning("setting sessionDir is not a usable path (NUL or lone surrogate); using the default")
            return None
        return value or None

    @property
    def context_window_override(self) -> int | None:
        """``contextWindow`` when the user set it (a positive integer), else None: the window is then
        the session's model's own, as in pi (see :func:`~pi_lsp.service.model_choice.context_window`)."""
        value = self._get("contextWindow", int, None)
        return value if value is not None and value > 0 else None

    @property
    def model(self) -> str | None:
        value = self._get("model", str, None)
        return value or None

    @property
    def summarizer(self) -> str:
        value = self._get("summarizer", str, "auto")
        return value if value in SUMMARIZERS else "auto"

    @property
    def tokenizer(self) -> str:
        value = self._get("tokenizer", str, "tiktoken")
        return value if value in TOKENIZERS else "tiktoken"

    @property
    def compaction(self) -> CompactionConfig:
        section = self._merged.get("compaction")
        data: Mapping[str, Any] = section if isinstance(section, Mapping) else {}
        model = self._get("model", str, None, data)
        return CompactionConfig(
            enabled=self._get("enabled", bool, True, data),
            reserve_tokens=self._get("reserveTokens", int, DEFAULT_RESERVE_TOKENS, data),
            keep_recent_tokens=self._get("keepRecentTokens", int, DEFAULT_KEEP_RECENT_TOKENS, data),
            model=model or None,
        )

    # -------------------------------------------------------------- agent runs (contract v2)

    @property
    def thinking_level(self) -> str:
        value = self._get("thinkingLevel", str, DEFAULT_THINKING_LEVEL)
        return value if value in THINKING_LEVELS else DEFAULT_THINKING_LEVEL

    @property
    def tools(self) -> list[str]:
        """The enabled tools; a workspace's ``tools`` list may narrow the user's, never add to them."""
        return narrowed_tools(self._user_tools, self._project_file.get("tools"))

    @property
    def _user_tools(self) -> list[str]:
        value = self._get("tools", list, None, self._trusted)
        if value is None or not all(isinstance(name, str) for name in value):
            return list(DEFAULT_TOOLS)
        return list(value)

    @property
    def approval(self) -> str:
        """The approval mode; a workspace's ``.pi/settings.json`` may tighten it, never loosen it."""
        project = self._project_file.get("approval")
        return stricter(self._user_approval, project if isinstance(project, str) else None)

    @property
    def _user_approval(self) -> str:
        value = self._get("approval", str, DEFAULT_APPROVAL, self._trusted)
        return value if value in APPROVAL_MODES else DEFAULT_APPROVAL

    @property
    def shell_path(self) -> str | None:
        """pi's ``shellPath`` (the user's layers only)."""
        return self._get("shellPath", str, None) or None

    @property
    def shell_command_prefix(self) -> str | None:
        """pi's ``shellCommandPrefix`` (the user's layers only)."""
        return self._get("shellCommandPrefix", str, None) or None

    # -------------------------------------------------------------- the workspace's file

    @property
    def workspace_settings_path(self) -> str | None:
        """``<cwd>/.pi/settings.json``, the one layer a cloned repository writes."""
        return project_settings_path(self.cwd) if self.cwd else None

    def ignored_workspace_settings(self) -> list[IgnoredSetting]:
        """The workspace's values that are not applied, each with why and where to set it instead."""
        where = f"{global_settings_path(str(agent_dir()))} or in your editor's pi settings"
        return ignored_workspace_settings(
            self._project_file, user_tools=self._user_tools, user_approval=self._user_approval, where=where
        )

    @property
    def retry(self) -> RetrySettings:
        section = self._merged.get("retry")
        data: Mapping[str, Any] = section if isinstance(section, Mapping) else {}
        enabled = self._get("enabled", bool, True, data)
        retries = self._get("maxRetries", int, 3, data)
        delay = self._get("baseDelayMs", (int, float), 2000, data)
        from pi_lsp.agent.runner import RetrySettings  # the agent loads with the first run, not at start

        return RetrySettings(enabled, max(0, retries), max(0, int(delay)))

    @property
    def thinking_budgets(self) -> dict[str, int]:
        """pi's ``thinkingBudgets``: per-level token budgets overriding the defaults (bad values skipped)."""
        section = self._get("thinkingBudgets", Mapping, {})
        return {
            level: value
            for level, value in section.items()
            if level in THINKING_LEVELS and type(value) is int and value > 0
        }

    @property
    def block_images(self) -> bool:
        """pi's ``images.blockImages``: images are replaced by a sentence before they reach the model."""
        section = self._merged.get("images")
        data: Mapping[str, Any] = section if isinstance(section, Mapping) else {}
        return bool(self._get("blockImages", bool, False, data))

    @property
    def queue_modes(self) -> tuple[str, str]:
        """``steeringMode`` and ``followUpMode`` (pi's default: one-at-a-time)."""
        steering = self._get("steeringMode", str, QUEUE_MODES[0])
        follow_up = self._get("followUpMode", str, QUEUE_MODES[0])
        return (
            steering if steering in QUEUE_MODES else QUEUE_MODES[0],
            follow_up if follow_up in QUEUE_MODES else QUEUE_MODES[0],
        )

    @property
    def checkpoints(self) -> CheckpointSettings:
        """``checkpoints.{enabled, maxFileBytes, maxFiles}`` (contract v3)."""
        # imported here: the snapshot module (and the git store) are not needed to open sessions
        from pi_lsp.checkpoints.snapshot import DEFAULT_MAX_FILE_BYTES, DEFAULT_MAX_FILES, Limits

        section = self._merged.get("checkpoints")
        data: Mapping[str, Any] = section if isinstance(section, Mapping) else {}
        max_bytes = self._get("maxFileBytes", int, DEFAULT_MAX_FILE_BYTES, data)
        max_files = self._get("maxFiles", int, DEFAULT_MAX_FILES, data)
        return CheckpointSettings(
            enabled=self._get("enabled", bool, True, data),
            limits=Limits(max(0, max_bytes), max(0, max_files)),
        )

    # -------------------------------------------------------------- session directory

    def resolve_session_dir(self, cwd: str, requested: str | None = None) -> Path:
        """Where new sessions of ``cwd`` go.

        Precedence: the request's ``sessionDir``, ``$PI_CODING_AGENT_SESSION_DIR``, the
        ``sessionDir`` setting, then pi's default ``<agentDir>/sessions/<encoded cwd>``.
        """
        for value in (requested, os.environ.get(SESSION_DIR_ENV), self.session_dir):
            if value:
                path = Path(expand_home(value))
                if not path.is_absolute():
                    path = Path(cwd) / path
                return path
        return default_session_dir(cwd)


def _pi_section(options: Any) -> dict[str, Any]:
    if isinstance(options, Mapping) and isinstance(options.get("pi"), Mapping):
        return dict(options["pi"])
    return {}
