"""The system prompt of a workspace for any caller: a run, the server's requests, the CLI, a script.

``workspace_prompt`` is the one place that turns (cwd, tools, tokenizer name) into pi's prompt:
``pi/getSystemPrompt``, an agent run's system prompt (``PromptService.system_prompt_text``) and
``pi-lsp prompt`` all call it, so what a script gets is what a run sends::

    from pi_lsp.prompt.workspace import broken_sources, workspace_prompt

    result = workspace_prompt("/path/to/repo", tools=["read", "bash", "edit", "write"])
    print(result.text)                      # the prompt, byte for byte
    print(result.to_json()["sources"])      # [{kind, path, tokens}, ...]
    broken_sources(result.skills, result.skill_diagnostics, result.problems)  # [] when all is well

Settings (``tools``, ``tokenizer``) are the caller's to choose: a run takes them from the user's
settings (``service/settings.py``), as ``pi-lsp prompt`` does when ``--tools`` is not given.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from pi_lsp.agent_dir import agent_dir as default_agent_dir
from pi_lsp.compaction.tokenizers import shared_tokenizer
from pi_lsp.prompt.assemble import DiagnosticJson, PromptResult, assemble_system_prompt
from pi_lsp.prompt.skill_discovery import discover_skills
from pi_lsp.prompt.skills import Skill, SkillDiagnostic, SkillLoadResult

__all__ = ["broken_sources", "workspace_prompt", "workspace_skills"]


def workspace_prompt(
    cwd: str,
    *,
    tools: Sequence[str] | None = None,
    tokenizer: str = "estimate",
    custom_prompt: str | None = None,
    append_prompt: str | None = None,
    agent_dir: str | os.PathLike[str] | None = None,
) -> PromptResult:
    """pi's system prompt for ``cwd`` with these ``tools`` (pi's default set when None), counted
    with the named tokenizer (``estimate``: pi's chars/4, or ``tiktoken``).

    Reads the files as they are now (blocking: call it off an event loop); the agent dir is pi's
    (``$PI_CODING_AGENT_DIR``, else ``~/.pi/agent``) unless given.
    """
    return assemble_system_prompt(
        cwd,
        agent_dir=agent_dir,
        tools=tools,
        custom_prompt=custom_prompt,
        append_prompt=append_prompt,
        tokenizer=shared_tokenizer(tokenizer),
    )


def workspace_skills(cwd: str, *, agent_dir: str | os.PathLike[str] | None = None) -> SkillLoadResult:
    """Every skill pi would load for ``cwd`` with its diagnostics (``assemble.skill_list_json``
    gives the ``pi/listSkills`` shape)."""
    resolved = os.fspath(agent_dir) if agent_dir is not None else str(default_agent_dir())
    return discover_skills(os.path.abspath(cwd), resolved)


def broken_sources(
    skills: Sequence[Skill], diagnostics: Sequence[SkillDiagnostic], problems: Sequence[DiagnosticJson] = ()
) -> list[str]:
    """The sources that are broken: a prompt file that could not be read or parsed (``problems``),
    an error (a skill path that does not exist), and a skill file pi leaves out for what is wrong
    in it (no description, bad frontmatter). Warnings about loaded skills, collisions and walk
    limits are not breakage."""
    loaded = {skill.file_path for skill in skills}
    broken = [problem["path"] for problem in problems]
    for diagnostic in diagnostics:
        path = diagnostic.path or ""
        if diagnostic.type == "error" or (
            diagnostic.collision is None and path.endswith(".md") and path not in loaded
        ):
            broken.append(path)
    return list(dict.fromkeys(broken))
