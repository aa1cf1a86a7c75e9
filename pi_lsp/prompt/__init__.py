"""The system prompt pi would send for a workspace, and everything it is built from.

Public entry points for the server:

* :func:`assemble_system_prompt` / :func:`list_skills` - ``pi/getSystemPrompt`` and
  ``pi/listSkills`` results (``PromptResult.to_json()`` is the wire shape);
* :class:`PromptFileIndex` - per-file LSP diagnostics and hover token counts;
* :class:`PromptWatcher` - debounced change notifications for all prompt inputs.

Nothing here imports pygls; the package is pure domain code.
"""

from pi_lsp.prompt.assemble import (
    CharEstimateTokenizer,
    PromptResult,
    PromptSource,
    TokenCounter,
    assemble_system_prompt,
    list_skills,
)
from pi_lsp.prompt.context_files import ContextFile, load_project_context_files
from pi_lsp.prompt.diagnostics import LARGE_CONTEXT_FILE_TOKENS, LspDiagnostic, PromptFileIndex
from pi_lsp.prompt.frontmatter import FrontmatterError, parse_frontmatter, strip_frontmatter
from pi_lsp.prompt.skill_discovery import discover_skills
from pi_lsp.prompt.skills import (
    Skill,
    SkillDiagnostic,
    SourceInfo,
    format_skills_for_prompt,
    load_skills,
    load_skills_from_dir,
)
from pi_lsp.prompt.system_prompt import PiDocsPaths, SystemPromptOptions, build_system_prompt
from pi_lsp.prompt.watch import PromptWatcher

__all__ = [
    "LARGE_CONTEXT_FILE_TOKENS",
    "CharEstimateTokenizer",
    "ContextFile",
    "FrontmatterError",
    "LspDiagnostic",
    "PiDocsPaths",
    "PromptFileIndex",
    "PromptResult",
    "PromptSource",
    "PromptWatcher",
    "Skill",
    "SkillDiagnostic",
    "SourceInfo",
    "SystemPromptOptions",
    "TokenCounter",
    "assemble_system_prompt",
    "build_system_prompt",
    "discover_skills",
    "format_skills_for_prompt",
    "list_skills",
    "load_project_context_files",
    "load_skills",
    "load_skills_from_dir",
    "parse_frontmatter",
    "strip_frontmatter",
]
